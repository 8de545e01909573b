/**
 * The time a query reads (nrql/engine.ts): SINCE/UNTIL resolved against the clock, rollup
 * snapping of Metric windows, TIMESERIES buckets (fixed, AUTO, MAX) ending at UNTIL, and the
 * `metadata.timeWindow` NerdGraph reports. Sources: "Set a query's time range"
 * (docs.newrelic.com/docs/nrql/using-nrql/query-time-range) and "NRQL syntax, clauses and
 * functions", TIMESERIES; the sandbox README's "TIMESERIES windows" and "Rollup snapping".
 */
import type { NrqlQuery, NrqlTime, NrqlTimeseries } from './query.ts';
import { MAX_BUCKETS, NRQL_MESSAGES, NrqlError, type NrqlMetadata } from './scope.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../timeslices.ts';

const DEFAULT_SINCE_TEXT = '60 MINUTES AGO';
const DEFAULT_UNTIL_TEXT = 'NOW';
function timeText(time: NrqlTime | null, fallback: string): string {
  if (time === null) return fallback;
  return typeof time === 'number' ? String(time) : time.text;
}

export function metadataOf(query: NrqlQuery, begin: number, end: number): NrqlMetadata {
  return {
    eventTypes: [...query.from],
    facets: [...query.facets],
    messages: [],
    timeWindow: {
      begin,
      end,
      since: timeText(query.since, DEFAULT_SINCE_TEXT),
      until: timeText(query.until, DEFAULT_UNTIL_TEXT),
      compareWith: null,
    },
  };
}

export interface TimeWindow {
  until: number;
  /** Start of the first bucket: `since`, or later so that every TIMESERIES bucket is whole. */
  begin: number;
  bucketMs: number;
  buckets: number;
}

export interface TimeRange {
  since: number;
  until: number;
}

function resolveTime(time: NrqlTime | null, now: number, fallback: number): number {
  if (time === null) return fallback;
  if (typeof time === 'number') return time;
  if ('agoMs' in time) return now - time.agoMs;
  if ('atMs' in time) return time.atMs;
  // today / yesterday: midnight (UTC, the default zone) of the clock's day, or the day before.
  return Math.floor(now / DAY_MS) * DAY_MS - time.daysAgo * DAY_MS;
}

/**
 * SINCE and UNTIL as epoch ms (default: the last hour up to now), as asked (before any rollup
 * snapping); throws NrqlError when SINCE is not before UNTIL. Exported for whatever prices a
 * query by its window (SINCE and UNTIL may be relative: `n units AGO`, NOW).
 */
export function rangeOf(query: NrqlQuery, now: number): TimeRange {
  const until = resolveTime(query.until, now, now);
  const since = resolveTime(query.since, now, now - HOUR_MS);
  if (since >= until) throw new NrqlError(NRQL_MESSAGES.startAfterEnd);
  return { since, until };
}

/**
 * Metric queries snap their window to the rollup they read ("Set a query's time range", metric
 * query snapping: a 47-hour-and-59-minute window "resolves to 5-minute metric time aggregations,
 * so the actual time range snaps to nearby aggregation boundaries", both ends moving back to a
 * boundary). The docs give that one example; which widths pick which rollup is the sandbox's
 * choice (UNCONFIRMED): up to 24 hours the 1-minute rows are read as asked (no snapping), past
 * 24 hours 5-minute boundaries, past ROLLUP_AGE (8 days, where only hourly rows exist) hours.
 */
export const ROLLUP_SNAPS: ReadonlyArray<{ longerThanMs: number; snapMs: number }> = [
  { longerThanMs: 8 * 24 * HOUR_MS, snapMs: HOUR_MS },
  { longerThanMs: 24 * HOUR_MS, snapMs: 5 * MINUTE_MS },
];

export function snapToRollup(range: TimeRange): TimeRange {
  const snapMs = ROLLUP_SNAPS.find(({ longerThanMs }) => range.until - range.since > longerThanMs)?.snapMs;
  if (snapMs === undefined) return range;
  const floor = (ms: number): number => Math.floor(ms / snapMs) * snapMs;
  return { since: floor(range.since), until: floor(range.until) };
}

