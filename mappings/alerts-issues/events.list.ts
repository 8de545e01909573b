import { z } from 'zod';
import { checkedParse, type CallerScope, defineReadPlanMapping, fieldNotesUnder, NrqlResults, parseAnswer, UpstreamError, type V2Body, decodeEntityGuid, defineParams, param, v2IdOf, XML_ASSUMPTION, pageOfWalk, withLink } from '../../src/mapping-api.ts';
import { AI_ISSUES_PAGE_SIZE, CLOCK_SKEW_MS, keptEventsKey } from './ai-issues.ts';
import { MAX_SLICE_REQUESTS, readEventSources, SLICE_ASSUMPTIONS, SLICE_SLOTS } from './ai-issues-slices.ts';
import { EVENTS_WINDOW_MS, byEventTime, eventShown, mayShow } from './ai-issues-events.ts';
import { deploymentEvent, violationEvents } from './ai-issues-v2.ts';
import { eventFilters, eventFilterSpecs } from './alert-params.ts';
import { deploymentV2Id } from '../common/deployment-id.ts';
import { alertV2Id } from './alert-id.ts';
import { accountDeploymentEventsQuery } from '../common/deployment-queries.ts';

const note = fieldNotesUnder('recent_events[]');
const HOUR_MS = 3_600_000;

const parameters = defineParams({
  ...eventFilterSpecs,
  page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header.' }),
});

const DeploymentRow = z.object({
  timestamp: z.number(),
  changeTrackingId: z.string().nullable().optional(),
  deploymentId: z.string().nullable().optional(),
  version: z.union([z.string(), z.number()]).nullable().optional(),
  appId: z.number().nullable().optional(),
  'entity.guid': z.string().nullable().optional(),
});
type DeploymentRow = z.infer<typeof DeploymentRow>;

/** The earliest of some times (`none` for none). */
const oldest = (times: readonly number[], none: number): number => times.reduce((min, at) => Math.min(min, at), times.length > 0 ? Number.POSITIVE_INFINITY : none);

/** NRQL's LIMIT MAX: a full answer may have left older deployments out. */
const NRQL_MAX_ROWS = 5000;

/**
 * The APM app a deployment row is on: its numeric appId (legacy Deployment rows), else the app
 * its entity.guid names (ChangeTrackingEvent rows carry no appId), only an APM application of
 * the caller's account; else none (the row is not listed).
 */
function appIdOf(row: DeploymentRow, accountId: number): number | undefined {
  if (typeof row.appId === 'number' && Number.isSafeInteger(row.appId) && row.appId > 0) return row.appId;
  const decoded = row['entity.guid'] ? decodeEntityGuid(row['entity.guid']) : undefined;
  if (!decoded || decoded.accountId !== accountId || decoded.domain !== 'APM' || decoded.type !== 'APPLICATION') return undefined;
  return v2IdOf(decoded.domainId, 'derived');
}
const DeploymentsAnswer = z.object({ actor: z.object({ account: z.object({ nrql: NrqlResults }).nullable() }) });

/** How long a walk's read is kept for its later pages (per caller and account: ctx.cache). */
const KEPT_EVENTS_MS = 30_000;

/** What one read of the sources gives, before filters, paging and the gateway's own recent writes. */
interface EventsRead {
  window: { startTime: number; endTime: number };
  events: V2Body[];
  /** Events before it are not all known (a source was cut at its bound); -Infinity: none cut. */
  cutoff: number;
  /** Ids of the deployments NRQL listed. */
  listedDeployments: number[];
}

/** The account's deployment rows of the window, when AlertEventsFirst did not already read them. */
async function readDeploymentRows(ctx: CallerScope, window: EventsRead['window']): Promise<unknown[]> {
  const query = accountDeploymentEventsQuery({ since: window.startTime, until: window.endTime });
  const answer = parseAnswer(DeploymentsAnswer, await ctx.read('AlertEventDeployments', { accountId: ctx.accountId, events: query }), 'AlertEventDeployments');
  const results = answer.actor.account?.nrql?.results;
  if (!results) throw new UpstreamError('upstream_failure', 'AlertEventDeployments: no NRQL results');
  return results;
}

/**
 * Violation opens and closes (incidents, their issues and policies) and deployments of the last
 * 30 days, as the filters need them: one AlertEventDeployments for deployments alone, else the
 * sliced reads of shared/ai-issues-slices.ts (the deployments query in their first request).
 */
