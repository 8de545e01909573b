import { z } from 'zod';
import { SingleFlight } from '../cache/single-flight.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import type { MetricDataMapping } from './metric-mapping.ts';
import { NrqlResults, parseAnswer } from '../upstream/answer.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { V2Body } from '../v2/format.ts';
import type { MetricWindow } from '../v2/metric-window.ts';
import { isoSeconds } from '../v2/time.ts';
import type { BuiltQuery, QueryPlan } from './metric-plan.ts';
import { EntityProbe, metricNamesIn } from './timeslice-target.ts';
import { callUpstream } from './request-signal.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * The answer to one metric-data document, filed by metric and timeslice, and the v2 body made
 * from it. The look-up (`known`) may fail or be left out without failing the data: the answer
 * then says why (knownFailure) and found is the names with data.
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

export const MetricDataAnswer = z.object({
  actor: z.object({
    entity: EntityProbe,
    // Only the containers are checked: slicesOf and numberOf read each row defensively (a
    // per-row zod record cost a third of a request's CPU).
    // `known` absent: the look-up was left out (@include(if: $withKnown)).
    account: z.object({ data: z.object({ results: z.array(z.unknown()).nullable(), metadata: UsedWindow }).nullable(), known: NrqlResults.optional() }).nullable(),
  }),
});

export interface MetricAnswer {
  probe: z.infer<typeof EntityProbe>;
  /** metric name -> timeslice index -> row of aliased numbers. */
  slices: Map<string, Array<Record<string, unknown> | undefined>>;
  known: Set<string>;
  /** Milliseconds of the window NerdGraph reports it used for the data query; null when it does not say. */
  usedWindowMs: number | null;
  /** Why the name look-up gave nothing (its error's class): found is then the names with data. */
  knownFailure?: string;
}

/** The name look-up's field in the metric-data documents: it may fail without failing the data. */
const KNOWN_FIELD = 'actor.account.known';

/** What fetching answers keeps between requests. */
export interface AnswerFetches {
  deps: RouteDeps;
  /** Concurrent identical requests (same caller, account, NRQL) share one upstream call. */
  flights: SingleFlight<MetricAnswer>;
  /**
   * Parsed upstream answer -> its filing per window (the client hands back the same object for
   * byte-identical answers, so identical answers across coalesced calls are filed once).
   */
  derived: WeakMap<object, Map<string, MetricAnswer>>;
}

export function createAnswerFetches(deps: RouteDeps): AnswerFetches {
  return { deps, flights: new SingleFlight<MetricAnswer>(), derived: new WeakMap() };
}

/**
 * The answer to a built query, shared with concurrent identical requests. `epoch` separates calls
 * that must not be joined (begun before a write, or in an earlier window); `withKnown: false`
 * leaves the look-up out.
 */
export async function fetchAnswer(
  fetches: AnswerFetches,
  mapping: MetricDataMapping,
  req: RouteRequest,
  built: BuiltQuery,
  window: MetricWindow,
  epoch: string,
  withKnown: boolean,
): Promise<MetricAnswer> {
  const { deps, derived } = fetches;
  const variables = withKnown ? built.variables : { ...built.variables, withKnown: false };
  const key = `${epoch}|${req.caller.identity}|${req.accountId}|${mapping.operation}|${built.id}|${withKnown}`;
  const read = async (signal: AbortSignal): Promise<MetricAnswer> => {
    // A byte-identical answer comes back as the same object (nothing mutates it here): its
    // filing and, through the runner's renderings, its body and ETag are then reused, not redone.
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
      slices: slicesOf(deps, account.data.results ?? [], window, mapping.operation),
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
  return fetches.flights.run(key, read, req.signal).promise;
}

/** Files each NRQL row under its metric and timeslice; a row off the grid is dropped and counted. */
function slicesOf(deps: Pick<RouteDeps, 'metrics'>, results: readonly unknown[], window: MetricWindow, operation: string): MetricAnswer['slices'] {
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

/** The v2 `metric_data` body: found names (with data, or reported lately) with every timeslice, and the rest not found. */
export function metricDataBody(names: readonly string[], queryable: readonly string[], plan: QueryPlan, window: MetricWindow, answer: MetricAnswer): V2Body {
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
  return {
    metric_data: {
      from: isoSeconds(window.from),
      to: isoSeconds(window.to),
      metrics_not_found: names.filter((name) => !foundSet.has(name)),
      metrics_found: found,
      metrics,
    },
  };
}
