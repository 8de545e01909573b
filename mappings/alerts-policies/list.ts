import { z } from 'zod';
import { defineReadPlanMapping, defineParams, pageOfList, param, parseAnswer, walkCursors, UpstreamError } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, wholeList } from '../common/alerts.ts';
import {
  MAX_POLICY_PAGES,
  NerdGraphPolicy,
  POLICIES_PAGE_SIZE,
  POLICIES_SEARCH,
  POLICY_ASSUMPTIONS,
  PolicyTitles,
  policyFields,
  policyGaps,
  v2Policy, policyKeys } from './alert-policies.ts';

const parameters = defineParams({
  'filter[name]': param.text('filter[name]', {
    fidelity: 'exact',
    note: "The policy's whole name, case and inner spaces included (v2: \"must be exact match\"), spaces around it ignored: policiesSearch's name criterion, each policy re-checked for equality.",
  }),
  page: param.page({ fidelity: 'exact', note: `${POLICIES_PAGE_SIZE} per page, ordered by id, v2 Link header.` }),
});

const SearchAnswer = z.object({
  actor: z.object({
    account: z
      .object({
        alerts: z.object({ policiesSearch: z.object({ nextCursor: z.string().nullable().optional(), policies: z.array(NerdGraphPolicy) }).nullable() }).nullable(),
      })
      .nullable(),
  }),
});

/** GET /v2/alerts_policies.{json,xml}: the account's policies (all cursor pages), filtered by exact name, paged by 50. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-policies.list',
  method: 'GET',
  route: '/v2/alerts_policies.{format}',
  v2Keys: policyKeys('policies', true),
  operation: POLICIES_SEARCH,
  summary: 'List alert policies: policiesSearch (name criterion for filter[name]), every cursor page read, ordered by id and paged locally',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  parameters,
  fields: policyFields('policies[]'),
  knownGaps: [
    ...policyGaps('policies[]'),
    {
      description: `Every page reads all the account's policies (one request per NerdGraph page, so v2's order by id holds whatever order NerdGraph answers in); at most ${MAX_POLICY_PAGES} NerdGraph pages: an account with more is refused whole (422 naming the bound and filter[name]) rather than listed in part, where v2 listed every policy.`,
    },
  ],
  assumptions: [
    ...POLICY_ASSUMPTIONS,
    `v2 pages alert policies by ${POLICIES_PAGE_SIZE} (UNCONFIRMED; the legacy witness does; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing).`,
    "filter[name] is an exact match (v2's swagger: \"Name (must be exact match)\"); policiesSearch's name criterion is taken as exact too (UNCONFIRMED; no probe: the probe sends NerdGraph no name filter, and no answer could show it, since each policy returned is re-checked for equality), so a looser NerdGraph match shows nothing more.",
    "Spaces around filter[name] are ignored (UNCONFIRMED: New Relic's manage-entities-alerts-conditions.mdx (#example steps 3 and 4) and disable-enable-alerts-conditions-using-api.mdx (#example step 1, with curl --data-urlencode) send ' Logjam Alert' and show 'Logjam Alert' found; names are stored trimmed, so nothing else could match; probe: policy-filter-name-trimmed, GET /v2/alerts_policies.json?filter[name]=%20<an existing name> on the legacy API, read-only).",
  ],
  async load(ctx) {
    const { 'filter[name]': raw, page } = parameters.parse(ctx.params);
    // Names are stored trimmed, so a value with spaces around it means the trimmed name.
    const name = raw === undefined || raw.trim() === '' ? raw : raw.trim();
    const walked = await walkCursors(
      ctx,
      POLICIES_SEARCH,
      { accountId: ctx.accountId, criteria: name === undefined ? {} : { name } },
      (answer) => {
        const search = parseAnswer(SearchAnswer, answer, POLICIES_SEARCH).actor.account?.alerts?.policiesSearch;
        if (!search) throw new UpstreamError('upstream_failure', 'policiesSearch answered nothing for the account');
        return { items: search.policies, nextCursor: search.nextCursor };
      },
      // Only the caller's account, and only the exact name asked for.
      { enough: Number.POSITIVE_INFINITY, maxPages: MAX_POLICY_PAGES, keep: (policy) => policy.accountId === ctx.accountId && (name === undefined || policy.name === name) },
    );
    const policies = [...wholeList(walked, PolicyTitles.tooMany)].sort((a, b) => Number(a.id) - Number(b.id)).map(v2Policy);
    return pageOfList(policies, { page, pageSize: POLICIES_PAGE_SIZE, wrapperKey: 'policies', publicUrl: ctx.publicUrl });
  },
});
