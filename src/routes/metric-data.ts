import { LRUCache } from 'lru-cache';
import type { MetricDataMapping } from './metric-mapping.ts';
import { renderCacheable, respondRendered, type Rendered, type V2Body } from '../v2/format.ts';
import { resolveMetricWindow } from '../v2/metric-window.ts';
import { createAnswerFetches, fetchAnswer, metricDataBody, type AnswerFetches, type MetricAnswer } from './metric-answer.ts';
import { buildQuery, type BuiltQuery, type QueryInputs } from './metric-plan.ts';
import { createTargetResolver, isQueryableName, lookbackWindow, requireTarget, type TargetResolver } from './timeslice-target.ts';
import type { RequestLog } from '../ops/logger.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * Serves `metrics/data.json` by docs/metric-data-rules.md: the REST window rules decide the
 * timeslices, one NRQL query faceted by metric name computes every value of every metric with
 * the formula table (src/routes/metric-plan.ts), and a second NRQL query in the same GraphQL
 * request tells which names the app reported lately (found with zeros) from names it never had
 * (not found); src/routes/metric-answer.ts files the answer and makes the body.
 *
 * That look-up (a 7-day uniques(metricTimesliceName)) reads a much longer window than the data
 * and can run past its NRQL timeout where the data query does not. It can
 * never fail the data: an error in it leaves `known` null (the client's optionalFields), and
 * the answer degrades to "found = the names with data", noted on the request's log line. Nor
 * can it hold the data back past NerdGraph's least timeout (5 s): it has its own, and the
 * client leaves it out when the time left cannot cover that (nrql-timeout.ts); after it timed
 * out for a caller, account and target, it is left out for them for a minute
 * (LOOKUP_SKIP_MS), so polls do not wait on it again and again.
 */

/** How long a look-up that timed out is left out for its caller, account and target. */
export const LOOKUP_SKIP_MS = 60_000;

interface KeptResponse {
  rendered: Rendered;
  generation: number;
  at: number;
}

/** What the metric-data stage keeps between requests. */
export interface MetricDataStage {
  deps: RouteDeps;
  resolveTarget: TargetResolver;
  fetches: AnswerFetches;
  /**
   * Callers sharing one answer also share its rendering (body text and ETag): re-serialising
   * the same timeslices and hashing them per caller was a third of metric data's CPU. Keyed by
   * everything else the body depends on: the mapping, the format, the names and values asked
   * and the window (requests sharing an answer asked the same NRQL, so these rarely differ).
   */
  renderings: WeakMap<MetricAnswer, Map<string, Rendered>>;
  mappingIds: WeakMap<MetricDataMapping, number>;
  /**
   * Request signature -> its query plan and variables (pure functions of the signature).
   * Bounded by size too: a plan holds its names three times (key and two NRQL strings), and a
   * POST may ask for hundreds of long names.
   */
  plans: LRUCache<string, BuiltQuery>;
  /**
   * Caller, account and target whose name look-up timed out lately: left out for them meanwhile
   * (in this process; each replica learns it once).
   */
  lookupTimedOut: LRUCache<string, true>;
  /**
   * Whole answers inside the read micro-cache's window: a dashboard's repeated request skips
   * target, parameters, window and plan. Same validity as the reads it came from: the window's
   * age (so an answer is at most two windows older than NerdGraph's), no write since
   * (generation), the same minute (default windows move by the minute).
   */
  responses: LRUCache<string, KeptResponse>;
}

export function createMetricDataStage(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)): MetricDataStage {
  return {
    deps,
    resolveTarget,
    fetches: createAnswerFetches(deps),
    renderings: new WeakMap(),
    mappingIds: new WeakMap(),
    plans: new LRUCache<string, BuiltQuery>({
      max: 1_000,
      maxSize: 16 * 1024 * 1024,
      maxEntrySize: 4 * 1024 * 1024,
      sizeCalculation: (built, key) => key.length + built.size,
    }),
    lookupTimedOut: new LRUCache<string, true>({ max: 10_000, ttl: LOOKUP_SKIP_MS }),
    responses: new LRUCache<string, KeptResponse>({
      max: 1_000,
      maxSize: 32 * 1024 * 1024,
      maxEntrySize: 8 * 1024 * 1024,
      sizeCalculation: (kept, key) => key.length + kept.rendered.bytes.length,
    }),
  };
}

/** Process-wide, like plan ids: a mapping's number within cache keys. */
let nextMappingId = 0;

function mappingId(stage: MetricDataStage, mapping: MetricDataMapping): number {
  let id = stage.mappingIds.get(mapping);
  if (id === undefined) {
    id = nextMappingId++;
    stage.mappingIds.set(mapping, id);
  }
  return id;
}

type ReadWindow = { generation: number; ttlMs: number };

/**
 * A whole answer kept for this exact request (caller, account, route, format, minute, path and
 * parameters) while no write happened and the read window it came from is young.
 */
function keptResponse(stage: MetricDataStage, responseKey: string, readWindow: ReadWindow, startedAt: number): Rendered | undefined {
  const kept = stage.responses.get(responseKey);
  if (kept === undefined || kept.generation !== readWindow.generation || startedAt - kept.at >= readWindow.ttlMs) return undefined;
  stage.deps.metrics.cacheLookups.inc({ cache: 'metric-responses', result: 'hit' });
  return kept.rendered;
}

