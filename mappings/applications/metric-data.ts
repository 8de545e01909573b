import { applicationMetricData } from '../common/application-metric-data.ts';

/** The application's metric data route; the host, instance and mobile routes derive from it (mappings/common/application-metric-data.ts). */
export default applicationMetricData;
