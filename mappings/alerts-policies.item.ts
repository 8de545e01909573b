import { definePassthroughMapping } from '../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, SHOW_UNCONFIRMED } from './shared/alerts.ts';

/** GET, PUT, DELETE /v2/alerts_policies/{policy_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_policies.item',
  route: '/v2/alerts_policies/{policy_id}.{format}',
  methods: ['GET', 'PUT', 'DELETE'],
  summary: 'One alert policy: show, update, delete, forwarded to the legacy REST API',
  reason: ALERTS_KEPT_ALIVE,
  assumptions: [SHOW_UNCONFIRMED],
});
