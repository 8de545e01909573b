import { applicationMetricNames } from '../common/application-metric-names.ts';

/** The application's metric names route; the host, instance and mobile routes derive from it (mappings/common/application-metric-names.ts). */
export default applicationMetricNames;
