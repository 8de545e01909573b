import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { SingleFlight } from '../cache/single-flight.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import type { MetricDataMapping } from './mapping.ts';
import { isWindowRelative, metricNamesQuery, timesliceDataQuery, type SelectItem } from '../upstream/nrql.ts';
import { NrqlResults, parseAnswer } from '../upstream/answer.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { renderCacheable, respondRendered, type Rendered, type V2Body } from '../v2/format.ts';
import { resolveMetricWindow, type MetricWindow } from '../v2/metric-window.ts';
import { isoSeconds } from '../v2/time.ts';
import { EntityProbe, createTargetResolver, isQueryableName, lookbackWindow, metricNamesIn, requireTarget, type TargetResolver } from './timeslice-target.ts';
import { callUpstream } from './request-signal.ts';
import type { RequestLog } from '../ops/logger.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * Serves `metrics/data.json` by docs/metric-data-rules.md: the REST window rules decide the
 * timeslices, one NRQL query faceted by metric name computes every value of every metric with
 * the formula table, and a second NRQL query in the same GraphQL request tells which names
 * the app reported lately (found with zeros) from names it never had (not found).
 *
 * That look-up (a 7-day uniques(metricTimesliceName)) reads a much longer window than the data
 * and can run past its NRQL timeout where the data query does not (issue 20, point 2). It can
 * never fail the data: an error in it leaves `known` null (the client's optionalFields), and
 * the answer degrades to "found = the names with data", noted on the request's log line. Nor
 * can it hold the data back past NerdGraph's least timeout (5 s): it has its own, and the
 * client leaves it out when the time left cannot cover that (nrql-timeout.ts); after it timed
 * out for a caller, account and target, it is left out for them for a minute
 * (LOOKUP_SKIP_MS), so polls do not wait on it again and again.
 */
/**
 * The window NerdGraph actually computed the data query over (`metadata { timeWindow }`,
 * epoch ms). Long windows snap to rollup boundaries (NRQL time range docs: a 47h59m query
 * resolves on 5-minute aggregations; rest-v2.md §4), so it can differ from SINCE/UNTIL. Absent
 * or unreadable: the requested window is taken as used.
 */
const UsedWindow = z
  .object({ timeWindow: z.object({ begin: z.number().finite(), end: z.number().finite() }).nullable().optional() })
  .nullable()
  .optional()
  .catch(undefined);

const MetricDataAnswer = z.object({
  actor: z.object({
    entity: EntityProbe,
    // Only the containers are checked: slicesOf and numberOf read each row defensively (a
    // per-row zod record cost a third of a request's CPU).
    // `known` absent: the look-up was left out (@include(if: $withKnown)).
    account: z.object({ data: z.object({ results: z.array(z.unknown()).nullable(), metadata: UsedWindow }).nullable(), known: NrqlResults.optional() }).nullable(),
  }),
});

/** Which alias holds each value of each metric in the NRQL answer. */
interface QueryPlan {
  items: SelectItem[];
  /** metric name -> [value name, alias] in answer order. */
  columns: Map<string, Array<[string, string]>>;
  /** Aliases whose formula divides by the timeslice's length ({W}): corrected to the window used. */
  windowRelative: Set<string>;
}

/** Every metric has at least this column, so a metric with data always shows up as a facet. */
const PRESENCE: SelectItem = { alias: 'v0', expression: 'count({v})' };

/** A request signature's plan and variables, built once. */
interface BuiltQuery {
  plan: QueryPlan;
  variables: Record<string, unknown>;
  /** Unique in the process, never reused: names exactly these variables (the client's variablesKey). */
  id: number;
  /** Characters held, for the cache's size bound. */
  size: number;
}

/** The name look-up's field in the metric-data documents: it may fail without failing the data. */
const KNOWN_FIELD = 'actor.account.known';

/** How long a look-up that timed out is left out for its caller, account and target. */
export const LOOKUP_SKIP_MS = 60_000;

/** Process-wide, so two runners sharing one NerdGraph client never name different variables alike. */
let nextPlanId = 0;

function memoOf<V extends object>(cache: LRUCache<string, V>, key: string, build: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = build();
    cache.set(key, value);
  }
  return value;
}

