import { z } from 'zod';
import { type CallerScope, NrqlResults, parseAnswer, repeatedCursor, UpstreamError } from '../../src/mapping-api.ts';
import { Cursor, IncidentItem, IssueItem, PolicyItem, type PolicyFacts, readPolicies, type TimeWindow, type UpstreamIncident, type UpstreamIssue } from './ai-issues.ts';
import { upstreamNumber } from './ai-issues-v2.ts';

/**
 * alerts_events', alerts_incidents' and alerts_violations' reads in a bounded number of requests:
 * the account's incidents and/or issues of a window, the policies they name,
 * (alerts_events) its deployment markers and (alerts_violations) its NRQL conditions' names, one
 * cursor page of them per request. A cursor walk reads
 * one NerdGraph page per request, one after the other; here one request reads up to SLICE_SLOTS
 * pages of each list at once, each over its own slice of the window (aliased fields of
 * mappings/alerts-issues/fragments/AlertEventSlices.graphql or, for alerts_violations, AlertViolationSlices.graphql,
 * which filter by createdAt as the cursor walk's window does).
 *
 * The first request cuts the window into SLICE_SLOTS equal slices. A slice whose page came back
 * full (a next cursor) has the rest of its span left, below the oldest item read; its page tells
 * how dense that span is, so the next request cuts the rest into slices that should each fit in a
 * page (PAGE_SHARE of one, for estimates off by a third), newest first, the last slot it has
 * taking all that is left, and continues a slice that should fit in one page by its cursor
 * (exactly where it stopped). At most MAX_SLICE_REQUESTS
 * requests: what is still unread then cuts the list (`cutoff`: everything created at or after it
 * was read; spans are read newest first, so the cut falls as low as the requests reached).
 * Slices share their edges (NerdGraph's window includes both): items are kept once, by id.
 */

/** Slices per list per request: the slots of mappings/alerts-issues/fragments/AlertEventSlices.graphql (and AlertViolationSlices.graphql). */
export const SLICE_SLOTS = 16;
/** Requests per read: no alerts_events, alerts_incidents or alerts_violations page costs more (at most 3 NerdGraph calls). */
export const MAX_SLICE_REQUESTS = 3;
/** A narrower slice aims at this share of a page, so a density estimate off by a third still fits. */
const PAGE_SHARE = 2 / 3;

const slotNames = (prefix: 'v' | 'u'): string[] => Array.from({ length: SLICE_SLOTS }, (_, i) => `${prefix}${i}`);
const INCIDENT_SLOTS = slotNames('v');
const ISSUE_SLOTS = slotNames('u');

const IncidentPage = z.object({ nextCursor: Cursor, incidents: z.array(IncidentItem) });
const IssuePage = z.object({ nextCursor: Cursor, issues: z.array(IssueItem) });
const PoliciesPage = z.object({ nextCursor: Cursor, policies: z.array(PolicyItem) }).nullable().optional();
const ConditionsPage = z.object({ nextCursor: Cursor, nrqlConditions: z.array(z.object({ id: z.string(), name: z.string() })) }).nullable().optional();
const SlicesAnswer = z.object({
  actor: z.object({
    account: z
      .object({
        aiIssues: z
          .object({
            ...Object.fromEntries(INCIDENT_SLOTS.map((slot) => [slot, IncidentPage.nullable().optional()])),
            ...Object.fromEntries(ISSUE_SLOTS.map((slot) => [slot, IssuePage.nullable().optional()])),
          })
          .nullable()
          .optional(),
        alerts: z.object({ allPolicies: PoliciesPage, namedPolicies: PoliciesPage, conditions: ConditionsPage }).nullable().optional(),
        nrql: NrqlResults.optional(),
      })
      .nullable(),
  }),
});
type SlicesAnswer = z.infer<typeof SlicesAnswer>;

interface SlicePage<T> {
  items: T[];
  nextCursor: string | null | undefined;
}
// The slots' values were parsed by SlicesAnswer (v* as IncidentPage, u* as IssuePage).
const incidentPageOf = (value: unknown): SlicePage<UpstreamIncident> | undefined => {
  const page = value as z.infer<typeof IncidentPage> | null | undefined;
  return page ? { items: page.incidents, nextCursor: page.nextCursor } : undefined;
};
const issuePageOf = (value: unknown): SlicePage<UpstreamIssue> | undefined => {
  const page = value as z.infer<typeof IssuePage> | null | undefined;
  return page ? { items: page.issues, nextCursor: page.nextCursor } : undefined;
};

