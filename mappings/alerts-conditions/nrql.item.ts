import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, SHOW_UNCONFIRMED } from '../common/alerts.ts';

/**
 * GET /v2/alerts_nrql_conditions/{condition_id}.{json,xml}: passthrough. PUT and DELETE are
 * translated (alerts-nrql-conditions.update.ts, .delete.ts); v2 never documented this show.
 */
export default definePassthroughMapping({
  id: 'alerts_nrql_conditions.item',
  route: '/v2/alerts_nrql_conditions/{condition_id}.{format}',
  methods: ['GET'],
  summary: 'NRQL alert conditions: show one, forwarded to the legacy REST API (NerdGraph: actor.account.alerts.nrqlCondition)',
  reason: ALERTS_KEPT_ALIVE,
  assumptions: [SHOW_UNCONFIRMED],
});
