import { definePassthroughMapping } from '../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, SHOW_UNCONFIRMED } from './shared/alerts.ts';

/** GET, PUT, DELETE /v2/alerts_external_service_conditions/{condition_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_external_service_conditions.item',
  route: '/v2/alerts_external_service_conditions/{condition_id}.{format}',
  methods: ['GET', 'PUT', 'DELETE'],
  summary: 'External service alert conditions: show, update, delete one, forwarded to the legacy REST API',
  reason: ALERTS_KEPT_ALIVE,
  assumptions: [SHOW_UNCONFIRMED],
});
