import { defineMetricDataMapping } from '../../src/mapping-api.ts';
import { applicationMetricData } from '../common/application-metric-data.ts';
import { appHost } from './app-targets.ts';
import { acceptedFormulasOf, familyOf } from '../common/metric-values.ts';
import { METRIC_DATA_KEYS } from '../common/metric-v2-keys.ts';

/**
 * GET and POST /v2/applications/{id}/hosts/{host_id}/metrics/data.{json,xml}: the application
 * route's rules (docs/metric-data-rules.md), scoped to one host: `appId = N AND host = '<name>'`.
 */
export default defineMetricDataMapping({
  ...applicationMetricData,
  id: 'application-hosts.metric-data',
  route: '/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}',
  v2Keys: METRIC_DATA_KEYS,
  operation: 'ApplicationTopologyMetricData',
  summary:
    'Metric timeslice data of one host: one NRQL query (WHERE appId AND host, FACET metricTimesliceName) plus the name check and the app with its instances, in one request; a cold host id costs one more (the host directory)',
  target: { ...applicationMetricData.target, within: appHost },
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  knownGaps: [
    ...applicationMetricData.knownGaps,
    { description: "Host ids are syntheticHostId(app id, host name) (rest-v2.md §6), not v2's own host ids." },
    { description: 'Only current hosts (instances reporting in the last 10 minutes, as listed by applicationInstancesV2, every page) are found; v2 also answered for hosts that had stopped reporting.' },
    { description: 'Later pages of applicationInstancesV2 are read once per app and kept 30 seconds per caller and account; past 20 pages or 10,000 instances the route answers 503 naming the bound. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.' },
    { description: 'The host directory (id -> name) is kept 60 seconds per caller, account and app; an unknown id is re-checked at most every 5 seconds.' },
  ],
  assumptions: [
    ...applicationMetricData.assumptions.filter((text) => !text.startsWith('An unknown id')),
    "Rows of a host are the app's rows with NRQL `host` equal to the host name (the attribute agents report; routes-next.md §1).",
    'An unknown, foreign or malformed app id answers 404 "No Application found with the given ID"; an unknown or malformed host id of a known app, "No application host found with the given ID" (the app is checked first, as v2 did).',
    'Cost: one upstream request with a warm host directory, two with a cold one.',
  ],
});