/**
 * TIMESERIES MAX: "the maximum number of intervals allowed for a given time period" (NRQL
 * syntax, TIMESERIES; at most 366 buckets); a day ago "creates 4-minute intervals, which is the
 * ceiling for a daily chart". The sandbox takes the window over 366, rounded up to a whole
 * second, or a whole minute from a minute on (one day: 4 minutes, 360 buckets). Beyond that
 * example UNCONFIRMED.
 */
export function maxBucketMs(widthMs: number): number {
  const least = Math.ceil(widthMs / MAX_BUCKETS);
  const unit = least > MINUTE_MS ? MINUTE_MS : least > 1000 ? 1000 : 1;
  return Math.ceil(least / unit) * unit;
}

/**
 * TIMESERIES AUTO (and a bare TIMESERIES, UNCONFIRMED): "divide your graph into a reasonable number of
 * divisions. For example, a daily chart will be divided into 30 minute intervals and a weekly
 * chart will be divided into 6 hour intervals" (NRQL syntax, TIMESERIES). Those two points are
 * documented; the rest of the ladder is the sandbox's choice (UNCONFIRMED): up to 1 hour 1
 * minute, 3 hours 5 minutes, 6 hours 15 minutes, 1 day 30 minutes, 3 days 2 hours, 1 week
 * 6 hours, 31 days 1 day, beyond that MAX's bucket. A bucket wider than the window (under a
 * minute) or more than 366 buckets falls back to MAX's.
 */
export const AUTO_BUCKETS: ReadonlyArray<{ upToMs: number; bucketMs: number }> = [
  { upToMs: HOUR_MS, bucketMs: MINUTE_MS },
  { upToMs: 3 * HOUR_MS, bucketMs: 5 * MINUTE_MS },
  { upToMs: 6 * HOUR_MS, bucketMs: 15 * MINUTE_MS },
  { upToMs: DAY_MS, bucketMs: 30 * MINUTE_MS },
  { upToMs: 3 * DAY_MS, bucketMs: 2 * HOUR_MS },
  { upToMs: 7 * DAY_MS, bucketMs: 6 * HOUR_MS },
  { upToMs: 31 * DAY_MS, bucketMs: DAY_MS },
];

export function autoBucketMs(widthMs: number): number {
  const step = AUTO_BUCKETS.find(({ upToMs }) => widthMs <= upToMs)?.bucketMs;
  if (step === undefined || step > widthMs || widthMs / step > MAX_BUCKETS) return maxBucketMs(widthMs);
  return step;
}

function bucketMsOf(timeseries: NrqlTimeseries, widthMs: number): number {
  if (timeseries === 'AUTO') return autoBucketMs(widthMs);
  if (timeseries === 'MAX') return maxBucketMs(widthMs);
  return timeseries.milliseconds;
}

/**
 * The buckets of a TIMESERIES: "the time series buckets base themselves on the end of the time
 * range, and the start time is adjusted so the first bucket in the response covers a full
 * 5 minutes" ("Set a query's time range", TIMESERIES query snapping: `TIMESERIES 5 minutes
 * SINCE '2023-12-20T00:04:59Z' UNTIL '2023-12-21T00:03:12Z'` begins at 00:08:12). So the start
 * moves forward to the first whole bucket ending at UNTIL; a window shorter than one bucket
 * fails with the chart error "TIMESERIES step size is larger than the current time window".
 */
export function timeWindowOf(query: NrqlQuery, range: TimeRange): TimeWindow {
  const { since, until } = range;
  if (since >= until) throw new NrqlError(NRQL_MESSAGES.startAfterEnd);
  if (query.timeseries === null) return { until, begin: since, bucketMs: until - since, buckets: 1 };
  const bucketMs = bucketMsOf(query.timeseries, until - since);
  const buckets = Math.floor((until - since) / bucketMs);
  if (buckets < 1) throw new NrqlError(NRQL_MESSAGES.stepTooLarge);
  if (buckets > MAX_BUCKETS) throw new NrqlError(NRQL_MESSAGES.tooManyBuckets);
  return { until, begin: until - buckets * bucketMs, bucketMs, buckets };
}
