import { definePassthroughMapping } from '../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from './shared/alerts.ts';

/** PUT, DELETE /v2/alerts_location_failure_conditions/{condition_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_location_failure_conditions.item',
  route: '/v2/alerts_location_failure_conditions/{condition_id}.{format}',
  methods: ['PUT', 'DELETE'],
  summary: 'One location failure alert condition: update, delete, forwarded to the legacy REST API',
  reason: ALERTS_KEPT_ALIVE,
});
