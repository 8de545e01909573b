import { z } from 'zod';
import { defineListMapping, EntityKinds, parseAnswer, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { entitiesByGuid, guidBatchVariables, guidOf, guidsOf } from '../common/guid-batches.ts';
import {
  KEY_TRANSACTION_ASSUMPTIONS,
  KEY_TRANSACTION_TOP_LINKS,
  type KeyTransactionEntity,
  NrqlResults,
  keyTransactionOf,
  keyTransactionFields,
  keyTransactionGaps,
  reshapeKeyTransaction,
  summaryQuery,
  sumsByGuid,
  type KeyTransactionSums,
} from './key-transaction.ts';
import { NAME_IDS_LIST_ASSUMPTIONS, NAME_IDS_LIST_GAPS, nameIdsConditions, nameIdsListParams, nameMatches } from '../common/name-ids-list.ts';
import { keyTransactionKeys } from './v2-keys.ts';

const DETAILS = 'KeyTransactionDetails';

const Details = z.object({ actor: z.object({ account: z.object({ summary: NrqlResults }) }) });

/** What enrichPage hands to reshapeItem: each KT's entity and its 10-minute sums, by GUID. */
interface PageDetails {
  entities: Map<string, KeyTransactionEntity>;
  sums: Map<string, KeyTransactionSums>;
}

/** GET /v2/key_transactions.{json,xml}: the account's key transactions, 200 per page. */
export default defineListMapping({
  kind: 'entity-search-list',
  id: 'key-transactions.list',
  method: 'GET',
  route: '/v2/key_transactions.{format}',
  v2Keys: keyTransactionKeys('key_transactions', true),
  operation: 'KeyTransactionsSearch',
  summary: 'List key transactions (entity search, then one read per page: entities(guids) in batches of 25 and their NRQL summaries)',
  fidelity: 'approximate',
  wrapperKey: 'key_transactions',
  pageSize: 200,
  topLinks: KEY_TRANSACTION_TOP_LINKS,
  parameters: nameIdsListParams,
  fields: keyTransactionFields('key_transactions[]'),
  knownGaps: [
    { description: 'The details and summary request is one: when its NRQL fails, the page fails (502/503/504) rather than answer without summaries.' },
    ...keyTransactionGaps('key_transactions[]'),
    {
      description:
        'Each page costs 2 upstream requests: the entity search, and one KeyTransactionDetails read (8 aliased entities() calls of at most 25 GUIDs, and one NRQL query faceted by entity.guid for the summaries).',
    },
    ...NAME_IDS_LIST_GAPS,
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...NAME_IDS_LIST_ASSUMPTIONS,
    ...KEY_TRANSACTION_ASSUMPTIONS,
    'A key transaction the search found but entities(guids) did not return (deleted meanwhile) is left out of the page.',
  ],
  searchConditions(params, accountId) {
    return nameIdsConditions(EntityKinds.keyTransaction, params, accountId);
  },
  async enrichPage(entities, ctx): Promise<PageDetails> {
    const guids = guidsOf(entities);
    const data = await ctx.read(DETAILS, { ...guidBatchVariables(guids), accountId: ctx.accountId, summary: summaryQuery(guids, ctx.now) });
    const found = new Map<string, KeyTransactionEntity>();
    for (const [guid, entity] of entitiesByGuid(data, DETAILS, guids, ctx)) {
      // The parent app is an entity NerdGraph returned too: it must be in the account.
      const kt = keyTransactionOf(entity, (parent) => ctx.inAccount(parent));
      if (kt !== undefined) found.set(guid, kt);
    }
    return { entities: found, sums: sumsByGuid(parseAnswer(Details, data, DETAILS).actor.account.summary.results, DETAILS) };
  },
  reshapeItem(entity, ctx, enrichment) {
    const guid = guidOf(entity);
    // enrichPage's own answer: the runner calls it for every page with entities.
    const details = enrichment as PageDetails;
    const kt = details.entities.get(guid);
    if (kt === undefined) throw new Error(`key transaction ${guid} has no details`);
    return reshapeKeyTransaction(kt, details.sums.get(guid), ctx.now);
  },
  keepItem: nameMatches,
});