async function readEvents(ctx: CallerScope, sources: { violations: boolean; deployments: boolean }): Promise<EventsRead> {
  const window = { startTime: ctx.now - EVENTS_WINDOW_MS, endTime: ctx.now + CLOCK_SKEW_MS };
  const events: V2Body[] = [];
  let cutoff = Number.NEGATIVE_INFINITY;
  let deploymentRows: unknown[] | undefined;
  if (sources.violations) {
    const query = sources.deployments ? accountDeploymentEventsQuery({ since: window.startTime, until: window.endTime }) : null;
    // An issue opens at most minutes before its first incident.
    const read = await readEventSources(ctx, window, { startTime: window.startTime - HOUR_MS, endTime: window.endTime }, query);
    if (!read.incidents.complete) cutoff = Math.max(cutoff, read.incidents.cutoff);
    const issueOf = new Map(read.issues.items.flatMap((issue) => (issue.incidentIds ?? []).map((id) => [id, alertV2Id(issue.issueId)] as const)));
    // A cut list: an incident older than the cut is left out whole (its close would otherwise show without its open).
    const { complete, cutoff: whole } = read.incidents;
    for (const incident of read.incidents.items) {
      if (complete || incident.createdAt >= whole) events.push(...violationEvents(incident, issueOf.get(incident.incidentId) ?? null, read.policies));
    }
    deploymentRows = read.deployments;
  }
  const listedDeployments: number[] = [];
  if (sources.deployments) {
    const results = deploymentRows ?? (await readDeploymentRows(ctx, window));
    const rows = results.flatMap((row) => {
      const parsed = checkedParse(DeploymentRow, row);
      return parsed.success ? [parsed.data] : [];
    });
    if (results.length >= NRQL_MAX_ROWS && rows.length > 0) cutoff = Math.max(cutoff, oldest(rows.map((row) => row.timestamp), window.endTime) + 1); // its oldest millisecond may be only partly listed
    for (const row of rows) {
      const marker = row.changeTrackingId ?? row.deploymentId;
      const appId = appIdOf(row, ctx.accountId);
      if (!marker || appId === undefined) continue;
      const version = row.version;
      listedDeployments.push(deploymentV2Id(marker));
      events.push(deploymentEvent(deploymentV2Id(marker), appId, version === null || version === undefined ? '' : String(version), row.timestamp));
    }
  }
  return { window, events, cutoff, listedDeployments };
}

