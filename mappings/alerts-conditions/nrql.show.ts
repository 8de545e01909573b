import { defineReadPlanMapping, NO_PARAMS } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { NRQL_CONDITION_ASSUMPTIONS, nrqlConditionFields, nrqlConditionGaps, nrqlConditionKeys, pathNrqlCondition, v2NrqlCondition } from './nrql-conditions.ts';

/** GET /v2/alerts_nrql_conditions/{condition_id}.{json,xml}: one NRQL condition, by `nrqlCondition(id)`. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts_nrql_conditions.show',
  method: 'GET',
  route: '/v2/alerts_nrql_conditions/{condition_id}.{format}',
  v2Keys: nrqlConditionKeys('nrql_condition', false),
  sample: { path: { condition_id: '{nrql_condition_id}' } },
  operation: 'NrqlConditionById',
  summary: 'Show one NRQL alert condition: account.alerts.nrqlCondition(id) (404 when not in the account)',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  parameters: NO_PARAMS,
  fields: nrqlConditionFields('nrql_condition'),
  knownGaps: nrqlConditionGaps('nrql_condition'),
  assumptions: [
    ...NRQL_CONDITION_ASSUMPTIONS,
    // The read-only probes compare it against a real legacy API (`npm run probe`'s route comparison, by its sample).
    'GET of one NRQL condition is UNCONFIRMED in REST v2 (New Relic\'s 2016 route list has only its PUT and DELETE): answered {"nrql_condition": C}, as PUT and DELETE answer, and a malformed, unknown or other account\'s id is 404 (no probe: the route comparison of `npm run probe` settles it, by this route\'s sample).',
  ],
  async load(ctx) {
    const { stored } = await pathNrqlCondition(ctx);
    return { body: { nrql_condition: v2NrqlCondition(stored) } };
  },
});
