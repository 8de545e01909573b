import { defineWriteMapping, NO_PARAMS } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { NRQL_CONDITION_ASSUMPTIONS, nrqlConditionFields, nrqlConditionGaps, pathNrqlCondition, v2NrqlCondition } from './nrql-conditions.ts';
import { confirmedDelete } from './condition-delete.ts';

/** DELETE /v2/alerts_nrql_conditions/{condition_id}.{json,xml}: the condition read (v2 answers it), then alertsConditionDelete. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts_nrql_conditions.delete',
  method: 'DELETE',
  route: '/v2/alerts_nrql_conditions/{condition_id}.{format}',
  sample: { path: { condition_id: '{nrql_condition_to_delete_id}' } },
  operation: 'AlertConditionDelete',
  summary: 'Delete a NRQL alert condition: nrqlCondition read (404 when not in the account; v2 answers the deleted condition), then one alertsConditionDelete',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 200,
  unconfirmedTitle: 'The NRQL condition may have been deleted, but New Relic did not confirm it: list the policy\'s NRQL conditions before retrying',
  parameters: NO_PARAMS,
  fields: nrqlConditionFields('nrql_condition'),
  knownGaps: nrqlConditionGaps('nrql_condition'),
  assumptions: [...NRQL_CONDITION_ASSUMPTIONS],
  async plan(ctx) {
    const { id, stored } = await pathNrqlCondition(ctx);
    const shown = v2NrqlCondition(stored);
    return {
      variables: { accountId: ctx.accountId, id: String(id) },
      answer: (payload) => (confirmedDelete(payload, id), { nrql_condition: shown }),
    };
  },
});
