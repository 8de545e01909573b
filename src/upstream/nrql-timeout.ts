import type { UpstreamError } from './errors.ts';

/**
 * The `timeout` NerdGraph gives an NRQL query, set from the request's remaining deadline
 *. NerdGraph gives a query 5 seconds unless its `nrql` field sets `timeout`
 * ("NRQL query rate limits": "The default timeout for querying with NerdGraph is 5 seconds";
 * the async-queries tutorial), in seconds (`timeout: Seconds`), clamped to 5–120 s
 * (../shared/reference/nerdgraph.md). A query past it fails with `errorClass: TIMEOUT`,
 * "NRDB query duration exceeded the set timeout".
 *
 * Every document whose nrql fields take `$timeout` (all of them: test/upstream/queries.test.ts) gets it
 * from the client, per attempt: the seconds left before the request must be answered, less the
 * round trip, within NerdGraph's bounds. So a query may run as long as the request can wait
 * for it, and no longer than it can.
 */
export const NRQL_TIMEOUT_MIN_S = 5;
export const NRQL_TIMEOUT_MAX_S = 120;
/** Kept for the answer's way back after NerdGraph gives up on the query. */
export const ROUND_TRIP_MARGIN_MS = 500;

/** Does a document declare `$timeout: Seconds` (the variable its nrql fields read)? */
export function takesNrqlTimeout(text: string): boolean {
  return /\$timeout\s*:\s*Seconds\b/.test(text);
}

/**
 * A document's optional NRQL look-up (the metric-data documents' `known` field: which of the
 * requested names reported lately) has its own, short timeout and can be left out (
 * point 2, after review). NerdGraph answers a document once, when its slowest field is done:
 * a look-up given the whole time left held the data query's answer until then, and with
 * 5.5 s or less left its timeout was raised to NerdGraph's least (5 s), past the deadline,
 * so the look-up failed the request. Such a document declares `$knownTimeout: Seconds` (its
 * look-up's timeout) and `$withKnown: Boolean!` (the look-up under `@include(if: $withKnown)`);
 * the client sets both per attempt: the timeout is NerdGraph's least (a shorter one is raised
 * to it, so 5 s is as briefly as NerdGraph lets the look-up hold the answer), and the look-up
 * is left out when the time left cannot cover it (or the caller asked for it left out).
 */
export const LOOKUP_TIMEOUT_S = NRQL_TIMEOUT_MIN_S;

/** Does a document declare the optional look-up's variables (`$knownTimeout`, `$withKnown`)? */
export function takesLookupTimeout(text: string): boolean {
  return /\$knownTimeout\s*:\s*Seconds\b/.test(text) && /\$withKnown\s*:\s*Boolean!/.test(text);
}

/** Can the look-up run its whole timeout and still be answered before `remainingMs` is up? */
export function lookupFits(remainingMs: number): boolean {
  return remainingMs - ROUND_TRIP_MARGIN_MS > LOOKUP_TIMEOUT_S * 1000;
}

/** The `timeout` (whole seconds) for a query sent with `remainingMs` left before its answer is due. */
export function nrqlTimeoutFor(remainingMs: number): number {
  const seconds = Math.floor((remainingMs - ROUND_TRIP_MARGIN_MS) / 1000);
  if (!Number.isFinite(seconds)) return NRQL_TIMEOUT_MAX_S;
  return Math.min(NRQL_TIMEOUT_MAX_S, Math.max(NRQL_TIMEOUT_MIN_S, seconds));
}

/**
 * Can a retry of an attempt that failed as a timeout still finish in time? An attempt that ran
 * out of time needs at least as long again: a retry is useful only when the time left covers
 * how long the failed attempt ran and, for an NRQL query that used up its `timeout`, when the
 * retry can be given a longer one (the same query with the same or less time ends the same
 * way, having used up the rest of the request's deadline).
 */
export function timeoutRetryCanFinish(
  error: UpstreamError,
  attempt: { elapsedMs: number; sentTimeoutS: number | undefined; remainingMs: number },
): boolean {
  if (error.errorClass !== 'timeout') return true;
  if (attempt.remainingMs < attempt.elapsedMs) return false;
  if (error.queryTimeout && attempt.sentTimeoutS !== undefined) return nrqlTimeoutFor(attempt.remainingMs) > attempt.sentTimeoutS;
  return true;
}