function planQuery(mapping: MetricDataMapping, names: readonly string[], requestedValues: readonly string[]): QueryPlan {
  const aliasByExpression = new Map<string, string>([[PRESENCE.expression, PRESENCE.alias]]);
  const columns = new Map<string, Array<[string, string]>>();
  for (const name of names) {
    const formulas = mapping.acceptedFormulasOf(name);
    // Own keys only: `toString` or `__proto__` must not pick up an inherited property.
    const valueNames = requestedValues.length > 0 ? requestedValues.filter((value) => Object.hasOwn(formulas, value)) : Object.keys(mapping.formulasOf(name));
    columns.set(
      name,
      valueNames.map((value) => {
        const expression = formulas[value] as string;
        let alias = aliasByExpression.get(expression);
        if (alias === undefined) {
          alias = `v${aliasByExpression.size}`;
          aliasByExpression.set(expression, alias);
        }
        return [value, alias];
      }),
    );
  }
  const windowRelative = new Set([...aliasByExpression].flatMap(([expression, alias]) => (isWindowRelative(expression) ? [alias] : [])));
  return { items: [...aliasByExpression].map(([expression, alias]) => ({ alias, expression })), columns, windowRelative };
}

interface MetricAnswer {
  probe: z.infer<typeof EntityProbe>;
  /** metric name -> timeslice index -> row of aliased numbers. */
  slices: Map<string, Array<Record<string, unknown> | undefined>>;
  known: Set<string>;
  /** Milliseconds of the window NerdGraph reports it used for the data query; null when it does not say. */
  usedWindowMs: number | null;
  /** Why the name look-up gave nothing (its error's class): found is then the names with data. */
  knownFailure?: string;
}

/** A value as v2 showed it: always a number; NRQL's null (no data, 0/0) reads 0. */
function numberOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new UpstreamError('upstream_failure', 'non-numeric NRQL value');
  return value === 0 ? 0 : value; // no -0 on the wire
}

/**
 * What a window-relative value (per minute, percent of the window: its formula divides by {W},
 * the timeslice's requested length) must be multiplied by so it divides by the time NerdGraph
 * actually summed over instead: {W} / used. Used: a TIMESERIES row's own bucket
 * (endTimeSeconds − beginTimeSeconds), or for the one summarized row the answer's
 * `metadata.timeWindow`. NerdGraph snaps long windows to rollup boundaries (a 47h59m query
 * resolves on 5-minute aggregations), so the sums cover the snapped window while {W} is the
 * asked one. 1 when the answer does not say, or says the same.
 */
export function windowCorrection(row: Record<string, unknown>, window: MetricWindow, usedWindowMs: number | null): number {
  let used: number | null = null;
  if (window.summarize) used = usedWindowMs;
  else {
    const begin = row.beginTimeSeconds;
    const end = row.endTimeSeconds;
    if (typeof begin === 'number' && typeof end === 'number' && end > begin) used = (end - begin) * 1000;
  }
  if (used === null || !Number.isFinite(used) || used <= 0) return 1;
  return window.widthMs / used;
}

/** Each timeslice's from/to text, shared by every metric of the answer. */
function sliceBounds(window: MetricWindow): Array<[string, string]> {
  return Array.from({ length: window.count }, (_, index) => {
    const start = window.start + index * window.widthMs;
    // A summarized slice ends one second before its last minute, as v2 showed it.
    const end = window.summarize ? start + window.widthMs - 1000 : start + window.widthMs;
    return [isoSeconds(start), isoSeconds(end)];
  });
}