/** What is left to read of one slice. */
interface Span {
  start: number;
  /** Everything created after `top` was read (the top of the window before any read). */
  top: number;
  /** The next cursor page of the window [start, cursorEnd], when the slice was read once. */
  cursor: string | null;
  cursorEnd: number;
  /** Items per ms where the page read lies, and that page's length; null before any read. */
  density: number | null;
  pageLength: number;
  /** Cursors NerdGraph gave for this slice: one given again would loop. */
  seen: ReadonlySet<string>;
}

/** One aliased field of a request: a window and, to continue a slice, its cursor. */
interface SliceTask {
  start: number;
  end: number;
  cursor: string | null;
  seen: ReadonlySet<string>;
}

const unread = (window: TimeWindow): Span => ({ start: window.startTime, top: window.endTime, cursor: null, cursorEnd: window.endTime, density: null, pageLength: 0, seen: new Set() });

/** The first request's slices: the window in SLICE_SLOTS equal parts. */
function equalSpans(window: TimeWindow): Span[] {
  const width = (window.endTime - window.startTime) / SLICE_SLOTS;
  if (width < 1) return [unread(window)];
  return Array.from({ length: SLICE_SLOTS }, (_, i) =>
    unread({ startTime: Math.floor(window.startTime + i * width), endTime: i === SLICE_SLOTS - 1 ? window.endTime : Math.ceil(window.startTime + (i + 1) * width) }),
  );
}

/** This request's slices of one list, newest first, and the spans left for later. */
function planSlices(pending: readonly Span[]): { tasks: SliceTask[]; later: Span[] } {
  const tasks: SliceTask[] = [];
  const later: Span[] = [];
  for (const span of [...pending].sort((a, b) => b.top - a.top)) {
    const free = SLICE_SLOTS - tasks.length;
    if (free === 0) {
      later.push(span);
      continue;
    }
    const width = span.density === null || span.density === 0 ? Number.POSITIVE_INFINITY : (span.pageLength * PAGE_SHARE) / span.density;
    const needed = Number.isFinite(width) ? Math.ceil((span.top - span.start) / width) : 1;
    // One page's worth left, or no way to cut finer (a page of items all created in one ms): its cursor.
    if (needed <= 1 || width < 1) {
      tasks.push(span.cursor !== null ? { start: span.start, end: span.cursorEnd, cursor: span.cursor, seen: span.seen } : { start: span.start, end: span.top, cursor: null, seen: span.seen });
      continue;
    }
    // The last slice taken holds all the rest: if it overflows, its page still reads on from the
    // slices above it and tells how dense the rest is; if the rest is empty, the span is done.
    const taken = Math.min(needed, free);
    for (let i = 0; i < taken; i++) {
      const end = Math.ceil(span.top - i * width);
      const start = i === taken - 1 ? span.start : Math.max(span.start, Math.floor(span.top - (i + 1) * width));
      tasks.push({ start, end, cursor: null, seen: new Set() });
    }
  }
  return { tasks, later };
}

/** Is a page's order newest first, every item inside its slice's window (both bounds included)? */
function newestFirstWithin(items: ReadonlyArray<{ createdAt: number }>, task: SliceTask): boolean {
  let previous = Number.POSITIVE_INFINITY;
  for (const { createdAt } of items) {
    if (createdAt > previous || createdAt < task.start || createdAt > task.end) return false;
    previous = createdAt;
  }
  return true;
}

/**
 * What the slicing takes from NerdGraph's aiIssues lists (UNCONFIRMED; no probe: a
 * page out of order or outside its window is walked by its cursor, so the answer is right either way; the mappings list them,
 * and a page seen out of order or outside its window falls back to its cursor).
 */
export const SLICE_ASSUMPTIONS: readonly string[] = [
  'aiIssues incidents and issues pages list their timeWindow newest first (UNCONFIRMED; no probe: a page seen otherwise is walked by its cursor, so only the cost depends on it): a full page tells that everything newer than its oldest item was read; a page seen otherwise is walked by its cursor instead.',
  'aiIssues timeWindow filters on createdAt with both bounds included (UNCONFIRMED; no probe: items are kept once by id, so the answer is the same either way): slices share their edge milliseconds and items are kept once, by id.',
];

/** A list read in slices: the items (once each) and where the list is whole from. */
export interface Sliced<T> {
  items: T[];
  /** Everything was read. */
  complete: boolean;
  /** When not complete: every item created at or after this was read. */
  cutoff: number;
}

interface SlicedList<T> {
  byId: Map<string, T>;
  pending: Span[];
}

