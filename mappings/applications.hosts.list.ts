import { defineReadPlanMapping } from '../src/routes/mapping.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { HOST_TOP_LINKS, TOPOLOGY_ASSUMPTIONS, loadTopologyList, topologyListParams, topologyFields, topologyGaps } from './shared/app-topology.ts';

/** GET /v2/applications/{id}/hosts.{format}: the hosts of an application (agent instances grouped by host name). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.hosts.list',
  method: 'GET',
  route: '/v2/applications/{id}/hosts.{format}',
  operation: 'ApplicationTopology',
  summary: 'List the hosts of an application: its agent instances grouped by host name, summaries from one NRQL query faceted by host',
  fidelity: 'approximate',
  parameters: topologyListParams,
  topLinks: HOST_TOP_LINKS,
  fields: topologyFields('application_hosts[]', 'hosts'),
  knownGaps: topologyGaps('application_hosts[]'),
  assumptions: [XML_ASSUMPTION, ...TOPOLOGY_ASSUMPTIONS],
  load: (ctx) => loadTopologyList(ctx, 'hosts'),
});
