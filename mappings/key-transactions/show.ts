import { z } from 'zod';
import { defineReadPlanMapping, EntityKinds, parseAnswer, UpstreamError, NO_PARAMS, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import {
  KEY_TRANSACTION_ASSUMPTIONS,
  KEY_TRANSACTION_NOT_FOUND,
  KEY_TRANSACTION_TOP_LINKS,
  NrqlResults,
  keyTransactionOf,
  keyTransactionFields,
  keyTransactionGaps,
  reshapeKeyTransaction,
  summaryQuery,
  sumsByGuid,
} from './key-transaction.ts';
import { keyTransactionKeys } from './v2-keys.ts';

const OPERATION = 'KeyTransactionByGuid';

const Answer = z.object({ actor: z.object({ entity: z.unknown(), account: z.object({ summary: NrqlResults }) }) });

/** GET /v2/key_transactions/{id}.{json,xml}: one key transaction and its summary, in one request. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'key-transactions.show',
  method: 'GET',
  route: '/v2/key_transactions/{id}.{format}',
  v2Keys: keyTransactionKeys('key_transaction', false),
  sample: { path: { id: '{key_transaction_id}' } },
  operation: OPERATION,
  summary: 'Show one key transaction: entity(guid) (GUID computed from account and id) and its NRQL summary in the same request',
  fidelity: 'approximate',
  parameters: NO_PARAMS,
  topLinks: KEY_TRANSACTION_TOP_LINKS,
  fields: keyTransactionFields('key_transaction'),
  knownGaps: keyTransactionGaps('key_transaction'),
  assumptions: [
    XML_ASSUMPTION,
    ...KEY_TRANSACTION_ASSUMPTIONS,
    `A non-numeric, zero or over-long id answers 404 "${KEY_TRANSACTION_NOT_FOUND}" without calling NerdGraph; unknown ids and ids of another account answer the same 404.`,
  ],
  async load(ctx) {
    const ref = ctx.entityRef(EntityKinds.keyTransaction, ctx.pathParams.id, KEY_TRANSACTION_NOT_FOUND);
    const data = await ctx.read(OPERATION, { guid: ref.guid, accountId: ctx.accountId, summary: summaryQuery([ref.guid], ctx.now) });
    const answer = parseAnswer(Answer, data, OPERATION).actor;
    const entity = ctx.requireEntity(answer.entity, ref, KEY_TRANSACTION_NOT_FOUND);
    // The parent app is in the KT's account; anything else is not shown (and is counted).
    const kt = keyTransactionOf(entity, (parent) => ctx.inAccount(parent));
    if (kt === undefined) throw new UpstreamError('upstream_failure', `unexpected entity shape in ${OPERATION}`);
    const sums = sumsByGuid(answer.account.summary.results, OPERATION).get(ref.guid);
    return { body: { key_transaction: reshapeKeyTransaction(kt, sums, ctx.now), links: KEY_TRANSACTION_TOP_LINKS } };
  },
});
