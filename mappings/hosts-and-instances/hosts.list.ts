import { defineReadPlanMapping, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { HOST_TOP_LINKS, TOPOLOGY_ASSUMPTIONS, loadTopologyList, topologyListParams, topologyFields, topologyGaps } from './app-topology.ts';
import { hostKeys } from './v2-keys.ts';

/** GET /v2/applications/{id}/hosts.{format}: the hosts of an application (agent instances grouped by host name). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.hosts.list',
  method: 'GET',
  route: '/v2/applications/{id}/hosts.{format}',
  v2Keys: hostKeys('application_hosts', true),
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationTopology',
  summary: 'List the hosts of an application: its agent instances grouped by host name, summaries from one NRQL query faceted by host',
  fidelity: 'approximate',
  parameters: topologyListParams,
  topLinks: HOST_TOP_LINKS,
  fields: topologyFields('application_hosts[]', 'hosts'),
  knownGaps: [
    ...topologyGaps('application_hosts[]'),
    {
      description:
        "Order: hosts are listed by the gateway's synthetic ids; v2 listed them by its own, so on an application whose hosts fill several pages, which host lands on which page differs from v2's (every host is on some page).",
    },
  ],
  assumptions: [XML_ASSUMPTION, ...TOPOLOGY_ASSUMPTIONS],
  load: (ctx) => loadTopologyList(ctx, 'hosts'),
});
