/**
 * The legacy metric data route's values (metrics.ts), by docs/metric-data-rules.md §5: each
 * timeslice's sums over the raw rows in its bucket, and the formula of each value name (per
 * metric kind where v2's differ), in plain arithmetic; division by zero gives 0.
 */
import type { MetricKind, SandboxMetric, TimesliceRow } from '../timeslices.ts';
import type { Buckets } from './metric-params.ts';
import type { MetricSource } from './metric-request.ts';
// ---------------------------------------------------------------------------------------------
// Sums and formulas (rules §5)

/** The sums one timeslice's values are computed from; `w` is its length in seconds. */
interface Sums {
  rows: number;
  c: number;
  t: number;
  x: number;
  q: number;
  mn: number;
  mx: number;
  w: number;
}

const emptySums = (w: number): Sums => ({ rows: 0, c: 0, t: 0, x: 0, q: 0, mn: Infinity, mx: -Infinity, w });

function addRow(sums: Sums, row: TimesliceRow): void {
  sums.rows += 1;
  sums.c += row.count;
  sums.t += row.total;
  sums.x += row.totalExclusive;
  sums.q += row.sumOfSquares;
  sums.mn = Math.min(sums.mn, row.min);
  sums.mx = Math.max(sums.mx, row.max);
}

/** One pass over the metric's rows, each counted in the bucket holding its start. */
export function bucketSums(source: MetricSource, metric: SandboxMetric, buckets: Buckets, now: number): Sums[] {
  const sums = Array.from({ length: buckets.count }, () => emptySums(buckets.width));
  const startMs = buckets.start * 1000;
  const widthMs = buckets.width * 1000;
  for (const row of source.rowsOf(metric, startMs, startMs + buckets.count * widthMs, now)) {
    const bucket = sums[Math.floor((row.start - startMs) / widthMs)];
    if (bucket) addRow(bucket, row);
  }
  return sums;
}

export type Formula = (s: Sums) => number;

/** Division by zero gives 0. */
const div = (a: number, b: number): number => (b === 0 ? 0 : a / b);
/** Min and max of no rows give 0. */
const MN = (s: Sums): number => (s.rows === 0 ? 0 : s.mn);
const MX = (s: Sums): number => (s.rows === 0 ? 0 : s.mx);

const perCall: Formula = (s) => 1000 * div(s.t, s.c);
const perMinute: Formula = (s) => 60 * div(s.c, s.w);
const count: Formula = (s) => s.c;
const mean: Formula = (s) => div(s.t, s.c);
const percentOfCalls: Formula = (s) => 100 * div(s.t, s.c);
const percentOfTime: Formula = (s) => 100 * div(s.t, s.w);
/** EndUser's network time: total minus front end minus application time. */
const network = (s: Sums): number => s.t - s.x - s.q;

/** Formulas by value name, for every kind unless KIND_FORMULAS overrides them. */
const FORMULAS: Record<string, Formula> = {
  average_response_time: perCall,
  average_call_time: perCall,
  average_time: perCall,
  calls_per_minute: perMinute,
  requests_per_minute: perMinute,
  errors_per_minute: perMinute,
  call_count: count,
  count,
  error_count: count,
  min_response_time: (s) => 1000 * MN(s),
  max_response_time: (s) => 1000 * MX(s),
  average_exclusive_time: (s) => 1000 * div(s.x, s.c),
  average_value: mean,
  used_mb_by_host: mean,
  total_call_time_per_minute: (s) => 60 * div(s.t, s.w),
  standard_deviation: (s) => 1000 * Math.sqrt(Math.max(0, div(s.q, s.c) - div(s.t, s.c) ** 2)),
  used_bytes_by_host: (s) => 1_048_576 * div(s.t, s.c),
  total_used_mb: (s) => s.t,
  total_value: (s) => s.t,
  min_value: MN,
  max_value: MX,
  rate: (s) => div(s.t, s.w),
  throughput: (s) => div(s.c, s.w),
  as_percentage: percentOfCalls,
  percent: percentOfCalls,
  time_percentage: percentOfTime,
  utilization: percentOfTime,
  total_time: (s) => 1000 * s.t,
};

/** Apdex rows store satisfied, tolerating and frustrated counts in count, total and totalExclusive. */
const apdexScore: Formula = (s) => div(s.c + s.t / 2, s.c + s.t + s.x);

const KIND_FORMULAS: Partial<Record<MetricKind, Record<string, Formula>>> = {
  apdex: {
    s: (s) => s.c,
    t: (s) => s.t,
    f: (s) => s.x,
    count: (s) => s.c + s.t + s.x,
    score: apdexScore,
    value: apdexScore,
    threshold: MX,
    threshold_min: MN,
  },
  'end-user': {
    average_fe_response_time: (s) => 1000 * div(s.x, s.c),
    average_be_response_time: (s) => 1000 * div(s.t - s.x, s.c),
    average_network_time: (s) => 1000 * div(network(s), s.c),
    total_network_time: network,
    network_time_percentage: (s) => 100 * div(network(s), s.w),
    total_fe_time: (s) => s.x,
    fe_time_percentage: (s) => 100 * div(s.x, s.w),
    total_app_time: (s) => s.q,
    average_app_time: (s) => div(s.q, s.c),
  },
  'end-user-rb': {
    average_dom_content_load_time: perCall,
    average_queue_time: (s) => 1000 * div(s.x, s.c),
    total_queue_time: (s) => 1000 * s.x,
    total_dom_content_time: (s) => 1000 * s.t,
  },
  'cpu-time': { percent: percentOfTime },
};

export function formulaFor(kind: MetricKind, value: string): Formula {
  const formula = KIND_FORMULAS[kind]?.[value] ?? FORMULAS[value];
  // Value names come from the catalog, never from the request: a miss is a bug here.
  if (!formula) throw new Error(`No formula for ${kind} value ${value}`);
  return formula;
}
