import { defineReadPlanMapping, fieldNotesUnder, defineParams, param, XML_ASSUMPTION, pageCount, pageOfWalk, withLink } from '../src/mapping-api.ts';
import { AI_ISSUES_PAGE_SIZE, CLOCK_SKEW_MS, LIST_WINDOW_MS, MAX_UPSTREAM_PAGES, OPEN_WINDOW_MS, readPolicies, walkIssues, type UpstreamIssue } from './shared/ai-issues.ts';
import { policyIdsOf, v2Incident } from './shared/ai-issues-v2.ts';

/** v2's open incidents: not closed. DEACTIVATED issues without closedAt count as open (a choice). */
const OPEN_STATES = ['CREATED', 'ACTIVATED', 'DEACTIVATED'];
const isOpen = (issue: UpstreamIssue): boolean => issue.closedAt === null || issue.closedAt === undefined;

const note = fieldNotesUnder('incidents[]');

const parameters = defineParams({
  only_open: param.flag('only_open', { fidelity: 'exact', note: 'Open issues only: filter states [CREATED, ACTIVATED, DEACTIVATED] and no closedAt, over 90 days.' }),
  exclude_violations: param.flag('exclude_violations', { fidelity: 'exact', note: 'Leaves links.violations out (client-go sends it).' }),
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header; rel="last" only when the walk reached the end of the list.' }),
});

/** GET /v2/alerts_incidents.{json,xml}: NerdGraph's alert issues (routes-next.md §5.1). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-incidents.list',
  method: 'GET',
  route: '/v2/alerts_incidents.{format}',
  operation: 'AlertIncidents',
  summary: 'List incidents: aiIssues.issues over the last 30 days (90 with only_open; cursor walk up to the requested page), incident preference from policiesSearch',
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
        'The walk stops once it holds the requested page and one more item: rel="last" is sent only when it reached the end of the list, else rel="next" alone. At most 50 NerdGraph pages are reachable; the list ends at the last reachable page and a page beyond it is a 422 saying so (narrow with only_open).',
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Page size 200 (UNCONFIRMED for alerts); newest first.',
    'incident_preference is a string, as real data showed (the 2016 swagger says integer).',
    'only_open means not closed: a DEACTIVATED issue without closedAt is open (v2 had no such state).',
    'A repeated NerdGraph cursor is a 502 (nothing partial is shown).',
  ],
  async load(ctx) {
    const { only_open: onlyOpen, exclude_violations: excludeViolations, page } = parameters.parse(ctx.params);
    const window = { startTime: ctx.now - (onlyOpen ? OPEN_WINDOW_MS : LIST_WINDOW_MS), endTime: ctx.now + CLOCK_SKEW_MS };
    const walked = await walkIssues(ctx, onlyOpen ? { states: OPEN_STATES } : null, window, {
      enough: page * AI_ISSUES_PAGE_SIZE + 1,
      ...(onlyOpen ? { keep: isOpen } : {}),
    });
    const { items: shown, link } = pageOfWalk(walked.items, page, AI_ISSUES_PAGE_SIZE, ctx.publicUrl, walked, {
      withLast: true,
      beyondTitle: `Invalid parameter page: at most ${MAX_UPSTREAM_PAGES} NerdGraph pages of incidents can be read (${pageCount(walked.items.length, AI_ISSUES_PAGE_SIZE)} pages here); narrow the list with only_open`,
    });
    const policies = await readPolicies(ctx, policyIdsOf(shown));
    return withLink({ incidents: shown.map((issue) => v2Incident(issue, policies, !excludeViolations)) }, link);
  },
});
