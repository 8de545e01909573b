import type { Outcome } from './types.ts';

/**
 * The parity store's time series (parity-store.ts): comparisons that matched, mismatched or
 * were only noise, counted per hour, for the /bridge/ page's chart of whether things are
 * getting better. Fed by the same events as the rest of the store (a record's time, a batch of
 * matches' latest time), so the replicas sharing the store (shared-parity.ts) share the series.
 * Bounded: the newest SERIES_MAX_BUCKETS hours are kept; a bucket older than all of them, once
 * the series is full, is not counted.
 */
export const SERIES_BUCKET_MS = 3_600_000;
/** Two weeks of hours. */
export const SERIES_MAX_BUCKETS = 14 * 24;

export const SERIES_OUTCOMES = ['match', 'mismatch', 'noise'] as const satisfies readonly Outcome[];
export type SeriesOutcome = (typeof SERIES_OUTCOMES)[number];

export interface SeriesBucket {
  /** Epoch ms of the bucket's start (a whole hour, UTC). */
  start: number;
  match: number;
  mismatch: number;
  noise: number;
}

export interface ParitySeries {
  bucketMs: number;
  maxBuckets: number;
  /** Oldest first; hours without a comparison are absent. */
  buckets: SeriesBucket[];
}

export type SeriesTally = Map<number, SeriesBucket>;

const isSeriesOutcome = (outcome: Outcome): outcome is SeriesOutcome => (SERIES_OUTCOMES as readonly Outcome[]).includes(outcome);

/** Counts `count` comparisons of `outcome` at `at` (epoch ms); other outcomes are not charted. */
export function noteSeries(series: SeriesTally, at: number, outcome: Outcome, count: number): void {
  // Only times a Date can hold: the chart prints each bucket's start.
  if (!isSeriesOutcome(outcome) || !(at >= 0 && at <= 8.64e15) || count <= 0) return;
  const start = Math.floor(at / SERIES_BUCKET_MS) * SERIES_BUCKET_MS;
  let bucket = series.get(start);
  if (bucket === undefined) {
    if (series.size >= SERIES_MAX_BUCKETS) {
      // Once an hour at most: a scan of a few hundred keys.
      let oldest = Number.POSITIVE_INFINITY;
      for (const kept of series.keys()) oldest = Math.min(oldest, kept);
      if (start < oldest) return;
      series.delete(oldest);
    }
    bucket = { start, match: 0, mismatch: 0, noise: 0 };
    series.set(start, bucket);
  }
  bucket[outcome] += count;
}

export function seriesReport(series: SeriesTally): ParitySeries {
  const buckets = [...series.values()].map((bucket) => ({ ...bucket })).sort((a, b) => a.start - b.start);
  return { bucketMs: SERIES_BUCKET_MS, maxBuckets: SERIES_MAX_BUCKETS, buckets };
}