export function createMetricDataRunner(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)) {
  // Concurrent identical requests (same caller, account, NRQL) share one upstream call.
  const flights = new SingleFlight<MetricAnswer>();
  // Callers sharing one answer also share its rendering (body text and ETag): re-serialising
  // the same timeslices and hashing them per caller was a third of metric data's CPU. Keyed by
  // everything else the body depends on: the mapping, the format, the names and values asked
  // and the window (requests sharing an answer asked the same NRQL, so these rarely differ).
  const renderings = new WeakMap<MetricAnswer, Map<string, Rendered>>();
  // Parsed upstream answer -> its filing per window (the client hands back the same object for
  // byte-identical answers, so identical answers across coalesced calls are filed once).
  const derived = new WeakMap<object, Map<string, MetricAnswer>>();
  const mappingIds = new WeakMap<MetricDataMapping, number>();
  // Request signature -> its query plan and variables (pure functions of the signature).
  // Bounded by size too: a plan holds its names three times (key and two NRQL strings), and a
  // POST may ask for hundreds of long names.
  const plans = new LRUCache<string, BuiltQuery>({
    max: 1_000,
    maxSize: 16 * 1024 * 1024,
    maxEntrySize: 4 * 1024 * 1024,
    sizeCalculation: (built, key) => key.length + built.size,
  });
  let nextMappingId = 0;
  const mappingId = (mapping: MetricDataMapping): number => {
    let id = mappingIds.get(mapping);
    if (id === undefined) {
      id = nextMappingId++;
      mappingIds.set(mapping, id);
    }
    return id;
  };

  // Caller, account and target whose name look-up timed out lately: left out for them meanwhile
  // (in this process; each replica learns it once).
  const lookupTimedOut = new LRUCache<string, true>({ max: 10_000, ttl: LOOKUP_SKIP_MS });

  async function fetchAnswer(
    mapping: MetricDataMapping,
    req: RouteRequest,
    built: BuiltQuery,
    window: MetricWindow,
    epoch: string,
    withKnown: boolean,
  ): Promise<MetricAnswer> {
    const variables = withKnown ? built.variables : { ...built.variables, withKnown: false };
    const key = `${epoch}|${req.caller.identity}|${req.accountId}|${mapping.operation}|${built.id}|${withKnown}`;
    const read = async (signal: AbortSignal): Promise<MetricAnswer> => {
      // A byte-identical answer comes back as the same object (nothing mutates it here): its
      // filing and, through `renderings`, its body and ETag are then reused, not redone.
      let knownFailure: string | undefined;
      const data = await callUpstream(deps.nerdgraph, {
        operation: mapping.operation,
        variables,
        variablesKey: `metric-data-plan-${built.id}${withKnown ? '' : '-without-known'}`,
        apiKey: req.caller.apiKey,
        signal,
        reuseIdenticalAnswer: true,
        optionalFields: [KNOWN_FIELD],
        onOptionalFieldError: (_field, error) => {
          knownFailure = error.errorClass;
        },
      });
      const windowKey = `${mapping.operation}|${window.start}|${window.widthMs}|${window.count}|${window.summarize}|${withKnown}`;
      const known = data !== null && typeof data === 'object' ? derived.get(data) : undefined;
      const reused = known?.get(windowKey);
      if (reused !== undefined) return reused;
      const answer = parseAnswer(MetricDataAnswer, data, mapping.operation);
      const account = answer.actor.account;
      if (!account?.data) throw new UpstreamError('upstream_failure', `${mapping.operation}: no NRQL results`);
      const used = account.data.metadata?.timeWindow;
      const filed: MetricAnswer = {
        probe: answer.actor.entity,
        slices: slicesOf(account.data.results ?? [], window, mapping.operation),
        known: new Set(metricNamesIn(account.known?.results ?? [])),
        usedWindowMs: used && used.end > used.begin ? used.end - used.begin : null,
        // Null says it failed even when no callback told why (a byte-identical answer is not
        // parsed again; a read shared through the micro-cache tells its first caller only).
        ...(account.known === null ? { knownFailure: knownFailure ?? 'no result' } : {}),
        // Left out: by this request (it timed out lately), or by the client (no time left for it).
        ...(account.known === undefined ? { knownFailure: withKnown ? 'left out (too little time left)' : 'left out (timed out within the last minute)' } : {}),
      };
      if (data !== null && typeof data === 'object') {
        // One answer object is only ever asked for with a few windows; keep the map small anyway.
        const byWindow = known ?? new Map<string, MetricAnswer>();
        if (byWindow.size >= 16) byWindow.clear();
        byWindow.set(windowKey, filed);
        derived.set(data, byWindow);
      }
      return filed;
    };
    // A recorded run (explain, a dry run) is cold: it neither joins nor starts a shared call.
    if (inRecordedRun()) return read(req.signal);
    return flights.run(key, read, req.signal).promise;
  }

  /** Files each NRQL row under its metric and timeslice; a row off the grid is dropped and counted. */
  function slicesOf(results: readonly unknown[], window: MetricWindow, operation: string): MetricAnswer['slices'] {
    const slices: MetricAnswer['slices'] = new Map();
    for (const result of results) {
      if (result === null || typeof result !== 'object') {
        deps.metrics.droppedItems.inc({ operation });
        continue;
      }
      const row = result as Record<string, unknown>;
      const name = typeof row.facet === 'string' ? row.facet : row.metricTimesliceName;
      // A row that NRQL anchored off the gateway's grid still lands in the slice holding its start.
      const index = window.summarize ? 0 : Math.floor((Number(row.beginTimeSeconds) * 1000 - window.start) / window.widthMs);
      if (typeof name !== 'string' || !Number.isInteger(index) || index < 0 || index >= window.count) {
        deps.metrics.droppedItems.inc({ operation });
        continue;
      }
      let series = slices.get(name);
      if (!series) {
        series = new Array<Record<string, unknown> | undefined>(window.count);
        slices.set(name, series);
      }
      // Two rows for one slice cannot be merged (averages are not additive): refuse, never guess.
      if (series[index] !== undefined) throw new UpstreamError('upstream_failure', `${operation}: NRQL buckets do not match the v2 timeslices`);
      series[index] = row;
    }
    return slices;
  }

  // Whole answers inside the read micro-cache's window: a dashboard's repeated request skips
  // target, parameters, window and plan. Same validity as the reads it came from: the window's
  // age (so an answer is at most two windows older than NerdGraph's), no write since
  // (generation), the same minute (default windows move by the minute).
  const responses = new LRUCache<string, { rendered: Rendered; generation: number; at: number }>({
    max: 1_000,
    maxSize: 32 * 1024 * 1024,
    maxEntrySize: 8 * 1024 * 1024,
    sizeCalculation: (kept, key) => key.length + kept.rendered.bytes.length,
  });

  return async function runMetricData(mapping: MetricDataMapping, req: RouteRequest): Promise<Response> {
    const startedAt = performance.now();
    // Fresh: a write through another replica, answered before this request, is accounted for.
    const readWindow = deps.nerdgraph.freshReadWindow ? await deps.nerdgraph.freshReadWindow() : deps.nerdgraph.readWindow?.();
    const responseKey =
      readWindow === undefined
        ? undefined
        : `${req.caller.identity}|${req.accountId}|${mappingId(mapping)}|${req.format}|${Math.floor(deps.now() / 60_000)}|${JSON.stringify(req.pathParams)}|${JSON.stringify([...req.params])}`;
    if (readWindow !== undefined && responseKey !== undefined) {
      const kept = responses.get(responseKey);
      if (kept !== undefined && kept.generation === readWindow.generation && startedAt - kept.at < readWindow.ttlMs) {
        deps.metrics.cacheLookups.inc({ cache: 'metric-responses', result: 'hit' });
        return respondRendered(req.c, req.format, kept.rendered);
      }
    }
    const target = await resolveTarget(mapping, req);
    const { names, values: requestedValues, summarize, from, to, period } = mapping.parameters.parse(req.params);
    const now = deps.now();
    const window = resolveMetricWindow({ from, to, period, summarize }, now);

    // Names with control characters cannot be metric names; an NRQL literal cannot carry them.
    // With none left to ask about, the query still runs (for the entity check) on an empty name.
    const queryable = names.filter(isQueryableName);
    const asked = queryable.length > 0 ? queryable : [''];
    const scope = target.scope;
    const lookback = lookbackWindow(now, deps.metricNamesLookbackMs);
    // Dashboards ask the same question every poll: its plan and NRQL are built once.
    // The NRQL depends on the timeslices, not on the range echoed back (`to` moves by the second).
    const slices = [window.start, window.widthMs, window.count, window.summarize];
    const built = memoOf(plans, JSON.stringify([mappingId(mapping), req.accountId, target.entity.guid, scope, asked, requestedValues, slices, lookback]), () => {
      const plan = planQuery(mapping, asked, requestedValues);
      const end = window.start + window.widthMs * window.count;
      const variables = {
        accountId: req.accountId,
        guid: target.entity.guid,
        data: timesliceDataQuery({
          scope,
          names: asked,
          items: plan.items,
          since: window.start,
          until: end,
          ...(window.summarize ? {} : { timeseriesMs: window.widthMs }),
        }),
        // Whole minutes, so identical requests within a minute share one upstream call.
        known: metricNamesQuery({ scope, names: asked, ...lookback }),
        // The client leaves the look-up out when the time left cannot cover it (nrql-timeout.ts).
        withKnown: true,
      };
      // Ids are never reused (a plan evicted and built again gets a new one), so an id names
      // exactly one set of variables for the life of the process.
      return { plan, variables, id: nextPlanId++, size: variables.data.length + variables.known.length };
    });
    const { plan } = built;
    // A call begun before a write, or in an earlier window, is never joined (nor its answer kept); nor, across replicas without a trusted window (degraded), one begun before this request.
    const epoch = readWindow === undefined ? (deps.nerdgraph.freshReadWindow ? `untrusted:${startedAt}` : '') : `${readWindow.generation}:${Math.floor(startedAt / readWindow.ttlMs)}`;
    const lookupKey = JSON.stringify([req.caller.identity, req.accountId, mapping.operation, target.entity.guid, scope]);
    const answer = await fetchAnswer(mapping, req, built, window, epoch, !lookupTimedOut.has(lookupKey));
    await requireTarget(answer.probe, target, mapping, req.accountId, deps);
    if (answer.knownFailure === 'timeout') lookupTimedOut.set(lookupKey, true);
    if (answer.knownFailure !== undefined) {
      const entry = req.c.get('logEntry') as RequestLog | undefined;
      if (entry !== undefined) {
        entry.level = 'warn';
        const what = answer.knownFailure.startsWith('left out') ? answer.knownFailure : `failed (${answer.knownFailure})`;
        entry.degraded = `metric name look-up ${what}: metrics_found lists the names with data in the range`;
      }
    }

    const byKey = renderings.get(answer) ?? new Map<string, Rendered>();
    renderings.set(answer, byKey);
    const key = JSON.stringify([mappingId(mapping), req.format, names, requestedValues, window]);
    let rendered = byKey.get(key);
    if (rendered === undefined) {
      rendered = renderCacheable(renderBody(names, queryable, plan, window, answer), req.format);
      // An answer reused across calls lives on; its renderings stay few (bounded all the same).
      if (byKey.size >= 16) byKey.clear();
      byKey.set(key, rendered);
    }
    // Kept only if no write happened while it was computed (the generation read before it), and
    // not degraded (the next request asks the look-up again).
    if (answer.knownFailure === undefined && readWindow !== undefined && responseKey !== undefined && deps.nerdgraph.readWindow?.()?.generation === readWindow.generation) {
      responses.set(responseKey, { rendered, generation: readWindow.generation, at: startedAt }, { ttl: readWindow.ttlMs });
    }
    return respondRendered(req.c, req.format, rendered);
  };

  function renderBody(
    names: readonly string[],
    queryable: readonly string[],
    plan: QueryPlan,
    window: MetricWindow,
    answer: MetricAnswer,
  ): V2Body {
    const found = queryable.filter((name) => answer.slices.has(name) || answer.known.has(name));
    const foundSet = new Set(found);
    const bounds = sliceBounds(window);
    const metrics = found.map((name) => ({
      name,
      timeslices: bounds.map(([from, to], index) => {
        const row = answer.slices.get(name)?.[index];
        const correction = row === undefined ? 1 : windowCorrection(row, window, answer.usedWindowMs);
        const values: V2Body = {};
        for (const [value, alias] of plan.columns.get(name) ?? []) {
          const number = numberOf(row?.[alias]);
          values[value] = correction !== 1 && plan.windowRelative.has(alias) ? number * correction : number;
        }
        return { from, to, values };
      }),
    }));
    const body: V2Body = {
      metric_data: {
        from: isoSeconds(window.from),
        to: isoSeconds(window.to),
        metrics_not_found: names.filter((name) => !foundSet.has(name)),
        metrics_found: found,
        metrics,
      },
    };
    return body;
  }
}
