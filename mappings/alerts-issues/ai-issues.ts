import { z } from 'zod';
import { defineWriteMapping, type CallerScope, type OperationContext, type WriteMapping, type WriteSample, parseAnswer, UpstreamError, V2Error, notFound, writeRefused, NO_PARAMS, v2IdOf, XML_ASSUMPTION, walkCursors, type WalkOptions, type Walked } from '../../src/mapping-api.ts';
import { AlertIncidentTitles } from './alert-titles.ts';
import { alertV2Id } from './alert-id.ts';
import { IssueItem, policyIdsOf, v2Incident, type PolicyFacts, type UpstreamIssue } from './ai-issues-v2.ts';

export { IncidentItem, IssueItem, type PolicyFacts, type UpstreamIncident, type UpstreamIssue } from './ai-issues-v2.ts';

/**
 * REST v2's retired alert namespaces over NerdGraph's AI issues (routes-next.md §5): a REST
 * "incident" is an issue, a REST "violation" is an incident. Shared by alerts_incidents (list,
 * acknowledge, close), alerts_violations and alerts_events: the cursor walks, the policy and
 * condition names read beside them, the violations' parameters, and acknowledge and close.
 * The v2 objects are in ai-issues-v2.ts, alerts_events' filters in ai-issues-events.ts, and
 * their paging in src/routes/paging.ts (pageOfWalk).
 */
const DAY_MS = 86_400_000;

/** v2 pages of 200 (rest-v2.md §3.9: other endpoints UNCONFIRMED, assume 200; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing). */
export const AI_ISSUES_PAGE_SIZE = 200;
/**
 * How far back a list reaches when the request names no start: NerdGraph defaults to 24 hours,
 * v2 listed the whole history. A choice, documented as a gap.
 */
export const LIST_WINDOW_MS = 30 * DAY_MS;
/**
 * How far back only_open lists and acknowledge/close look: open incidents can be older than
 * LIST_WINDOW_MS, and the open-state filter keeps the walk small. NerdGraph documents no
 * retention for aiIssues (nerdgraph.md §8); 90 days is a choice, documented as a gap.
 */
export const OPEN_WINDOW_MS = 90 * DAY_MS;
/** The ctx.cache key of alerts_events' read for the sources its filters need (mappings/alerts-issues/events.list.ts). */
export const keptEventsKey = (sources: { violations: boolean; deployments: boolean }): string => `alerts-events/${sources.violations}/${sources.deployments}`;
/** The ctx.cache key of alerts_incidents' read (mappings/alerts-issues/incidents.list.ts). */
export const keptIncidentsKey = (onlyOpen: boolean): string => `alerts-incidents/${onlyOpen}`;
/** The ctx.cache key of alerts_violations' read (mappings/alerts-issues/violations.list.ts; the dates are checked in the value). */
export const keptViolationsKey = (onlyOpen: boolean): string => `alerts-violations/${onlyOpen}`;
/** What a close makes stale: the kept reads that show closes. */
const KEPT_KEYS_A_CLOSE_CHANGES = [
  keptEventsKey({ violations: true, deployments: true }),
  keptEventsKey({ violations: true, deployments: false }),
  keptIncidentsKey(true),
  keptIncidentsKey(false),
  keptViolationsKey(true),
  keptViolationsKey(false),
];

/** Windows end this long after now: what NerdGraph's clock opened just ahead of ours is listed. */
export const CLOCK_SKEW_MS = 60_000;
/** At most this many NerdGraph pages per walk (each of NerdGraph's page size). */
export const MAX_UPSTREAM_PAGES = 50;

export const Cursor = z.string().nullable().optional();

/** One alert policy as AlertPolicies and alerts_events' requests read it. */
export const PolicyItem = z.object({ id: z.string(), name: z.string(), incidentPreference: z.string() });

const accountOf = <T extends z.ZodTypeAny>(inner: T) => z.object({ actor: z.object({ account: inner.nullable() }) });

const IssuesAnswer = accountOf(z.object({ aiIssues: z.object({ issues: z.object({ nextCursor: Cursor, issues: z.array(IssueItem) }).nullable() }).nullable() }));
const PoliciesAnswer = accountOf(
  z.object({
    alerts: z
      .object({
        policiesSearch: z
          .object({ nextCursor: Cursor, policies: z.array(PolicyItem) })
          .nullable(),
      })
      .nullable(),
  }),
);
type Reader = Pick<CallerScope, 'read' | 'accountId'>;

