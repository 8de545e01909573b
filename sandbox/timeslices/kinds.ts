/**
 * Synthetic metric timeslice data: the raw rows both sandbox faces compute metric answers
 * from. The NerdGraph face's NRQL engine (../nrql/engine.ts) aggregates them as NRDB would; the
 * legacy face applies the REST v2 rules to them directly.
 *
 * A row is one timeslice of one metric of one application, with the six fields New Relic
 * agents report (rest-v2.md §1.1): count, total, totalExclusive, min, max, sumOfSquares, the
 * times in seconds. Rows are never stored: each is a pure function of (app, metric, start), so
 * any range of any app costs only the rows it touches, and the same world comes back every run.
 *
 * Resolution follows NRDB's retention: rows younger than ROLLUP_AGE_MS are per minute; older
 * data exists only as hourly rollups (start on the hour, counts and totals of the whole hour).
 *
 * This file holds the shapes (owners, metric kinds and their REST v2 value names, a metric, a
 * row) and the clock units; catalog.ts lists each owner's metrics, rows.ts makes their rows,
 * scopes.ts their scoped rows; ../timeslices.ts re-exports all four.
 */
import type { SandboxApp, SandboxMobileApp } from '../model.ts';

/**
 * What a series of rows belongs to: an APM app, or a mobile app (whose rows NRQL selects by
 * `entity.guid`). Browser apps' EndUser metrics stay on their APM app, as before.
 */
export type MetricOwner = SandboxApp | SandboxMobileApp;

/** Mobile apps carry an application token; APM apps never do. */
export function isMobileOwner(owner: MetricOwner): owner is SandboxMobileApp {
  return 'applicationToken' in owner;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** Data older than this is kept as hourly rollups only (REST v2's "start older than 8 days"). */
export const ROLLUP_AGE_MS = 8 * DAY_MS;

/** What a metric measures, which decides how its rows are generated and its REST value set. */
export type MetricKind =
  | 'call'
  | 'apdex'
  | 'end-user'
  | 'end-user-rb'
  | 'errors'
  | 'memory'
  | 'cpu-time'
  | 'cpu-utilization'
  | 'gc'
  /** Only `count` carries data (mobile sessions and crashes); the times are zero. */
  | 'count';

/** REST v2 value names per kind, as `metrics.json` lists them (rest-v2-shapes.md §3). */
export const VALUES_BY_KIND: Record<MetricKind, readonly string[]> = {
  call: [
    'average_response_time', 'calls_per_minute', 'call_count', 'min_response_time', 'max_response_time',
    'average_exclusive_time', 'average_value', 'total_call_time_per_minute', 'requests_per_minute', 'standard_deviation',
  ],
  apdex: ['s', 't', 'f', 'count', 'score', 'value', 'threshold', 'threshold_min'],
  'end-user': [
    'average_response_time', 'average_fe_response_time', 'average_be_response_time', 'average_network_time',
    'total_network_time', 'network_time_percentage', 'total_fe_time', 'fe_time_percentage', 'total_app_time',
    'average_app_time', 'call_count', 'calls_per_minute', 'requests_per_minute',
  ],
  'end-user-rb': ['average_dom_content_load_time', 'average_queue_time', 'total_queue_time', 'total_dom_content_time', 'call_count'],
  errors: ['error_count', 'errors_per_minute'],
  memory: ['used_bytes_by_host', 'used_mb_by_host', 'total_used_mb'],
  'cpu-time': ['percent', 'average_time', 'total_time'],
  'cpu-utilization': ['percent'],
  count: ['call_count', 'calls_per_minute'],
  gc: ['as_percentage', 'average_time', 'calls_per_minute', 'max_value', 'total_call_time_per_minute', 'utilization'],
};

export interface SandboxMetric {
  /** The metric timeslice name (NRQL `metricTimesliceName`). */
  name: string;
  kind: MetricKind;
  /** REST v2 value names of this metric (VALUES_BY_KIND[kind]). */
  values: readonly string[];
  /** Epoch ms, on the hour: the first row starts here or later. */
  since: number;
  /** Epoch ms, on the hour: rows start before this; Infinity while the metric still reports. */
  until: number;
  /** 1: a row every minute (or hour); k: only where the minute (or hour) index is a multiple of k. */
  every: number;
  /** Mixed into every row's hash, so metrics of one app differ. */
  seed: number;
}

export interface TimesliceRow {
  /** Epoch ms of the slice start. */
  start: number;
  /** MINUTE_MS, or HOUR_MS for rollups. */
  durationMs: number;
  count: number;
  /** Seconds (or the metric's own unit: MB, utilisation, apdex T count). */
  total: number;
  totalExclusive: number;
  min: number;
  max: number;
  sumOfSquares: number;
}

export const floorTo = (ms: number, step: number): number => Math.floor(ms / step) * step;
export const ceilTo = (ms: number, step: number): number => Math.ceil(ms / step) * step;
