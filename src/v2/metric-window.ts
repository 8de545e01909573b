import { MetricTitles, invalidParameter } from './errors.ts';
import { parseV2Time } from './timestamps.ts';

/**
 * REST v2's time-range rules for metric data (rest-v2.md §4, as pinned down in
 * docs/metric-data-rules.md §3): defaults, the 60-second minimum, the granularity table, the
 * "start older than 8 days" ten-point rule, `period`, and how timeslices are aligned.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const DEFAULT_RANGE_MS = 30 * MINUTE;
/** Data older than this is hourly rollups; short ranges there get ten points. */
export const ROLLUP_AGE_MS = 8 * DAY;
/** NRQL's TIMESERIES limit, which one upstream query per request must respect. */
export const MAX_TIMESLICES = 366;

/** [longest range, default granularity], both in seconds; past the last row: 3 days. */
export const GRANULARITY_TABLE: ReadonlyArray<readonly [number, number]> = [
  [3 * 3600, 60],
  [6 * 3600, 120],
  [14 * 3600, 300],
  [24 * 3600, 600],
  [4 * 86400, 1800],
  [7 * 86400, 3600],
  [21 * 86400, 10800],
  [42 * 86400, 21600],
  [63 * 86400, 43200],
];
const LONGEST_GRANULARITY_SECONDS = 3 * 86400;

export interface MetricWindowInput {
  from?: string;
  to?: string;
  period?: string;
  summarize: boolean;
}

export interface MetricWindow {
  /** The requested range after defaults (echoed as metric_data.from / to), epoch ms. */
  from: number;
  to: number;
  summarize: boolean;
  /** The timeslices: `count` buckets of `widthMs` from `start` (one bucket when summarized). */
  start: number;
  widthMs: number;
  count: number;
}

const floorTo = (ms: number, step: number): number => Math.floor(ms / step) * step;
const ceilTo = (ms: number, step: number): number => Math.ceil(ms / step) * step;

function time(raw: string | undefined, parameter: 'from' | 'to'): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = parseV2Time(raw);
  if (parsed === undefined) throw invalidParameter(MetricTitles.badTime(parameter));
  if (parsed < 0) throw invalidParameter(MetricTitles.timeBeforeEpoch(parameter));
  return parsed;
}

/** `period` in seconds; undefined when absent, empty or 0 (all mean "the default"). */
function period(raw: string | undefined): number | undefined {
  const text = raw?.trim() ?? '';
  if (text === '') return undefined;
  if (!/^\d{1,9}$/.test(text)) throw invalidParameter(MetricTitles.periodNotMinutes);
  const seconds = Number(text);
  if (seconds === 0) return undefined;
  if (seconds % 60 !== 0) throw invalidParameter(MetricTitles.periodNotMinutes);
  return seconds;
}

export function defaultGranularitySeconds(rangeSeconds: number): number {
  return GRANULARITY_TABLE.find(([longest]) => rangeSeconds <= longest)?.[1] ?? LONGEST_GRANULARITY_SECONDS;
}

export function resolveMetricWindow(input: MetricWindowInput, now: number): MetricWindow {
  const to = time(input.to, 'to') ?? floorTo(now, SECOND);
  const from = time(input.from, 'from') ?? to - DEFAULT_RANGE_MS;
  // NRQL takes epoch milliseconds, and no New Relic data predates 1970.
  if (from < 0) throw invalidParameter(MetricTitles.timeBeforeEpoch('from'));
  if (to - from < MINUTE) throw invalidParameter(MetricTitles.timeRangeTooShort);
  const rangeSeconds = (to - from) / SECOND;
  const requestedPeriod = period(input.period);

  // Ten evenly spaced points over whole hours: old data is hourly rollups.
  const tenPoints = from < now - ROLLUP_AGE_MS && rangeSeconds <= 4 * 86400;
  const tenPointStart = floorTo(from, HOUR);
  const tenPointWidth = (ceilTo(to, HOUR) - tenPointStart) / 10;
  const minimumSeconds = tenPoints ? tenPointWidth / SECOND : defaultGranularitySeconds(rangeSeconds);
  if (requestedPeriod !== undefined && requestedPeriod < minimumSeconds) {
    throw invalidParameter(MetricTitles.periodTooSmall(minimumSeconds));
  }

  if (input.summarize) {
    const start = floorTo(from, MINUTE);
    return { from, to, summarize: true, start, widthMs: floorTo(to, MINUTE) - start, count: 1 };
  }
  if (tenPoints && requestedPeriod === undefined) {
    return { from, to, summarize: false, start: tenPointStart, widthMs: tenPointWidth, count: 10 };
  }
  const widthMs = (requestedPeriod ?? minimumSeconds) * SECOND;
  const start = floorTo(from, widthMs);
  const end = Math.max(floorTo(to, widthMs), start + widthMs);
  const count = (end - start) / widthMs;
  if (count > MAX_TIMESLICES) throw invalidParameter(MetricTitles.tooManyTimeslices);
  return { from, to, summarize: false, start, widthMs, count };
}