/** A walk's options; the page bound defaults to MAX_UPSTREAM_PAGES. */
export type AlertWalkOptions<T> = Omit<WalkOptions<T>, 'maxPages'> & { maxPages?: number };

export type { Walked };

/** The alerts lists' walk: every read names the caller's account, at most MAX_UPSTREAM_PAGES requests unless told. */
function walk<T>(
  ctx: Reader,
  operation: string,
  variables: Record<string, unknown>,
  pageOf: (answer: unknown) => { items: T[]; nextCursor: string | null | undefined },
  options: AlertWalkOptions<T>,
): Promise<Walked<T>> {
  return walkCursors(ctx, operation, { ...variables, accountId: ctx.accountId }, pageOf, { ...options, maxPages: options.maxPages ?? MAX_UPSTREAM_PAGES });
}

const missing = (operation: string): UpstreamError => new UpstreamError('upstream_failure', `${operation}: no account in the answer`);

export function walkIssues(ctx: Reader, filter: Record<string, unknown> | null, window: TimeWindow, options: AlertWalkOptions<UpstreamIssue>): Promise<Walked<UpstreamIssue>> {
  return walk(ctx, 'AlertIncidents', { filter, timeWindow: window }, (answer) => {
    const data = parseAnswer(IssuesAnswer, answer, 'AlertIncidents').actor.account?.aiIssues?.issues;
    if (!data) throw missing('AlertIncidents');
    return { items: data.issues, nextCursor: data.nextCursor };
  }, options);
}

/** The named policies' names and incident preferences (one request per 200 policies). */
export async function readPolicies(ctx: Reader, ids: ReadonlySet<number>): Promise<Map<number, PolicyFacts>> {
  const found = new Map<number, PolicyFacts>();
  if (ids.size === 0) return found;
  const { items } = await walk(ctx, 'AlertPolicies', { ids: [...ids].map(String) }, (answer) => {
    const data = parseAnswer(PoliciesAnswer, answer, 'AlertPolicies').actor.account?.alerts?.policiesSearch;
    if (!data) throw missing('AlertPolicies');
    return { items: data.policies, nextCursor: data.nextCursor };
  }, { enough: Number.POSITIVE_INFINITY });
  for (const policy of items) found.set(Number(policy.id), { name: policy.name, incidentPreference: policy.incidentPreference });
  return found;
}

// ---------------------------------------------------------------------------------------------
// Parameters

export interface TimeWindow {
  startTime: number;
  endTime: number;
}

// The window's parameters: mappings/alerts-issues/alert-params.ts.

// ---------------------------------------------------------------------------------------------
// Acknowledge and close

/** How far back acknowledge and close look for the incident a v2 id names. */
export const ACTION_WINDOW_MS = OPEN_WINDOW_MS;

/**
 * The issue a v2 incident id names: the derived ids of the account's issues opened in the last
 * ACTION_WINDOW_MS (at most MAX_UPSTREAM_PAGES pages, no further than the page holding it), else 404.
 */
export async function findIssue(ctx: OperationContext, rawId: string | undefined): Promise<UpstreamIssue> {
  const id = rawId !== undefined ? v2IdOf(rawId, 'derived') : undefined;
  if (id === undefined || !Number.isSafeInteger(id)) throw notFound(AlertIncidentTitles.incidentNotFound);
  const named = (candidate: UpstreamIssue): boolean => alertV2Id(candidate.issueId) === id;
  const window = { startTime: ctx.now - ACTION_WINDOW_MS, endTime: ctx.now + CLOCK_SKEW_MS };
  const { items } = await walkIssues(ctx, null, window, { enough: Number.POSITIVE_INFINITY, stopAt: named });
  const issue = items.find(named);
  if (!issue) throw notFound(AlertIncidentTitles.incidentNotFound);
  return issue;
}

/** The issue as NerdGraph has it now, by its NerdGraph id (the read-back after a mutation). */
export async function rereadIssue(ctx: OperationContext, issueId: string, createdAt: number): Promise<UpstreamIssue> {
  const { items } = await walkIssues(ctx, { ids: [issueId] }, { startTime: createdAt, endTime: Math.max(ctx.now, createdAt) + CLOCK_SKEW_MS }, { enough: 1 });
  const issue = items.find((candidate) => candidate.issueId === issueId);
  if (!issue) throw new UpstreamError('upstream_failure', 'AlertIncidents: the issue was not found after the write');
  return issue;
}

