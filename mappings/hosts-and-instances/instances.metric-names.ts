import { defineMetricNamesMapping } from '../../src/mapping-api.ts';
import { applicationMetricNames } from '../common/application-metric-names.ts';
import { appInstance } from './app-targets.ts';
import { acceptedFormulasOf, familyOf } from '../common/metric-values.ts';
import { METRIC_NAMES_KEYS } from '../common/metric-v2-keys.ts';

/** GET /v2/applications/{id}/instances/{instance_id}/metrics.{json,xml}: the names one instance reported. */
export default defineMetricNamesMapping({
  ...applicationMetricNames,
  id: 'application-instances.metric-names',
  route: '/v2/applications/{id}/instances/{instance_id}/metrics.{format}',
  v2Keys: METRIC_NAMES_KEYS,
  operation: 'ApplicationTopologyMetricNames',
  summary: 'List metric names of one instance: NRQL uniques(metricTimesliceName) WHERE appId AND realAgentId over a look-back window, filtered, sorted and paged locally',
  target: { ...applicationMetricNames.target, within: appInstance },
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  knownGaps: [
    ...applicationMetricNames.knownGaps,
    { description: 'Only current instances (reporting in the last 10 minutes, every page of applicationInstancesV2) are found.' },
    { description: 'Later pages of applicationInstancesV2 are read once per app and kept 30 seconds per caller and account; past 20 pages or 10,000 instances the route answers 503 naming the bound. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.' },
  ],
  assumptions: [
    ...applicationMetricNames.assumptions.filter((text) => !text.startsWith('An unknown id')),
    "Timeslices carry the v2 instance id as realAgentId (UNCONFIRMED; probe: instance-id-is-real-agent-id), of undocumented type: the scope is `realAgentId IN (<id>, '<id>')`, which matches a number or a string.",
    'An unknown, foreign or malformed app id answers 404 "No Application found with the given ID"; an unknown or malformed instance id of a known app, "No application instance found with the given ID".',
  ],
});
