import { type CallerScope, defineReadPlanMapping, fieldNotesUnder, defineParams, param, XML_ASSUMPTION, pageOfWalk, withLink } from '../../src/mapping-api.ts';
import { AI_ISSUES_PAGE_SIZE, CLOCK_SKEW_MS, keptIncidentsKey, LIST_WINDOW_MS, OPEN_WINDOW_MS, type PolicyFacts, type UpstreamIssue } from './ai-issues.ts';
import { MAX_SLICE_REQUESTS, readSlices, SLICE_ASSUMPTIONS, SLICE_SLOTS } from './ai-issues-slices.ts';
import { v2Incident } from './ai-issues-v2.ts';

/** v2's open incidents: not closed. DEACTIVATED issues without closedAt count as open (a choice). */
const OPEN_STATES = ['CREATED', 'ACTIVATED', 'DEACTIVATED'];
const isOpen = (issue: UpstreamIssue): boolean => issue.closedAt === null || issue.closedAt === undefined;

const note = fieldNotesUnder('incidents[]');

/** How long a walk's read is kept for its later pages (per caller and account: ctx.cache). */
const KEPT_INCIDENTS_MS = 30_000;

/** One read of the list: newest first (ties by issue id), cut at `cutoff` when truncated. */
interface IncidentsRead {
  issues: UpstreamIssue[];
  truncated: boolean;
  cutoff: number;
  policies: Map<number, PolicyFacts>;
}

/** The issues of the last 30 days (90 open ones) in time slices, at most 3 requests (shared/ai-issues-slices.ts). */
async function readIncidents(ctx: CallerScope, onlyOpen: boolean): Promise<IncidentsRead> {
  const window = { startTime: ctx.now - (onlyOpen ? OPEN_WINDOW_MS : LIST_WINDOW_MS), endTime: ctx.now + CLOCK_SKEW_MS };
  const read = await readSlices(ctx, {
    incidents: null,
    issues: { window, filter: onlyOpen ? { states: OPEN_STATES } : null },
    policiesOf: 'issues',
    deploymentsQuery: null,
    operation: 'AlertSlices',
  });
  const { complete, cutoff } = read.issues;
  const issues = read.issues.items
    .filter((issue) => (!onlyOpen || isOpen(issue)) && (complete || issue.createdAt >= cutoff))
    .sort((a, b) => b.createdAt - a.createdAt || (a.issueId < b.issueId ? -1 : a.issueId > b.issueId ? 1 : 0));
  return { issues, truncated: !complete, cutoff, policies: read.policies };
}

const parameters = defineParams({
  only_open: param.flag('only_open', { fidelity: 'exact', note: 'Open issues only: filter states [CREATED, ACTIVATED, DEACTIVATED] and no closedAt, over 90 days.' }),
  exclude_violations: param.flag('exclude_violations', { fidelity: 'exact', note: 'Leaves links.violations out (client-go sends it).' }),
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header; rel="last" only when the list was read whole.' }),
});

