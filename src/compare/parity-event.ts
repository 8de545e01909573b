import type { RouteMode } from '../ops/route-modes.ts';
import type { ComparisonRecord, Outcome, PatternTally } from './types.ts';

/**
 * One change to the store, as another replica's store applies it (shared-parity.ts). Labels are
 * already the store's (route template or `unmapped`, HTTP method or `OTHER`); a record is the
 * cleaned one the store keeps, with its tally, so nothing in an event holds more than the store
 * itself would.
 */
export type ParityEvent =
  | { kind: 'usage'; route: string; method: string; mode: RouteMode; count: number }
  | { kind: 'dropped'; route: string; method: string; count: number }
  /**
   * Matches with nothing to keep (no difference of any verdict, no tally): counts only, so the
   * comparisons that agree, most of them once a route is ready, cost a few bytes a batch.
   * `onSuccess`: how many of them agreed on a 2xx legacy answer; `at`: the latest of them
   * (absent from replicas older than the time series: counted when applied).
   */
  | { kind: 'matched'; route: string; method: string; mode: ComparisonRecord['mode']; count: number; onSuccess: number; at?: number }
  /** An integration's calls to one route (parity-callers.ts): its labels only, never a key. */
  | { kind: 'caller'; fingerprint: string; agent: string; route: string; method: string; count: number }
  | { kind: 'record'; record: ComparisonRecord }
  /**
   * Records a replica counted but did not send whole (past a batch's bound for full records,
   * shared-parity.ts): `count` comparisons of one outcome, their pattern counts summed in
   * `tally`, `at` the latest of them. Counts exact; no record kept, no example beyond a placeholder.
   */
  | { kind: 'folded'; route: string; method: string; mode: ComparisonRecord['mode']; outcome: Outcome; count: number; onSuccess: number; at: number; tally: PatternTally[] };