/** One list's pages of one answer: items kept by id, overflowing slices left pending. */
function takePages<T extends { createdAt: number }>(
  list: SlicedList<T>,
  tasks: readonly SliceTask[],
  pageOf: (slot: number) => SlicePage<T> | undefined,
  idOf: (item: T) => string,
  operation: string,
): void {
  tasks.forEach((task, slot) => {
    const page = pageOf(slot);
    if (!page) throw new UpstreamError('upstream_failure', `${operation}: no page for a slice`);
    for (const item of page.items) if (!list.byId.has(idOf(item))) list.byId.set(idOf(item), item);
    const next = page.nextCursor;
    if (!next) return;
    if (next === task.cursor || task.seen.has(next)) throw repeatedCursor(operation);
    // Re-slicing below the page's oldest item holds only if the page read its window newest
    // first (SLICE_ASSUMPTIONS). A page out of that order, or with an item outside its window,
    // is continued by its cursor alone, and nothing of its span counts as read until it ends.
    const trusted = newestFirstWithin(page.items, task);
    const oldest = page.items.reduce((min, item) => Math.min(min, item.createdAt), task.end);
    const newest = page.items.reduce((max, item) => Math.max(max, item.createdAt), oldest);
    list.pending.push({
      start: task.start,
      top: trusted ? Math.max(task.start, oldest) : task.end,
      cursor: next,
      cursorEnd: task.end,
      // Over the span the page's items cover (not the empty time above them): never an underestimate.
      density: trusted && page.items.length > 0 ? page.items.length / Math.max(newest - oldest, 1) : null,
      pageLength: page.items.length,
      seen: new Set([...task.seen, next]),
    });
  });
}

const finished = <T>(list: SlicedList<T>): Sliced<T> => ({
  items: [...list.byId.values()],
  complete: list.pending.length === 0,
  // A span's top millisecond may be only partly read (its page ended inside it): the list is
  // whole from the millisecond after it (same-millisecond incidents).
  cutoff: list.pending.reduce((max, span) => Math.max(max, span.top + 1), Number.NEGATIVE_INFINITY),
});

/** The variables of one list's slots: a window and cursor per slice used, the rest left out. */
function slotVariables(prefix: 'v' | 'u', tasks: readonly SliceTask[]): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (let slot = 0; slot < SLICE_SLOTS; slot++) {
    const task = tasks[slot];
    variables[`${prefix}${slot}`] = task !== undefined;
    variables[`${prefix}w${slot}`] = task ? { startTime: task.start, endTime: task.end } : null;
    variables[`${prefix}c${slot}`] = task?.cursor ?? null;
  }
  return variables;
}

export interface SlicedSources {
  incidents: Sliced<UpstreamIncident>;
  issues: Sliced<UpstreamIssue>;
  /** The policies the items named (incidents' policyIds, else issues' first policy). */
  policies: Map<number, PolicyFacts>;
  /** The deployment query's rows, when one was given. */
  deployments: unknown[] | undefined;
  /** NRQL condition names by id, when asked for: the pages the requests reached (one each). */
  conditions: Map<number, string>;
}

export interface SliceReads {
  /** The incidents' window; none: no incidents read. */
  incidents: TimeWindow | null;
  /** The incidents' filter (AlertViolationSlices only: only_open's states). */
  incidentFilter?: Record<string, unknown> | null;
  /** Read the NRQL conditions' names, one cursor page per request (AlertViolationSlices only). */
  conditions?: boolean;
  /** The issues' window and filter; none: no issues read. */
  issues: { window: TimeWindow; filter: Record<string, unknown> | null } | null;
  /** Whose policies to name: the incidents' (alerts_events) or the issues' (alerts_incidents). */
  policiesOf: 'incidents' | 'issues';
  /** Run in the first request (AlertEventsFirst). */
  deploymentsQuery: string | null;
  /** The document of the requests that run no NRQL. */
  operation: 'AlertSlices' | 'AlertViolationSlices';
}

type Reader = Pick<CallerScope, 'read' | 'accountId'>;

function addPolicies(policies: Map<number, PolicyFacts>, page: z.infer<typeof PoliciesPage>): void {
  for (const policy of page?.policies ?? []) policies.set(Number(policy.id), { name: policy.name, incidentPreference: policy.incidentPreference });
}

/**
 * The incidents and issues asked for, in at most MAX_SLICE_REQUESTS requests; the first also runs
 * `deploymentsQuery` (AlertEventsFirst) when one is given and reads a first page of the account's
 * policies, later ones the policies named but not yet known. Policies still unknown at the end
 * (an account with more than a page of them) are read by id after.
 */
