import { defineReadPlanMapping, fieldNotesUnder, defineParams, param, XML_ASSUMPTION, pageCount, pageOfWalk, withLink } from '../src/mapping-api.ts';
import { AI_ISSUES_PAGE_SIZE, MAX_UPSTREAM_PAGES, readConditionNames, readPolicies, walkIncidents } from './shared/ai-issues.ts';
import { violationParams, violationWindowSpecs } from './shared/alert-params.ts';
import { upstreamNumber, v2Violation } from './shared/ai-issues-v2.ts';

const note = fieldNotesUnder('violations[]');

const parameters = defineParams({
  ...violationWindowSpecs,
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, over NerdGraph cursors; Link never has rel="last".' }),
});

/** GET /v2/alerts_violations.{json,xml}: NerdGraph's alert incidents (routes-next.md §5.2). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-violations.list',
  method: 'GET',
  route: '/v2/alerts_violations.{format}',
  operation: 'AlertViolations',
  summary: 'List violations: aiIssues.incidents over a time window (cursor walk), policy names (policiesSearch) and NRQL condition names beside it',
  fidelity: 'approximate',
  parameters,
  fields: [
    note('id', 'approximate', 'alertV2Id(incidentId): a stable integer derived from the UUID, not the id v2 had'),
    note('label', 'approximate', 'title'),
    note('duration', 'exact', '(closedAt ?? now - createdAt) / 1000, whole seconds'),
    note('policy_name', 'exact', 'AlertsPolicy.name of policyIds (policiesSearch by ids)'),
    note('condition_name', 'approximate', 'AlertsNrqlCondition.name of conditionFamilyId (NRQL conditions only)'),
    note('priority', 'approximate', 'CRITICAL -> Critical, HIGH/MEDIUM/LOW -> Warning (casing unconfirmed)'),
    note('opened_at / closed_at', 'exact', 'createdAt / closedAt (epoch ms; closed_at absent while open)'),
    note('entity', 'approximate', 'decoded from entityGuids (product, type, id; group_id = id) and entityNames'),
    note('links.policy_id / links.condition_id', 'exact', 'policyIds / conditionFamilyId'),
  ],
  knownGaps: [
    { description: 'Violation ids are derived from NerdGraph incident UUIDs; ids stored from the real v2 API will not match.' },
    { description: 'Without start_date the list reaches 30 days back, 90 with only_open (v2 listed the whole history; NerdGraph documents no retention for aiIssues).' },
    {
      description:
        'At most 50 NerdGraph pages of violations are reachable (as many violations as NerdGraph puts on 50 pages); narrow with start_date/end_date. The list ends at the last reachable page (no rel="next" past it) and a page beyond it is a 422 saying so.',
    },
    { description: 'condition_name is known for NRQL conditions only (the schema has no other condition types); null for others and past the first 2,000 conditions.' },
    { description: 'priority: NerdGraph has four priorities, v2 two severities; HIGH, MEDIUM and LOW all read as Warning.' },
    { description: 'entity.type for key transactions is KeyTransaction; other products (plugins, servers) are only decoded when their GUID says so.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Page size 200 (UNCONFIRMED for alerts); newest first.',
    'start_date/end_date bound opened_at (NerdGraph timeWindow); filter[start_time]/filter[end_time] are their spellings.',
    'A bad date or an end before the start is 422.',
    'A start after now (or a window wholly before 1970) lists nothing and reads nothing; a start before 1970 counts from 1970.',
    'A repeated NerdGraph cursor is a 502 (nothing partial is shown).',
    'Condition names: nrqlConditionsSearch has no ids criterion (only name, nameLike, policyId, query, queryLike), so the account\'s conditions are read, at most 10 pages, rather than only those on the page.',
  ],
  async load(ctx) {
    const { onlyOpen, window } = violationParams(ctx.params, ctx.now);
    const { page } = parameters.parse(ctx.params);
    if (window === null) return { body: { violations: [] } };
    const walked = await walkIncidents(ctx, onlyOpen ? { states: ['CREATED'] } : null, window, { enough: page * AI_ISSUES_PAGE_SIZE + 1 });
    // Only pages that can be served are announced; past the walk's bound the answer says so.
    const { items, link } = pageOfWalk(walked.items, page, AI_ISSUES_PAGE_SIZE, ctx.publicUrl, walked, {
      withLast: false,
      beyondTitle: `Invalid parameter page: at most ${MAX_UPSTREAM_PAGES} NerdGraph pages of violations can be read (${pageCount(walked.items.length, AI_ISSUES_PAGE_SIZE)} pages here); narrow the list with start_date and end_date`,
    });
    const policyIds = new Set(items.flatMap((item) => (upstreamNumber(item.policyIds) ?? [])));
    const [policies, conditions] = items.length === 0 ? [new Map(), new Map()] : await Promise.all([readPolicies(ctx, policyIds), readConditionNames(ctx)]);
    return withLink({ violations: items.map((item) => v2Violation(item, { policies, conditions }, ctx.now)) }, link);
  },
});
