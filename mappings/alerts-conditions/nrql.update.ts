import { defineParams, defineWriteMapping, param, writeRefused } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import {
  NRQL_CONDITION_ASSUMPTIONS,
  NRQL_CONDITION_OPERATIONS,
  mutatedConditionAnswer,
  NrqlConditionTitles,
  nrqlConditionFields,
  nrqlConditionGaps,
  pathNrqlCondition,
  readTermExtras,
} from './nrql-conditions.ts';
import { nerdgraphInput, storedType, termsChange, v2ConditionOf } from './nrql-condition-input.ts';

const OPERATIONS = NRQL_CONDITION_OPERATIONS.update;

const parameters = defineParams({
  condition: param.bodyField('nrql_condition', {
    fidelity: 'approximate',
    note: 'The fields given replace the stored ones (as v2): only they are sent, to the update mutation of the condition\'s own type (read first); type cannot change (422); terms replace all terms (the prediction and health-status reporting of each term carried over from the stored term of its priority, read then), and terms equal to the stored ones are not sent; nrql, signal and expiration are each sent whole, merged from the condition read, when any of their keys differs from it, and not at all otherwise (an echo of a read changes nothing); nrql may be a query alone; the query is kept as sent, untrimmed.',
  }),
});

/** PUT /v2/alerts_nrql_conditions/{condition_id}.{json,xml}: the condition read (its type), then one update mutation. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts_nrql_conditions.update',
  method: 'PUT',
  route: '/v2/alerts_nrql_conditions/{condition_id}.{format}',
  sample: { path: { condition_id: '{nrql_condition_to_update_id}' }, body: { json: { nrql_condition: { name: 'costs {call}' } } } },
  operation: OPERATIONS.static,
  stepOperations: [OPERATIONS.baseline, OPERATIONS.outlier],
  summary: 'Update a NRQL alert condition: nrqlCondition read (404 when not in the account; its type; its terms\' NerdGraph-only settings when the terms change), then one alertsNrqlConditionStaticUpdate, BaselineUpdate or OutlierUpdate (by the type read) with the given fields',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 200,
  unconfirmedTitle: 'The NRQL condition may have been updated, but New Relic did not confirm it: read it before retrying',
  parameters,
  fields: nrqlConditionFields('nrql_condition'),
  knownGaps: nrqlConditionGaps('nrql_condition'),
  assumptions: [...NRQL_CONDITION_ASSUMPTIONS],
  async plan(ctx) {
    const { id, stored } = await pathNrqlCondition(ctx);
    const condition = v2ConditionOf(ctx.body, false);
    const type = storedType(stored);
    if (condition.type !== undefined && condition.type !== type) throw writeRefused(422, NrqlConditionTitles.typeChange);
    // Terms that change replace all of them: their NerdGraph-only settings are read to be carried over.
    const extras = termsChange(condition, stored) ? await readTermExtras(ctx, id) : [];
    const input = nerdgraphInput(condition, type, stored, extras);
    const operation = OPERATIONS[type];
    return {
      operation,
      variables: { accountId: ctx.accountId, id: String(id), condition: input },
      answer: mutatedConditionAnswer('update', type, operation),
    };
  },
});
