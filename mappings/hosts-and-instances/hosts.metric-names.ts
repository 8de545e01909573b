import { defineMetricNamesMapping } from '../../src/mapping-api.ts';
import { applicationMetricNames } from '../common/application-metric-names.ts';
import { appHost } from './app-targets.ts';
import { acceptedFormulasOf, familyOf } from '../common/metric-values.ts';
import { METRIC_NAMES_KEYS } from '../common/metric-v2-keys.ts';

/** GET /v2/applications/{id}/hosts/{host_id}/metrics.{json,xml}: the names one host reported. */
export default defineMetricNamesMapping({
  ...applicationMetricNames,
  id: 'application-hosts.metric-names',
  route: '/v2/applications/{id}/hosts/{host_id}/metrics.{format}',
  v2Keys: METRIC_NAMES_KEYS,
  operation: 'ApplicationTopologyMetricNames',
  summary: 'List metric names of one host: NRQL uniques(metricTimesliceName) WHERE appId AND host over a look-back window, filtered, sorted and paged locally',
  target: { ...applicationMetricNames.target, within: appHost },
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  knownGaps: [
    ...applicationMetricNames.knownGaps,
    { description: "Host ids are syntheticHostId(app id, host name) (rest-v2.md §6), not v2's own host ids." },
    { description: 'Only current hosts (instances reporting in the last 10 minutes, every page of applicationInstancesV2) are found.' },
    { description: 'Later pages of applicationInstancesV2 are read once per app and kept 30 seconds per caller and account; past 20 pages or 10,000 instances the route answers 503 naming the bound. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.' },
    { description: 'The host directory (id -> name) is kept 60 seconds per caller, account and app; an unknown id is re-checked at most every 5 seconds.' },
  ],
  assumptions: [
    ...applicationMetricNames.assumptions.filter((text) => !text.startsWith('An unknown id')),
    'An unknown, foreign or malformed app id answers 404 "No Application found with the given ID"; an unknown or malformed host id of a known app, "No application host found with the given ID".',
    'Cost: one upstream request with a warm host directory, two with a cold one; the listing is then cached 60 seconds, as for applications.',
  ],
});
