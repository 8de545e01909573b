/**
 * NRQL query cost and NerdGraph's query timeout (behaviours `nrqlTimeouts`,
 * `nrqlClockScale`).
 *
 * What New Relic documents:
 * - "NRQL query rate limits" (docs.newrelic.com/docs/nrql/using-nrql/rate-limits-nrql-queries):
 *   "The default timeout for querying with NerdGraph is 5 seconds"; complex queries (FACET,
 *   TIMESERIES, many events) and long time ranges are the ones that run long.
 * - "NerdGraph tutorial: Run NRQL queries asynchronously" (docs.newrelic.com/docs/apis/nerdgraph/
 *   examples/async-queries-nrql-tutorial): a query "will return results if it completes within
 *   the default timeout of 5 seconds"; `nrql(query: ..., timeout: N)` sets another one.
 * - The schema (../shared/nerdgraph/schema.json): `Account.nrql(..., timeout: Seconds)`, a number
 *   of seconds; ../shared/reference/nerdgraph.md: clamped to 5–120 s, default 5 s.
 * - The error, as NerdGraph answers it (newrelic/nr-reports issue 8; argoproj/argo-rollouts issue
 *   3741): the nrql field is null and `errors[]` carries `message: "NRDB query duration exceeded
 *   the set timeout"`, `extensions.errorClass: "TIMEOUT"`, the field's `path`. Only that field
 *   fails: the rest of the document's data stands (GraphQL partial data).
 *
 * The cost model is the sandbox's own (New Relic publishes none); it only has to grow the way
 * the documents say: with the time window and with the width of the answer (FACET values and
 * uniques() values). In simulated seconds:
 *
 *     cost = 0.05 + 0.01 × days of window + 0.001 × (facet values + uniques values)
 *
 * so a 30-minute query of a few names costs about 0.05 s, a year of one metric 3.7 s, the
 * gateway's 7-day name look-up about 0.12 s, and the bulk app's 2,371 names listed over 7 days
 * 2.5 s: what the gateway sends stays within NerdGraph's default 5 s, and a look-up past it
 * takes a window of more than 500 days or thousands of names. The sandbox then waits cost × nrqlClockScale real
 * milliseconds (default 10: a 5 s timeout is 50 ms), or, past the query's timeout, waits the
 * timeout and fails the field with NerdGraph's TIMEOUT error.
 *
 * The engine (engine.ts) is not involved: the cost is read from what it answered (the
 * metadata's time window and the results), through `NrqlCostInput`.
 */
import { GraphQLError } from 'graphql';

/** NerdGraph's default NRQL timeout, seconds. */
export const DEFAULT_NRQL_TIMEOUT_S = 5;
/** The longest timeout NerdGraph accepts (../shared/reference/nerdgraph.md: clamped to 5–120 s). */
export const MAX_NRQL_TIMEOUT_S = 120;

/** NerdGraph's words for a query that ran past its timeout. */
export const NRQL_TIMEOUT_MESSAGE = 'NRDB query duration exceeded the set timeout';

const BASE_S = 0.05;
const PER_DAY_S = 0.01;
const PER_VALUE_S = 0.001;
const DAY_MS = 86_400_000;

/** What a query's cost is computed from: its window and the width of its answer. */
export interface NrqlCostInput {
  /** The window the query read (metadata.timeWindow end − begin), ms. */
  windowMs: number;
  /** Distinct FACET values plus the values every uniques() returned. */
  width: number;
}

/** The cost in simulated seconds. */
export function nrqlCostSeconds(input: NrqlCostInput): number {
  const days = Math.max(0, input.windowMs) / DAY_MS;
  return BASE_S + PER_DAY_S * days + PER_VALUE_S * Math.max(0, input.width);
}

/** The width of an answer: distinct facet values, plus every list value (uniques) in its rows. */
export function answerWidth(results: readonly unknown[]): number {
  const facets = new Set<string>();
  let values = 0;
  for (const row of results) {
    if (row === null || typeof row !== 'object') continue;
    for (const [key, value] of Object.entries(row)) {
      if (key === 'facet') facets.add(JSON.stringify(value));
      else if (Array.isArray(value)) values += value.length;
    }
  }
  return facets.size + values;
}

/** The timeout NerdGraph applies for a requested one: 5 s when absent, else clamped to 5–120 s. */
export function effectiveTimeoutSeconds(requested: number | null | undefined): number {
  if (requested === null || requested === undefined || !Number.isFinite(requested)) return DEFAULT_NRQL_TIMEOUT_S;
  return Math.min(MAX_NRQL_TIMEOUT_S, Math.max(DEFAULT_NRQL_TIMEOUT_S, requested));
}

/** The field error NerdGraph answers for a query past its timeout (graphql-js adds path and locations). */
export function nrqlTimeoutError(): GraphQLError {
  return new GraphQLError(NRQL_TIMEOUT_MESSAGE, { extensions: { errorClass: 'TIMEOUT' } });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Answers `value` after the query's cost in scaled real time, or fails with the TIMEOUT error
 * after its timeout when the cost is longer.
 */
export async function afterQueryCost<T>(
  value: T,
  cost: NrqlCostInput,
  options: { timeout: number | null | undefined; clockScale: number },
): Promise<T> {
  const seconds = nrqlCostSeconds(cost);
  const timeout = effectiveTimeoutSeconds(options.timeout);
  const scale = Math.max(0, options.clockScale);
  if (seconds > timeout) {
    await sleep(timeout * scale);
    throw nrqlTimeoutError();
  }
  await sleep(seconds * scale);
  return value;
}
