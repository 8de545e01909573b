import { defineReadPlanMapping, fieldNotesUnder } from '../src/routes/mapping.ts';
import { linkHeader } from '../src/v2/link.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { AI_ISSUES_PAGE_SIZE, LIST_WINDOW_MS, policyIdsOf, readPolicies, v2Incident, walkIssues } from './shared/ai-issues.ts';

const note = fieldNotesUnder('incidents[]');

const parameters = defineParams({
  only_open: param.flag('only_open', { fidelity: 'exact', note: 'Open issues only: filter states [CREATED, ACTIVATED].' }),
  exclude_violations: param.flag('exclude_violations', { fidelity: 'exact', note: 'Leaves links.violations out (client-go sends it).' }),
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header with rel="last".' }),
});

/** GET /v2/alerts_incidents.{json,xml}: NerdGraph's alert issues (routes-next.md §5.1). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-incidents.list',
  method: 'GET',
  route: '/v2/alerts_incidents.{format}',
  operation: 'AlertIncidents',
  summary: 'List incidents: aiIssues.issues over the last 30 days (cursor walk), incident preference from policiesSearch, paged locally',
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
    { description: 'Only issues of the last 30 days are listed (v2 listed the whole history), at most 50 NerdGraph pages.' },
  ],
  assumptions: [XML_ASSUMPTION, 'Page size 200 (UNCONFIRMED for alerts); newest first.', 'incident_preference is a string, as real data showed (the 2016 swagger says integer).'],
  async load(ctx) {
    const { only_open: onlyOpen, exclude_violations: excludeViolations, page } = parameters.parse(ctx.params);
    const window = { startTime: ctx.now - LIST_WINDOW_MS, endTime: ctx.now };
    const { items } = await walkIssues(ctx, onlyOpen ? { states: ['CREATED', 'ACTIVATED'] } : null, window, Number.POSITIVE_INFINITY);
    const shown = items.slice((page - 1) * AI_ISSUES_PAGE_SIZE, page * AI_ISSUES_PAGE_SIZE);
    const policies = await readPolicies(ctx, policyIdsOf(shown));
    const link = linkHeader(ctx.publicUrl, page, Math.ceil(items.length / AI_ISSUES_PAGE_SIZE));
    return { body: { incidents: shown.map((issue) => v2Incident(issue, policies, !excludeViolations)) }, ...(link ? { headers: { link } } : {}) };
  },
});
