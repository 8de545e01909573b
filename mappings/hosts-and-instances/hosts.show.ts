import { defineReadPlanMapping, NO_PARAMS, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { HOST_TOP_LINKS, TOPOLOGY_ASSUMPTIONS, loadTopologyItem, topologyFields, topologyGaps } from './app-topology.ts';
import { hostKeys } from './v2-keys.ts';

/** GET /v2/applications/{id}/hosts/{host_id}.{format}: one application host (synthetic id per app and host name), with its 10-minute summary. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.hosts.show',
  method: 'GET',
  route: '/v2/applications/{id}/hosts/{host_id}.{format}',
  v2Keys: hostKeys('application_host', false),
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationTopology',
  summary: 'Show one application host (synthetic id per app and host name), with its 10-minute summary',
  fidelity: 'approximate',
  parameters: NO_PARAMS,
  topLinks: HOST_TOP_LINKS,
  fields: topologyFields('application_host', 'hosts'),
  knownGaps: topologyGaps('application_host'),
  assumptions: [XML_ASSUMPTION, ...TOPOLOGY_ASSUMPTIONS],
  load: (ctx) => loadTopologyItem(ctx, 'hosts', ctx.pathParams.host_id),
});