export async function readSlices(ctx: Reader, reads: SliceReads): Promise<SlicedSources> {
  const incidents: SlicedList<UpstreamIncident> = { byId: new Map(), pending: reads.incidents ? equalSpans(reads.incidents) : [] };
  const issues: SlicedList<UpstreamIssue> = { byId: new Map(), pending: reads.issues ? equalSpans(reads.issues.window) : [] };
  const policies = new Map<number, PolicyFacts>();
  const namedIds = (): number[] =>
    reads.policiesOf === 'incidents'
      ? [...incidents.byId.values()].flatMap((item) => upstreamNumber(item.policyIds) ?? [])
      : [...issues.byId.values()].flatMap((item) => item.policyIds?.slice(0, 1) ?? []);
  const named = (): string[] => [...new Set(namedIds())].filter((id) => !policies.has(id)).map(String);
  let deployments: unknown[] | undefined;
  const conditions = new Map<number, string>();
  // The conditions' cursor walk: null before the first page, undefined once read whole (or not asked for).
  let conditionsCursor: string | null | undefined = reads.conditions && reads.operation === 'AlertViolationSlices' ? null : undefined;
  const seenConditionCursors = new Set<string>();
  for (let request = 0; request < MAX_SLICE_REQUESTS && (incidents.pending.length > 0 || issues.pending.length > 0 || conditionsCursor !== undefined); request++) {
    const first = request === 0;
    const operation = first && reads.deploymentsQuery !== null ? 'AlertEventsFirst' : reads.operation;
    const incidentPlan = planSlices(incidents.pending);
    const issuePlan = planSlices(issues.pending);
    const policyIds = first ? [] : named();
    // AlertViolationSlices declares no issue slots; the other documents no conditions.
    const violations = operation === 'AlertViolationSlices';
    const answer: SlicesAnswer = parseAnswer(
      SlicesAnswer,
      await ctx.read(operation, {
        accountId: ctx.accountId,
        ...(operation === 'AlertEventsFirst' ? { events: reads.deploymentsQuery } : {}),
        withAllPolicies: first,
        policiesCursor: null,
        withNamedPolicies: policyIds.length > 0,
        policyIds: policyIds.length > 0 ? policyIds : null,
        ...slotVariables('v', incidentPlan.tasks),
        ...(violations
          ? { incidentFilter: reads.incidentFilter ?? null, withConditions: conditionsCursor !== undefined, conditionsCursor: conditionsCursor ?? null }
          : { issueFilter: reads.issues?.filter ?? null, ...slotVariables('u', issuePlan.tasks) }),
      }),
      operation,
    );
    const account = answer.actor.account;
    if (!account?.aiIssues) throw new UpstreamError('upstream_failure', `${operation}: no account in the answer`);
    const slices = account.aiIssues as Record<string, unknown>;
    incidents.pending = incidentPlan.later;
    issues.pending = issuePlan.later;
    takePages(incidents, incidentPlan.tasks, (slot) => incidentPageOf(slices[`v${slot}`]), (item) => item.incidentId, operation);
    takePages(issues, issuePlan.tasks, (slot) => issuePageOf(slices[`u${slot}`]), (item) => item.issueId, operation);
    addPolicies(policies, account.alerts?.allPolicies);
    addPolicies(policies, account.alerts?.namedPolicies);
    if (conditionsCursor !== undefined) conditionsCursor = nextConditions(conditions, account.alerts?.conditions, seenConditionCursors, operation);
    if (operation === 'AlertEventsFirst') {
      const results = account.nrql?.results;
      if (!results) throw new UpstreamError('upstream_failure', `${operation}: no NRQL results`);
      deployments = results;
    }
  }
  const missing = named().map(Number);
  if (missing.length > 0) for (const [id, facts] of await readPolicies(ctx, new Set(missing))) policies.set(id, facts);
  return { incidents: finished(incidents), issues: finished(issues), policies, deployments, conditions };
}

/** Takes a page of NRQL conditions' names; the cursor of the next page, or undefined when none is left. */
function nextConditions(names: Map<number, string>, page: z.infer<typeof ConditionsPage>, seen: Set<string>, operation: string): string | undefined {
  if (!page) throw new UpstreamError('upstream_failure', `${operation}: no NRQL conditions in the answer`);
  for (const condition of page.nrqlConditions) names.set(Number(condition.id), condition.name);
  const next = page.nextCursor;
  if (!next) return undefined;
  if (seen.has(next)) throw repeatedCursor(operation);
  seen.add(next);
  return next;
}

/** alerts_events' sources: the incidents of `window`, the issues of `issuesWindow`, the incidents' policies. */
export const readEventSources = (ctx: Reader, window: TimeWindow, issuesWindow: TimeWindow, deploymentsQuery: string | null): Promise<SlicedSources> =>
  readSlices(ctx, { incidents: window, issues: { window: issuesWindow, filter: null }, policiesOf: 'incidents', deploymentsQuery, operation: 'AlertSlices' });
