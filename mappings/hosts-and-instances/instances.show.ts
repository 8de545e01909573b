import { defineReadPlanMapping, NO_PARAMS, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { INSTANCE_TOP_LINKS, TOPOLOGY_ASSUMPTIONS, loadTopologyItem, topologyFields, topologyGaps } from './app-topology.ts';
import { instanceKeys } from './v2-keys.ts';

/** GET /v2/applications/{id}/instances/{instance_id}.{format}: one agent instance of an application, with its 10-minute summary. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.instances.show',
  method: 'GET',
  route: '/v2/applications/{id}/instances/{instance_id}.{format}',
  v2Keys: instanceKeys('application_instance', false),
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationTopology',
  summary: 'Show one agent instance of an application, with its 10-minute summary',
  fidelity: 'approximate',
  parameters: NO_PARAMS,
  topLinks: INSTANCE_TOP_LINKS,
  fields: topologyFields('application_instance', 'instances'),
  knownGaps: topologyGaps('application_instance'),
  assumptions: [XML_ASSUMPTION, ...TOPOLOGY_ASSUMPTIONS],
  load: (ctx) => loadTopologyItem(ctx, 'instances', ctx.pathParams.instance_id),
});
