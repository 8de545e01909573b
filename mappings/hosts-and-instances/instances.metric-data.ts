import { defineMetricDataMapping } from '../../src/mapping-api.ts';
import { applicationMetricData } from '../common/application-metric-data.ts';
import { appInstance } from './app-targets.ts';
import { acceptedFormulasOf, familyOf } from '../common/metric-values.ts';
import { METRIC_DATA_KEYS } from '../common/metric-v2-keys.ts';

/**
 * GET and POST /v2/applications/{id}/instances/{instance_id}/metrics/data.{json,xml}: the
 * application route's rules, scoped to one agent instance: `appId = N AND realAgentId IN (<id>, '<id>')`.
 */
export default defineMetricDataMapping({
  ...applicationMetricData,
  id: 'application-instances.metric-data',
  route: '/v2/applications/{id}/instances/{instance_id}/metrics/data.{format}',
  v2Keys: METRIC_DATA_KEYS,
  operation: 'ApplicationTopologyMetricData',
  summary: 'Metric timeslice data of one instance: one NRQL query (WHERE appId AND realAgentId, FACET metricTimesliceName) plus the name check and the app with its instances, in one request',
  target: { ...applicationMetricData.target, within: appInstance },
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  knownGaps: [
    ...applicationMetricData.knownGaps,
    { description: 'Only current instances (reporting in the last 10 minutes, every page of applicationInstancesV2) are found; v2 also answered for instances that had stopped reporting.' },
    { description: 'Later pages of applicationInstancesV2 are read once per app and kept 30 seconds per caller and account; past 20 pages or 10,000 instances the route answers 503 naming the bound. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.' },
  ],
  assumptions: [
    ...applicationMetricData.assumptions.filter((text) => !text.startsWith('An unknown id')),
    "The v2 instance id is the agent instance id (applicationInstancesV2 details.id), and timeslices carry it as realAgentId (rest-v2.md §7 item 1, UNCONFIRMED; probes: instance-id-is-real-agent-id, v2-instance-ids-are-agent-ids). Its stored type is undocumented (New Relic's migration page quotes it, `realAgentId = '$AGENT_ID'`; public nr1 nerdpack code, khpeet/nr1-mobile-lite, nerdlets/home/overview.js, does not) and NRQL compares by type, so the scope is `realAgentId IN (<id>, '<id>')`, which matches either.",
    'An unknown, foreign or malformed app id answers 404 "No Application found with the given ID"; an unknown or malformed instance id of a known app, "No application instance found with the given ID" (a malformed one still probes the app, to choose between them).',
  ],
});