/** GET /v2/alerts_events.{json,xml}: violation opens and closes and deployments (routes-next.md §5.3). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-events.list',
  method: 'GET',
  route: '/v2/alerts_events.{format}',
  v2Keys: {
    wrapper: 'recent_events',
    list: true,
    // SHAPES: "Any of these may be missing"; SW lists them all. The ones every event has are required.
    source: 'SHAPES §9 (E); SW RecentEventResponseType; CG pkg/alerts/events_test.go',
    paths: {
      id: 'int',
      event_type: 'string',
      product: 'string',
      entity_type: 'string',
      entity_group_id: 'int',
      entity_id: 'int',
      priority: 'string',
      description: 'string',
      timestamp: 'epoch-ms',
      'incident_id?': 'int',
    },
  },
  operation: 'AlertEventsFirst',
  summary:
    'Recent events: VIOLATION_OPEN/CLOSE from aiIssues.incidents (issue ids from aiIssues.issues), DEPLOYMENT from NRQL over Deployment and ChangeTrackingEvent; 30 days read in time slices, at most 3 NerdGraph requests, kept 30 s for the later pages of a walk; paged locally',
  fidelity: 'approximate',
  parameters,
  fields: [
    note('id', 'approximate', 'violations: alertV2Id(incidentId|open or |close); deployments: deploymentV2Id(changeTrackingId or deploymentId)'),
    note('event_type', 'approximate', 'VIOLATION_OPEN, VIOLATION_CLOSE or DEPLOYMENT; NOTIFICATION and INSTRUMENTATION are never emitted'),
    note('product / entity_type / entity_group_id / entity_id', 'approximate', 'decoded from the incident entityGuids; APM/Application/appId for deployments (the app id decoded from entity.guid on change-tracking rows)'),
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
    { description: 'Only the last 30 days are listed (v2\'s own span for recent events is unconfirmed).' },
    {
      description:
        'The 30 days are read in at most 3 NerdGraph requests, each holding up to 16 time slices of incidents and 16 of issues (one NerdGraph page each; later requests cut what overflowed a page into narrower slices, newest first), and at most 5,000 deployments. When either bound cuts the list, it ends at the oldest event both sources still cover (no rel="last", no rel="next" past the last reachable page, a page beyond it is a 422 saying so); close events of violations opened before that point are missing.',
    },
    { description: 'incident_id is null for a violation whose issue those 3 requests did not reach.' },
    {
      description:
        'Policy names come from a first page of the account\'s policies and, in the later requests, those named but not on it; a policy named only by violations of the last request is read after it (one more request, or more past 200 policies): an account with more than a page of policies can cost a fourth call.',
    },
    {
      description:
        'Page 1 is always read from NerdGraph; what it read (the merged events of the 30 days, per caller, account and set of sources the filters need) is kept 30 s, at most as many events as the gateway\'s shared bound allows (least recently used go first), and pages 2..N within that time are served from it: a walk sees one snapshot, up to 30 s old, rather than re-reading 30 days per page. A close made through this gateway forgets it at once for the caller that closed it, on the replica that served the close; other callers, other replicas and other changes see it on page 1, or once the 30 s pass. Behind a load balancer a walk\'s pages may come from several replicas, each with its own kept read.',
    },
    { description: 'Deployments listed are those of APM applications of the account (by appId, or by the entity.guid of change-tracking rows).' },
    { description: 'NRQL shows a deployment only once ingested: those recorded through the gateway (any replica) are listed at once, for at most 10 minutes until NRQL shows them (src/state/recent-writes.ts); others once ingested.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...SLICE_ASSUMPTIONS,
    'Page size 200 (UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); newest first, ties by id.',
    'Products in upper case as the 2016 swagger lists them; filter values compare case-insensitively; a value outside the lists is 422.',
    'filter[event_type]=VIOLATION matches both VIOLATION_OPEN and VIOLATION_CLOSE.',
    'Windows end a minute after now (clock skew).',
    'A repeated NerdGraph cursor is a 502 (nothing partial is shown).',
  ],
  async load(ctx) {
    const filters = eventFilters(ctx.params);
    const { page } = parameters.parse(ctx.params);
    const sources = { violations: mayShow(filters, 'VIOLATION_OPEN') || mayShow(filters, 'VIOLATION_CLOSE'), deployments: mayShow(filters, 'DEPLOYMENT') };
    // Page 1 starts a walk: always read. Later pages reuse what the walk's first read kept.
    const key = keptEventsKey(sources);
    const kept = page > 1 ? ctx.cache.get<EventsRead>(key) : undefined;
    const read = kept ?? (await readEvents(ctx, sources));
    if (!kept) ctx.cache.set(key, { value: read, ttlMs: KEPT_EVENTS_MS, size: read.events.length });
    const events = [...read.events];
    if (sources.deployments) {
      // Read-your-writes: deployments written here that NRQL does not show yet (ingest lag).
      // Dropping the shown ones is left to the deployments list, whose read is per app.
      const listed = new Set(read.listedDeployments);
      for (const deployment of await ctx.recent.deployments(ctx.accountId)) {
        if (listed.has(deployment.id) || deployment.timestamp < read.window.startTime || deployment.timestamp >= read.window.endTime) continue;
        events.push(deploymentEvent(deployment.id, deployment.appId, deployment.revision, deployment.timestamp));
      }
    }
    const { cutoff } = read;
    const truncated = cutoff > Number.NEGATIVE_INFINITY;
    const since = truncated ? new Date(Math.min(Math.max(cutoff, 0), read.window.endTime)).toISOString() : '';
    const shown = events.filter((event) => Number(event.timestamp) >= cutoff && eventShown(filters, event)).sort(byEventTime);
    const { items, link } = pageOfWalk(shown, page, AI_ISSUES_PAGE_SIZE, ctx.publicUrl, { complete: !truncated, truncated }, {
      withLast: true,
      beyondTitle: `Invalid parameter page: only the events since ${since} can be read here (${MAX_SLICE_REQUESTS} NerdGraph requests of ${SLICE_SLOTS} slices of violations, ${NRQL_MAX_ROWS} deployments); narrow the list with filter[event_type]`,
    });
    return withLink({ recent_events: items }, link);
  },
});