/** GET /v2/alerts_incidents.{json,xml}: NerdGraph's alert issues (routes-next.md §5.1). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-incidents.list',
  method: 'GET',
  route: '/v2/alerts_incidents.{format}',
  v2Keys: {
    wrapper: 'incidents',
    list: true,
    source: 'SHAPES §9 (I); SW IncidentResponseType (incident_preference: SHAPES, a string); CG pkg/alerts/incidents_test.go',
    paths: { id: 'int', opened_at: 'epoch-ms', 'closed_at?': 'epoch-ms', incident_preference: 'string', links: 'object', 'links.violations': 'int[]', 'links.policy_id': 'int' },
  },
  operation: 'AlertSlices',
  summary:
    'List incidents: aiIssues.issues over the last 30 days (90 with only_open) read in time slices, at most 3 NerdGraph requests, incident preference from policiesSearch in the same requests; kept 30 s for the later pages of a walk',
  fidelity: 'approximate',
  parameters,
  fields: [
    note('id', 'approximate', 'alertV2Id(issueId): a stable integer derived from the UUID, not the id v2 had'),
    note('opened_at', 'exact', 'activatedAt, else createdAt (epoch ms)'),
    note('closed_at', 'exact', 'closedAt (absent while open)'),
    note('incident_preference', 'exact', 'AlertsPolicy.incidentPreference of policyIds[0]'),
    note('links.policy_id', 'exact', 'policyIds[0]'),
    note('links.violations', 'approximate', 'alertV2Id of each incidentIds entry; left out with exclude_violations'),
  ],
  knownGaps: [
    { description: 'Incident ids are derived from NerdGraph issue UUIDs; ids stored from the real v2 API will not match.' },
    { description: 'Violation ids are derived from NerdGraph incident UUIDs, not v2 ids.' },
    { description: 'Only issues of the last 30 days are listed, 90 with only_open (v2 listed the whole history; NerdGraph documents no retention for aiIssues).' },
    {
      path: '(link).last',
      description:
        'The list is read in at most 3 NerdGraph requests, each holding up to 16 time slices of issues (one NerdGraph page each; later requests cut what overflowed a page into narrower slices, newest first). When that bound cuts the list, it ends at the oldest issue reached with every newer one: no rel="last", no rel="next" past the last reachable page, and a page beyond it is a 422 saying so (narrow with only_open).',
    },
    {
      description:
        'Page 1 is always read from NerdGraph; what it read (per caller, account and only_open) is kept 30 s, within the gateway\'s shared bound (least recently used go first), and pages 2..N within that time are served from it: a walk sees one snapshot, up to 30 s old. A close made through this gateway forgets it at once for the caller that closed it, on the replica that served the close; other callers, other replicas and other changes see it on page 1, or once the 30 s pass. Behind a load balancer a walk\'s pages may come from several replicas, each with its own kept read.',
    },
    { description: 'Issues opened in the same millisecond are listed by issue id (NerdGraph\'s own order among them is not documented).' },
    { description: 'Incident preferences come from a first page of the account\'s policies; policies of the listed issues not on it cost one more NerdGraph call after the slices (a fourth, for an account with more than one page of policies).' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...SLICE_ASSUMPTIONS,
    'Page size 200 (UNCONFIRMED for alerts; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); newest first.',
    'incident_preference is a string, as real data showed (the 2016 swagger says integer).',
    'only_open means not closed: a DEACTIVATED issue without closedAt is open (v2 had no such state).',
    'A repeated NerdGraph cursor is a 502 (nothing partial is shown).',
  ],
  async load(ctx) {
    const { only_open: onlyOpen, exclude_violations: excludeViolations, page } = parameters.parse(ctx.params);
    // Page 1 starts a walk: always read. Later pages reuse what the walk's first read kept.
    const key = keptIncidentsKey(onlyOpen);
    const kept = page > 1 ? ctx.cache.get<IncidentsRead>(key) : undefined;
    const read = kept ?? (await readIncidents(ctx, onlyOpen));
    if (!kept) ctx.cache.set(key, { value: read, ttlMs: KEPT_INCIDENTS_MS, size: read.issues.length });
    const since = read.truncated ? new Date(Math.max(read.cutoff, 0)).toISOString() : '';
    const { items: shown, link } = pageOfWalk(read.issues, page, AI_ISSUES_PAGE_SIZE, ctx.publicUrl, { complete: !read.truncated, truncated: read.truncated }, {
      withLast: true,
      beyondTitle: `Invalid parameter page: only the incidents opened since ${since} can be read here (${MAX_SLICE_REQUESTS} NerdGraph requests of ${SLICE_SLOTS} slices); narrow the list with only_open`,
    });
    return withLink({ incidents: shown.map((issue) => v2Incident(issue, read.policies, !excludeViolations)) }, link);
  },
});
