import { type CallerScope, defineReadPlanMapping, fieldNotesUnder, defineParams, param, XML_ASSUMPTION, pageOfWalk, withLink } from '../../src/mapping-api.ts';
import { AI_ISSUES_PAGE_SIZE, keptViolationsKey, type PolicyFacts, type TimeWindow, type UpstreamIncident } from './ai-issues.ts';
import { MAX_SLICE_REQUESTS, readSlices, SLICE_ASSUMPTIONS, SLICE_SLOTS } from './ai-issues-slices.ts';
import { violationParams, violationWindowSpecs } from './alert-params.ts';
import { v2Violation } from './ai-issues-v2.ts';

const note = fieldNotesUnder('violations[]');

const parameters = defineParams({
  ...violationWindowSpecs,
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first (ties by incident id); Link never has rel="last".' }),
});

/** How long a walk's read is kept for its later pages (per caller and account: ctx.cache). */
const KEPT_VIOLATIONS_MS = 30_000;

/** One read of the list: newest first (ties by incident id), cut at `cutoff` when truncated. */
interface ViolationsRead {
  /** The dates asked for: a kept read serves only the same ones. */
  dates: string;
  incidents: UpstreamIncident[];
  truncated: boolean;
  cutoff: number;
  policies: Map<number, PolicyFacts>;
  conditions: Map<number, string>;
}

/** The incidents of the window in time slices with their policy and condition names, at most 3 requests (shared/ai-issues-slices.ts). */
async function readViolations(ctx: CallerScope, onlyOpen: boolean, window: TimeWindow, dates: string): Promise<ViolationsRead> {
  const read = await readSlices(ctx, {
    incidents: window,
    incidentFilter: onlyOpen ? { states: ['CREATED'] } : null,
    conditions: true,
    issues: null,
    policiesOf: 'incidents',
    deploymentsQuery: null,
    operation: 'AlertViolationSlices',
  });
  const { complete, cutoff } = read.incidents;
  const incidents = read.incidents.items
    .filter((incident) => complete || incident.createdAt >= cutoff)
    .sort((a, b) => b.createdAt - a.createdAt || (a.incidentId < b.incidentId ? -1 : a.incidentId > b.incidentId ? 1 : 0));
  return { dates, incidents, truncated: !complete, cutoff, policies: read.policies, conditions: read.conditions };
}

