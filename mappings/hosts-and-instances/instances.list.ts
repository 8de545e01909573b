import { defineReadPlanMapping, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { INSTANCE_TOP_LINKS, TOPOLOGY_ASSUMPTIONS, loadTopologyList, topologyListParams, topologyFields, topologyGaps } from './app-topology.ts';
import { instanceKeys } from './v2-keys.ts';

/** GET /v2/applications/{id}/instances.{format}: the agent instances (applicationInstancesV2), summaries from one NRQL query faceted by realAgentId. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.instances.list',
  method: 'GET',
  route: '/v2/applications/{id}/instances.{format}',
  v2Keys: instanceKeys('application_instances', true),
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationTopology',
  summary: 'List the agent instances (applicationInstancesV2), summaries from one NRQL query faceted by realAgentId',
  fidelity: 'approximate',
  parameters: topologyListParams,
  topLinks: INSTANCE_TOP_LINKS,
  fields: topologyFields('application_instances[]', 'instances'),
  knownGaps: topologyGaps('application_instances[]'),
  assumptions: [XML_ASSUMPTION, ...TOPOLOGY_ASSUMPTIONS],
  load: (ctx) => loadTopologyList(ctx, 'instances'),
});