/** Dashboards ask the same question every poll: its plan and NRQL are built once per signature. */
function plannedQuery(stage: MetricDataStage, mapping: MetricDataMapping, inputs: QueryInputs): BuiltQuery {
  const { window } = inputs;
  // The NRQL depends on the timeslices, not on the range echoed back (`to` moves by the second).
  const slices = [window.start, window.widthMs, window.count, window.summarize];
  const key = JSON.stringify([mappingId(stage, mapping), inputs.accountId, inputs.target.entity.guid, inputs.target.scope, inputs.asked, inputs.requestedValues, slices, inputs.lookback]);
  let built = stage.plans.get(key);
  if (built === undefined) {
    built = buildQuery(mapping, inputs);
    stage.plans.set(key, built);
  }
  return built;
}

/** The answer's body for this request, rendered once for every caller sharing the answer. */
function renderedBody(stage: MetricDataStage, mapping: MetricDataMapping, req: RouteRequest, answer: MetricAnswer, key: unknown[], body: () => V2Body): Rendered {
  const byKey = stage.renderings.get(answer) ?? new Map<string, Rendered>();
  stage.renderings.set(answer, byKey);
  const text = JSON.stringify([mappingId(stage, mapping), req.format, ...key]);
  let rendered = byKey.get(text);
  if (rendered === undefined) {
    rendered = renderCacheable(body(), req.format);
    // An answer reused across calls lives on; its renderings stay few (bounded all the same).
    if (byKey.size >= 16) byKey.clear();
    byKey.set(text, rendered);
  }
  return rendered;
}

/** Serves one metrics/data.json request. */
export async function serveMetricData(stage: MetricDataStage, mapping: MetricDataMapping, req: RouteRequest): Promise<Response> {
  const { deps } = stage;
  const startedAt = performance.now();
  // Fresh: a write through another replica, answered before this request, is accounted for.
  const readWindow = deps.nerdgraph.freshReadWindow ? await deps.nerdgraph.freshReadWindow() : deps.nerdgraph.readWindow?.();
  const responseKey =
    readWindow === undefined
      ? undefined
      : `${req.caller.identity}|${req.accountId}|${mappingId(stage, mapping)}|${req.format}|${Math.floor(deps.now() / 60_000)}|${JSON.stringify(req.pathParams)}|${JSON.stringify([...req.params])}`;
  const kept = readWindow !== undefined && responseKey !== undefined ? keptResponse(stage, responseKey, readWindow, startedAt) : undefined;
  if (kept !== undefined) return respondRendered(req.c, req.format, kept);

  const target = await stage.resolveTarget(mapping, req);
  const { names, values: requestedValues, summarize, from, to, period } = mapping.parameters.parse(req.params);
  const now = deps.now();
  const window = resolveMetricWindow({ from, to, period, summarize }, now);
  // Names with control characters cannot be metric names; an NRQL literal cannot carry them.
  // With none left to ask about, the query still runs (for the entity check) on an empty name.
  const queryable = names.filter(isQueryableName);
  const asked = queryable.length > 0 ? queryable : [''];
  const lookback = lookbackWindow(now, deps.metricNamesLookbackMs);
  const built = plannedQuery(stage, mapping, { accountId: req.accountId, target, asked, requestedValues, window, lookback });

  // A call begun before a write, or in an earlier window, is never joined (nor its answer kept); nor, across replicas without a trusted window (degraded), one begun before this request.
  const epoch = readWindow === undefined ? (deps.nerdgraph.freshReadWindow ? `untrusted:${startedAt}` : '') : `${readWindow.generation}:${Math.floor(startedAt / readWindow.ttlMs)}`;
  const lookupKey = JSON.stringify([req.caller.identity, req.accountId, mapping.operation, target.entity.guid, target.scope]);
  const answer = await fetchAnswer(stage.fetches, mapping, req, built, window, epoch, !stage.lookupTimedOut.has(lookupKey));
  await requireTarget(answer.probe, target, mapping, req.accountId, deps);
  if (answer.knownFailure === 'timeout') stage.lookupTimedOut.set(lookupKey, true);
  if (answer.knownFailure !== undefined) noteDegraded(req, answer.knownFailure);

  const rendered = renderedBody(stage, mapping, req, answer, [names, requestedValues, window], () => metricDataBody(names, queryable, built.plan, window, answer));
  // Kept only if no write happened while it was computed (the generation read before it), and
  // not degraded (the next request asks the look-up again).
  if (answer.knownFailure === undefined && readWindow !== undefined && responseKey !== undefined && deps.nerdgraph.readWindow?.()?.generation === readWindow.generation) {
    stage.responses.set(responseKey, { rendered, generation: readWindow.generation, at: startedAt }, { ttl: readWindow.ttlMs });
  }
  return respondRendered(req.c, req.format, rendered);
}

/** The request's log line says the look-up failed or was left out, and what found means then. */
function noteDegraded(req: RouteRequest, knownFailure: string): void {
  const entry = req.c.get('logEntry') as RequestLog | undefined;
  if (entry === undefined) return;
  entry.level = 'warn';
  const what = knownFailure.startsWith('left out') ? knownFailure : `failed (${knownFailure})`;
  entry.degraded = `metric name look-up ${what}: metrics_found lists the names with data in the range`;
}

/** The router's metric-data runner; pass the names runner's resolver so a host's directory is shared. */
export function createMetricDataRunner(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)) {
  const stage = createMetricDataStage(deps, resolveTarget);
  return (mapping: MetricDataMapping, req: RouteRequest): Promise<Response> => serveMetricData(stage, mapping, req);
}