/** GET /v2/alerts_violations.{json,xml}: NerdGraph's alert incidents (routes-next.md §5.2). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-violations.list',
  method: 'GET',
  route: '/v2/alerts_violations.{format}',
  v2Keys: {
    wrapper: 'violations',
    list: true,
    source: 'SHAPES §9 (V); SW ViolationResponseType',
    paths: {
      id: 'int',
      label: 'string',
      duration: 'int',
      policy_name: 'string',
      condition_name: 'string',
      priority: 'string',
      opened_at: 'epoch-ms',
      'closed_at?': 'epoch-ms',
      entity: 'object',
      'entity.product': 'string',
      'entity.type': 'string',
      'entity.group_id': 'int',
      'entity.id': 'int',
      'entity.name': 'string',
      links: 'object',
      'links.policy_id': 'int',
      'links.condition_id': 'int',
    },
  },
  operation: 'AlertViolationSlices',
  summary:
    'List violations: aiIssues.incidents over a time window read in time slices, policy names (policiesSearch) and NRQL condition names (nrqlConditionsSearch) in the same requests, at most 3 NerdGraph requests; kept 30 s for the later pages of a walk',
  fidelity: 'approximate',
  parameters,
  fields: [
    note('id', 'approximate', 'alertV2Id(incidentId): a stable integer derived from the UUID, not the id v2 had'),
    note('label', 'approximate', 'title'),
    note('duration', 'exact', '(closedAt ?? now - createdAt) / 1000, whole seconds'),
    note('policy_name', 'exact', 'AlertsPolicy.name of policyIds (policiesSearch by ids)'),
    note('condition_name', 'approximate', 'AlertsNrqlCondition.name of conditionFamilyId (NRQL conditions only, one nrqlConditionsSearch page per request)'),
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
        'The list is read in at most 3 NerdGraph requests, each holding up to 16 time slices of violations (one NerdGraph page each; later requests cut what overflowed a page into narrower slices, newest first). When that bound cuts the list, it ends at the oldest violation reached with every newer one: no rel="next" past the last reachable page, and a page beyond it is a 422 saying so (narrow with start_date/end_date or only_open).',
    },
    {
      description:
        'condition_name is known for NRQL conditions only (the schema has no other condition types); null for others and for conditions past the pages of nrqlConditionsSearch those 3 requests read (one page each).',
    },
    {
      description:
        'Policy names come from a first page of the account\'s policies and, in the later requests, those named but not on it; a policy named only by violations of the last request is read after it (one more request, or more past 200 policies): an account with more than a page of policies can cost a fourth call.',
    },
    {
      description:
        'Page 1 is always read from NerdGraph; what it read (per caller, account, only_open and dates) is kept 30 s, within the gateway\'s shared bound (least recently used go first), and pages 2..N within that time are served from it: a walk sees one snapshot, up to 30 s old. A close made through this gateway forgets it at once for the caller that closed it, on the replica that served the close; other callers, other replicas and other changes see it on page 1, or once the 30 s pass. Behind a load balancer a walk\'s pages may come from several replicas, each with its own kept read.',
    },
    { description: 'Violations opened in the same millisecond are listed by incident id (NerdGraph\'s own order among them is not documented).' },
    { description: 'priority: NerdGraph has four priorities, v2 two severities; HIGH, MEDIUM and LOW all read as Warning.' },
    { description: 'entity.type for key transactions is KeyTransaction; other products (plugins, servers) are only decoded when their GUID says so.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...SLICE_ASSUMPTIONS,
    'Page size 200 (UNCONFIRMED for alerts; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); newest first.',
    'start_date/end_date bound opened_at (NerdGraph timeWindow); filter[start_time]/filter[end_time] are their spellings.',
    'A bad date or an end before the start is 422.',
    'A start after now (or a window wholly before 1970) lists nothing and reads nothing; a start before 1970 counts from 1970.',
    'A repeated NerdGraph cursor is a 502 (nothing partial is shown).',
    'Condition names: nrqlConditionsSearch has no ids criterion (only name, nameLike, policyId, query, queryLike), so the account\'s conditions are read page by page beside the violations rather than only those on the page.',
  ],
  async load(ctx) {
    const { onlyOpen, window, dates } = violationParams(ctx.params, ctx.now);
    const { page } = parameters.parse(ctx.params);
    if (window === null) return { body: { violations: [] } };
    // Page 1 starts a walk: always read. Later pages reuse what the walk's first read kept, for the same dates.
    const key = keptViolationsKey(onlyOpen);
    const stored = page > 1 ? ctx.cache.get<ViolationsRead>(key) : undefined;
    const kept = stored?.dates === dates ? stored : undefined;
    const read = kept ?? (await readViolations(ctx, onlyOpen, window, dates));
    if (!kept) ctx.cache.set(key, { value: read, ttlMs: KEPT_VIOLATIONS_MS, size: read.incidents.length });
    const since = read.truncated ? new Date(Math.max(read.cutoff, 0)).toISOString() : '';
    // Only pages that can be served are announced; past the read's bound the answer says so.
    const { items, link } = pageOfWalk(read.incidents, page, AI_ISSUES_PAGE_SIZE, ctx.publicUrl, { complete: !read.truncated, truncated: read.truncated }, {
      withLast: false,
      beyondTitle: `Invalid parameter page: only the violations opened since ${since} can be read here (${MAX_SLICE_REQUESTS} NerdGraph requests of ${SLICE_SLOTS} slices); narrow the list with start_date and end_date`,
    });
    return withLink({ violations: items.map((item) => v2Violation(item, read, ctx.now)) }, link);
  },
});
