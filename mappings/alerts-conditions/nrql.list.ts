import { z } from 'zod';
import { defineReadPlanMapping, defineParams, invalidParameter, notFound, pageOfList, param, parseAnswer, walkCursors } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, wholeList } from '../common/alerts.ts';
import { NRQL_CONDITIONS_PAGE_SIZE, NRQL_CONDITION_ASSUMPTIONS, NrqlCondition, NrqlConditionTitles, nrqlConditionFields, nrqlConditionGaps, v2NrqlCondition, nrqlConditionKeys } from './nrql-conditions.ts';

const OPERATION = 'NrqlConditionsOfPolicy';
/** NerdGraph pages read at most (200 conditions each in the sandbox): a policy with more is cut. */
export const MAX_NRQL_CONDITION_PAGES = 25;

const parameters = defineParams({
  policy_id: param.id('policy_id', { fidelity: 'exact', note: 'Required (422 without it, 404 for a policy not in the account): nrqlConditionsSearch searchCriteria.policyId.', title: NrqlConditionTitles.idInvalid('policy_id') }),
  page: param.page({ fidelity: 'approximate', note: `${NRQL_CONDITIONS_PAGE_SIZE} per page (v2's alerts page size is UNCONFIRMED; no probe: it needs a policy of more than 50 NRQL conditions, which the read-only probes cannot make), ordered by id, v2 Link header.` }),
});

const Page = z.object({
  actor: z.object({
    account: z
      .object({
        alerts: z.object({
          policy: z.object({ id: z.string() }).nullable(),
          nrqlConditionsSearch: z.object({ nextCursor: z.string().nullable(), nrqlConditions: z.array(NrqlCondition) }).nullable(),
        }),
      })
      .nullable(),
  }),
});

/** GET /v2/alerts_nrql_conditions.{json,xml}?policy_id=: the policy's NRQL conditions, every cursor walked, paged locally. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts_nrql_conditions.list',
  method: 'GET',
  route: '/v2/alerts_nrql_conditions.{format}',
  v2Keys: nrqlConditionKeys('nrql_conditions', true),
  // policy_id is required: a policy that has NRQL conditions, so there is an answer to compare.
  sample: { query: 'policy_id={nrql_policy_id}' },
  operation: OPERATION,
  summary: "NRQL alert conditions of a policy: nrqlConditionsSearch by policyId (every cursor walked, with the policy to prove it exists), paged locally by id",
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  parameters,
  fields: nrqlConditionFields('nrql_conditions[]'),
  knownGaps: [
    ...nrqlConditionGaps('nrql_conditions[]'),
    { description: `At most ${MAX_NRQL_CONDITION_PAGES} NerdGraph pages of a policy's conditions are read: a policy with more is refused whole (422 naming the bound) rather than listed in part, where v2 listed every condition.` },
    { description: 'Each v2 page reads the policy\'s whole condition list again (one NerdGraph request per 200 conditions in the sandbox).' },
  ],
  assumptions: [...NRQL_CONDITION_ASSUMPTIONS, `v2's alerts lists page by ${NRQL_CONDITIONS_PAGE_SIZE} (UNCONFIRMED; the sandbox's legacy face does the same; no probe: it needs a policy of more than 50 NRQL conditions, which the read-only probes cannot make).`],
  async load(ctx) {
    const { policy_id: policyId, page } = parameters.parse(ctx.params);
    if (policyId === undefined) throw invalidParameter(NrqlConditionTitles.policyIdRequired);
    let policyFound = false;
    const walked = await walkCursors(
      ctx,
      OPERATION,
      { accountId: ctx.accountId, policyId: String(policyId) },
      (answer) => {
        const alerts = parseAnswer(Page, answer, OPERATION).actor.account?.alerts;
        policyFound ||= alerts?.policy?.id === String(policyId);
        const search = alerts?.nrqlConditionsSearch;
        // A policy of another account is null here: nothing of it is listed.
        return { items: search?.nrqlConditions ?? [], nextCursor: alerts?.policy ? search?.nextCursor : null };
      },
      { enough: Number.POSITIVE_INFINITY, maxPages: MAX_NRQL_CONDITION_PAGES },
    );
    if (!policyFound) throw notFound(NrqlConditionTitles.policyNotFound);
    const conditions = wholeList(walked, NrqlConditionTitles.tooMany(MAX_NRQL_CONDITION_PAGES))
      .filter((condition) => condition.policyId === String(policyId))
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map(v2NrqlCondition);
    return pageOfList(conditions, { page, pageSize: NRQL_CONDITIONS_PAGE_SIZE, wrapperKey: 'nrql_conditions', publicUrl: ctx.publicUrl });
  },
});