const ActionPayload = z.object({
  error: z.string().nullable().optional(),
  result: z.object({ accountId: z.number(), action: z.string(), issueId: z.string() }).nullable().optional(),
});

const ACTION_OF = { aiIssuesAckIssue: 'ACK', aiIssuesResolveIssue: 'RESOLVE' } as const;

/** The mutation's own answer, checked: the account, action and issue it names must be the ones asked for. */
export function confirmedAction(payload: unknown, field: 'aiIssuesAckIssue' | 'aiIssuesResolveIssue', operation: string, issueId: string, accountId: number): void {
  const answer = parseAnswer(z.object({ [field]: ActionPayload.nullable() }), payload, operation)[field] as z.infer<typeof ActionPayload> | null;
  // A stated refusal with no result: NerdGraph says it did nothing.
  if (answer?.error && !answer.result) throw writeRefused(422, `New Relic refused the change: ${answer.error.slice(0, 200)}`);
  const result = answer?.result;
  if (!result || result.issueId !== issueId || result.accountId !== accountId || result.action !== ACTION_OF[field]) throw new UpstreamError('upstream_failure', `${operation}: no confirmation in the answer`);
}

/** What differs between PUT /v2/alerts_incidents/{id}/acknowledge and /close. */
export interface IncidentActionSpec {
  id: string;
  route: string;
  /** queries/<operation>.graphql: the mutation sent. */
  operation: string;
  /** The NerdGraph mutation field whose result confirms the action. */
  field: 'aiIssuesAckIssue' | 'aiIssuesResolveIssue';
  summary: string;
  unconfirmedTitle: string;
  sample: WriteSample;
}

/**
 * An incident action (acknowledge, close): find the issue its derived id names (422 if already
 * closed, nothing sent), one mutation, confirmed by its result, then the issue read back.
 */
export function incidentActionMapping(spec: IncidentActionSpec): WriteMapping {
  return defineWriteMapping({
    kind: 'write',
    id: spec.id,
    method: 'PUT',
    route: spec.route,
    sample: spec.sample,
    operation: spec.operation,
    summary: spec.summary,
    fidelity: 'approximate',
    successStatus: 200,
    unconfirmedTitle: spec.unconfirmedTitle,
    parameters: NO_PARAMS,
    fields: [{ field: 'incident', fidelity: 'approximate', source: `the issue read back after ${spec.field}, shaped as alerts_incidents lists it` }],
    knownGaps: [
      {
        description:
          'Incident ids are derived from NerdGraph issue UUIDs; the id is looked up among the issues opened in the last 90 days (a choice: NerdGraph documents no retention), at most 50 NerdGraph pages, stopping at the match; older or deeper ones are 404.',
      },
      { description: 'Violation ids are derived from NerdGraph incident UUIDs, not v2 ids.' },
      { description: 'When NerdGraph may have applied the change but did not confirm it, the answer is a 502/503/504 saying so; the gateway never resends.' },
    ],
    assumptions: [
      XML_ASSUMPTION,
      'No body is read (v2 took none); success is 200 with {"incident": ...}.',
      "An incident already closed is 422 'Incident already closed' (v2's answer unconfirmed); nothing is sent.",
      'The mutation counts as confirmed only when its result names the same account, action and issue; windows end a minute after now (clock skew).',
    ],
    async plan(ctx) {
      const issue = await findIssue(ctx, ctx.pathParams.id);
      if (issue.closedAt !== null && issue.closedAt !== undefined) throw new V2Error(422, AlertIncidentTitles.alreadyClosed, { kind: 'invalid_parameter' });
      return {
        variables: { accountId: ctx.accountId, issueId: issue.issueId },
        answer: async (payload) => {
          confirmedAction(payload, spec.field, spec.operation, issue.issueId, ctx.accountId);
          // A close ends an incident and its violations: walks kept before it would not show it.
          if (spec.field === 'aiIssuesResolveIssue') for (const key of KEPT_KEYS_A_CLOSE_CHANGES) ctx.cache.forget(key);
          const after = await rereadIssue(ctx, issue.issueId, issue.createdAt);
          return { incident: v2Incident(after, await readPolicies(ctx, policyIdsOf([after])), true) };
        },
      };
    },
  });
}
