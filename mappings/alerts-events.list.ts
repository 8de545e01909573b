import { z } from 'zod';
import { defineReadPlanMapping, fieldNotesUnder } from '../src/routes/mapping.ts';
import { pageOfList } from '../src/routes/local-paging.ts';
import { NrqlResults, parseAnswer } from '../src/upstream/answer.ts';
import { UpstreamError } from '../src/upstream/errors.ts';
import { accountDeploymentEventsQuery } from '../src/upstream/nrql.ts';
import type { V2Body } from '../src/v2/format.ts';
import { alertV2Id, deploymentV2Id } from '../src/v2/ids.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import {
  AI_ISSUES_PAGE_SIZE,
  EVENTS_WINDOW_MS,
  byEventTime,
  deploymentEvent,
  eventFilters,
  eventShown,
  mayShow,
  readPolicies,
  violationEvents,
  walkIncidents,
  walkIssues,
} from './shared/ai-issues.ts';

const note = fieldNotesUnder('recent_events[]');
const HOUR_MS = 3_600_000;

const filter = (key: string, text: string) => param.single(`filter[${key}]`, { fidelity: 'approximate', note: text });
const parameters = defineParams({
  product: filter('product', 'APM, BROWSER, MOBILE, SERVERS, PLUGINS, SYNTHETICS, ALERTS (any case); only APM, BROWSER and MOBILE ever match.'),
  entity_type: filter('entity_type', 'Application, Server, KeyTransaction, Plugin, MobileApplication, BrowserApplication, Monitor.'),
  entity_group_id: filter('entity_group_id', 'A positive integer: the entity id (group ids equal entity ids here).'),
  entity_id: filter('entity_id', 'A positive integer: the APM, browser or mobile app id, or the key transaction id.'),
  event_type: filter('event_type', 'DEPLOYMENT, VIOLATION_OPEN, VIOLATION_CLOSE, VIOLATION (both); NOTIFICATION, INSTRUMENTATION and INCIDENT_OPEN are accepted and match nothing.'),
  incident_id: filter('incident_id', 'The derived id of an alerts_incidents incident: its violations\' events.'),
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header.' }),
});

const DeploymentRow = z.object({
  timestamp: z.number(),
  changeTrackingId: z.string().nullable().optional(),
  deploymentId: z.string().nullable().optional(),
  version: z.union([z.string(), z.number()]).nullable().optional(),
  appId: z.number().nullable().optional(),
});
const DeploymentsAnswer = z.object({ actor: z.object({ account: z.object({ nrql: NrqlResults }).nullable() }) });

/** GET /v2/alerts_events.{json,xml}: violation opens and closes and deployments (routes-next.md §5.3). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-events.list',
  method: 'GET',
  route: '/v2/alerts_events.{format}',
  operation: 'AlertViolations',
  summary: 'Recent events: VIOLATION_OPEN/CLOSE from aiIssues.incidents (issue ids from aiIssues.issues), DEPLOYMENT from NRQL over Deployment and ChangeTrackingEvent; 30 days, paged locally',
  fidelity: 'approximate',
  parameters,
  fields: [
    note('id', 'approximate', 'violations: alertV2Id(incidentId|open or |close); deployments: deploymentV2Id(changeTrackingId or deploymentId)'),
    note('event_type', 'approximate', 'VIOLATION_OPEN, VIOLATION_CLOSE or DEPLOYMENT; NOTIFICATION and INSTRUMENTATION are never emitted'),
    note('product / entity_type / entity_group_id / entity_id', 'approximate', 'decoded from the incident entityGuids; APM/Application/appId for deployments'),
    note('priority', 'approximate', 'CRITICAL -> Critical, others -> Warning; null for deployments'),
    note('description', 'approximate', '"<policy name> (<incident title>)"; "Deployment of revision <version>"'),
    note('timestamp', 'exact', 'incident createdAt / closedAt; the deployment timestamp (epoch ms)'),
    note('incident_id', 'approximate', 'alertV2Id of the issue holding the incident; null for deployments'),
  ],
  knownGaps: [
    { description: 'Event ids are derived from NerdGraph ids; ids stored from the real v2 API will not match.' },
    { description: 'Incident ids are derived from NerdGraph issue UUIDs.' },
    { description: 'Descriptions are composed by the gateway; v2\'s own texts are not recoverable.' },
    { description: 'NOTIFICATION and INSTRUMENTATION events have no NerdGraph source and are never listed (New Relic names no replacement for alert events).' },
    { description: 'Only the last 30 days are listed, at most 50 NerdGraph pages of incidents and 5,000 deployments.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Page size 200 (UNCONFIRMED); newest first, ties by id.',
    'Products in upper case as the 2016 swagger lists them; filter values compare case-insensitively; a value outside the lists is 422.',
    'filter[event_type]=VIOLATION matches both VIOLATION_OPEN and VIOLATION_CLOSE.',
  ],
  async load(ctx) {
    const filters = eventFilters(ctx.params);
    const { page } = parameters.parse(ctx.params);
    const window = { startTime: ctx.now - EVENTS_WINDOW_MS, endTime: ctx.now };
    const events: V2Body[] = [];
    if (mayShow(filters, 'VIOLATION_OPEN') || mayShow(filters, 'VIOLATION_CLOSE')) {
      const [incidents, issues] = await Promise.all([
        walkIncidents(ctx, null, window, Number.POSITIVE_INFINITY),
        // An issue opens at most minutes before its first incident.
        walkIssues(ctx, null, { startTime: window.startTime - HOUR_MS, endTime: window.endTime }, Number.POSITIVE_INFINITY),
      ]);
      const issueOf = new Map(issues.items.flatMap((issue) => (issue.incidentIds ?? []).map((id) => [id, alertV2Id(issue.issueId)] as const)));
      const policyIds = new Set(incidents.items.flatMap((item) => (item.policyIds && /^\d{1,15}$/.test(item.policyIds) ? [Number(item.policyIds)] : [])));
      const policies = await readPolicies(ctx, policyIds);
      for (const incident of incidents.items) events.push(...violationEvents(incident, issueOf.get(incident.incidentId) ?? null, policies));
    }
    if (mayShow(filters, 'DEPLOYMENT')) {
      const query = accountDeploymentEventsQuery({ since: window.startTime, until: ctx.now + 60_000 });
      const answer = parseAnswer(DeploymentsAnswer, await ctx.read('AlertEventDeployments', { accountId: ctx.accountId, events: query }), 'AlertEventDeployments');
      const results = answer.actor.account?.nrql?.results;
      if (!results) throw new UpstreamError('upstream_failure', 'AlertEventDeployments: no NRQL results');
      for (const row of results) {
        const parsed = DeploymentRow.safeParse(row);
        const marker = parsed.data?.changeTrackingId ?? parsed.data?.deploymentId;
        if (!parsed.success || !marker || typeof parsed.data.appId !== 'number') continue;
        const version = parsed.data.version;
        events.push(deploymentEvent(deploymentV2Id(marker), parsed.data.appId, version === null || version === undefined ? '' : String(version), parsed.data.timestamp));
      }
    }
    const shown = events.filter((event) => eventShown(filters, event)).sort(byEventTime);
    return pageOfList(shown, { page, pageSize: AI_ISSUES_PAGE_SIZE, wrapperKey: 'recent_events', publicUrl: ctx.publicUrl });
  },
});
