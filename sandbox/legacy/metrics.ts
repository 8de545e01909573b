/**
 * The legacy face's metric endpoints: `metrics.json` (metric names) and `metrics/data.json`
 * (timeslice data), answered as REST v2 would, by docs/metric-data-rules.md applied straight to
 * the raw timeslice rows. This is the reference the gateway's NRQL translation is compared
 * against, so it shares no code with it: parameters, timestamps, buckets and formulas are all
 * worked out here, in plain arithmetic over the rows.
 *
 * The rows read here are the unscoped ones (timeslices.ts rowsOf): REST v2's metric data had no
 * scope, so a segment metric's scoped rows (behaviour scopedTimeslices) never count here.
 *
 * routes.ts routes here with the target already resolved for the caller's account: an app, a
 * host or an instance of one (their rows split by instance-split.ts), or a mobile app.
 */
import { createHash } from 'node:crypto';
import { MetricTitles } from './titles.ts';
import { V2Error, CONTENT_TYPES, serialise, type V2Body, type V2Format, isoSeconds, type JsonValue } from './wire.ts';
import type { SandboxData } from '../model.ts';
import { metricsOf, rowsOf, type MetricKind, type MetricOwner, type SandboxMetric, type TimesliceRow } from '../timeslices.ts';
import { CACHE_CONTROL, etagMatches } from './common.ts';

/** An APM app's own rows. */
export function appMetricSource(owner: MetricOwner): MetricSource {
  return { owner, rowsOf: (metric, since, until, now) => rowsOf(owner, metric, since, until, now) };
}

/** Whose metrics a request reads: the owner's catalog, and the target's rows of a metric. */
export interface MetricSource {
  owner: MetricOwner;
  /** The target's rows starting in [since, until), oldest first (rowsOf, hostRowsOf, instanceRowsOf). */
  rowsOf(metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[];
}

export interface MetricRequest {
  source: MetricSource;
  data: SandboxData;
  format: V2Format;
  /** The request clock, epoch ms. */
  now: number;
  /** Every value of a parameter in any spelling (`names[]`, `names`, `names[0]`), query string first, then the form body. */
  param(key: string): string[];
  ifNoneMatch: string | undefined;
  /** Legacy jitter (createSandbox `legacyJitter`): a draw in [0, 1) per call; absent when off. */
  jitter?: () => number;
}

export interface NamesRequest extends MetricRequest {
  /** The requested page, already validated as for the applications list. */
  page: number;
  /** v2's Link header for this request at `page` of `lastPage`. */
  link(page: number, lastPage: number): string | undefined;
}

const NAMES_PAGE_SIZE = 1000;
const MAX_NAMES = 100;
const MAX_NAME_LENGTH = 1024;
const MAX_TIMESLICES = 366;
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
/** Starts older than this get ten-point answers (the data there is hourly rollups). */
const OLD_START_SECONDS = 8 * DAY;

const invalid = (title: string): V2Error => new V2Error(422, title);
const floorTo = (value: number, step: number): number => Math.floor(value / step) * step;
const ceilTo = (value: number, step: number): number => Math.ceil(value / step) * step;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Every metric the owner has reported by `now`: REST v2 knew every name ever reported. */
function knownMetrics(owner: MetricOwner, data: SandboxData, now: number): SandboxMetric[] {
  return metricsOf(owner, data).filter((metric) => metric.since <= now);
}

/** Plain `<` on strings compares UTF-16 code units, as v2's sort did. */
const byName = (a: SandboxMetric, b: SandboxMetric): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function reply(format: V2Format, body: V2Body, headers: Record<string, string> = {}): Response {
  return new Response(serialise(body, format), { status: 200, headers: { 'content-type': CONTENT_TYPES[format], ...headers } });
}

// ---------------------------------------------------------------------------------------------
// metrics.json

export function legacyMetricNames(req: NamesRequest): Response {
  const filter = req.param('name').at(-1) ?? '';
  const matching = knownMetrics(req.source.owner, req.data, req.now)
    .filter((metric) => metric.name.includes(filter))
    .sort(byName);
  const metrics = matching
    .slice((req.page - 1) * NAMES_PAGE_SIZE, req.page * NAMES_PAGE_SIZE)
    .map((metric) => ({ name: metric.name, values: [...metric.values] }));
  const link = req.link(req.page, Math.ceil(matching.length / NAMES_PAGE_SIZE));
  return reply(req.format, { metrics }, link ? { link } : {});
}

// ---------------------------------------------------------------------------------------------
// metrics/data.json: parameters (rules §1, §2)

interface DataParams {
  names: string[];
  /** undefined: every value of each metric. */
  values: string[] | undefined;
  /** Epoch seconds. */
  from: number;
  to: number;
  /** Seconds; 0 means the default granularity. */
  period: number;
  summarize: boolean;
}

/** Order kept, duplicates (first kept) and empty values dropped. */
const distinct = (list: string[]): string[] => [...new Set(list.filter((value) => value !== ''))];

function dataParams(req: MetricRequest, options: DataOptions): DataParams {
  const names = distinct([...req.param('names'), ...(options.nameAlias ? req.param('name') : [])]);
  if (names.length === 0) throw invalid(MetricTitles.namesRequired);
  if (names.length > MAX_NAMES) throw invalid(MetricTitles.tooManyNames);
  const values = distinct(req.param('values'));
  const from = timeParam(req, 'from');
  const to = timeParam(req, 'to') ?? Math.floor(req.now / 1000);
  const period = periodParam(req);
  const summarize = flagParam(req, 'summarize');
  flagParam(req, 'raw'); // validated only: output is never rounded
  const start = from ?? to - 30 * MINUTE;
  if (start < 0) throw invalid(MetricTitles.timeBeforeEpoch('from'));
  return { names, values: values.length > 0 ? values : undefined, from: start, to, period, summarize };
}

function lastValue(req: MetricRequest, key: string): string | undefined {
  return req.param(key).at(-1);
}

function timeParam(req: MetricRequest, key: 'from' | 'to'): number | undefined {
  const text = lastValue(req, key);
  if (text === undefined || text === '') return undefined;
  const seconds = parseTime(text);
  if (seconds === undefined) throw invalid(MetricTitles.badTime(key));
  if (seconds < 0) throw invalid(MetricTitles.timeBeforeEpoch(key));
  return seconds;
}

function periodParam(req: MetricRequest): number {
  const text = lastValue(req, 'period')?.trim();
  if (text === undefined || text === '') return 0;
  // Twelve digits cover any range of years 0001-9999 many times over and keep times printable.
  if (!/^\d{1,12}$/.test(text) || Number(text) % MINUTE !== 0) throw invalid(MetricTitles.periodNotMinutes);
  return Number(text);
}

const TRUE_WORDS = ['true', '1', 'yes', 'on', 't'];
const FALSE_WORDS = ['false', '0', 'no', 'off', 'f', ''];

function flagParam(req: MetricRequest, key: 'summarize' | 'raw'): boolean {
  const text = lastValue(req, key)?.trim().toLowerCase();
  if (text === undefined || FALSE_WORDS.includes(text)) return false;
  if (TRUE_WORDS.includes(text)) return true;
  throw invalid(`Invalid parameter ${key}: expected true or false`);
}

/**
 * `YYYY-MM-DD[T| ]HH:MM[:SS[.fraction]][zone]` or a bare date, zone `Z`, `±HH:MM`, `±HHMM`,
 * `±HH`, or ` HH:MM`/` HHMM` (a `+` that arrived as a space).
 */
const TIME =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[T ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.\d+)?)?(?<zone>Z|[+-]\d{2}(?::?\d{2})?| \d{2}:?\d{2})?)?$/i;

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Epoch seconds of a v2 timestamp (fraction truncated), or undefined when it is not one. */
export function parseTime(text: string): number | undefined {
  const groups = TIME.exec(text)?.groups;
  if (!groups) return undefined;
  const field = (name: string): number => Number(groups[name] ?? 0);
  const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map(field) as [number, number, number, number, number, number];
  const monthDays = (DAYS_IN_MONTH[month - 1] ?? 0) + (month === 2 && isLeap(year) ? 1 : 0);
  if (year < 1 || day < 1 || day > monthDays || hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = zoneOffsetSeconds(groups.zone);
  if (offset === undefined) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const seconds = date.getTime() / 1000 - offset;
  // Past 9999-12-31T23:59:59Z no four-digit year can write it back.
  return seconds > 253_402_300_799 ? undefined : seconds;
}

function zoneOffsetSeconds(zone: string | undefined): number | undefined {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * HOUR + minutes * MINUTE);
}

// ---------------------------------------------------------------------------------------------
// Range, granularity, buckets (rules §3)

/** `count` buckets of `width` seconds from `start` (epoch seconds). */
interface Buckets {
  start: number;
  width: number;
  count: number;
  /** One summarized timeslice, whose `to` is v2's inclusive `…:59`. */
  summarized: boolean;
}

/** Default granularity by range length: [longest length, seconds]. */
const GRANULARITY: ReadonlyArray<readonly [number, number]> = [
  [3 * HOUR, 60],
  [6 * HOUR, 120],
  [14 * HOUR, 300],
  [24 * HOUR, 600],
  [4 * DAY, 1800],
  [7 * DAY, 3600],
  [21 * DAY, 10_800],
  [42 * DAY, 21_600],
  [63 * DAY, 43_200],
];
const LONGEST_GRANULARITY = 259_200;

function defaultGranularity(length: number): number {
  return GRANULARITY.find(([limit]) => length <= limit)?.[1] ?? LONGEST_GRANULARITY;
}

function bucketsFor(params: DataParams, now: number): Buckets {
  const { from, to, period, summarize } = params;
  const length = to - from;
  if (length < MINUTE) throw invalid(MetricTitles.timeRangeTooShort);
  const tenPoint = from * 1000 < now - OLD_START_SECONDS * 1000 && length <= 4 * DAY;
  const tenStart = floorTo(from, HOUR);
  const minimum = tenPoint ? (ceilTo(to, HOUR) - tenStart) / 10 : defaultGranularity(length);
  if (period !== 0 && period < minimum) throw invalid(MetricTitles.periodTooSmall(minimum));
  if (summarize) {
    const start = floorTo(from, MINUTE);
    return { start, width: floorTo(to, MINUTE) - start, count: 1, summarized: true };
  }
  if (tenPoint && period === 0) return { start: tenStart, width: minimum, count: 10, summarized: false };
  const width = period || minimum;
  const start = floorTo(from, width);
  // The bucket holding `to` is left out unless it is the only one.
  const end = Math.max(floorTo(to, width), start + width);
  const count = (end - start) / width;
  if (count > MAX_TIMESLICES) throw invalid(MetricTitles.tooManyTimeslices);
  return { start, width, count, summarized: false };
}

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
function bucketSums(source: MetricSource, metric: SandboxMetric, buckets: Buckets, now: number): Sums[] {
  const sums = Array.from({ length: buckets.count }, () => emptySums(buckets.width));
  const startMs = buckets.start * 1000;
  const widthMs = buckets.width * 1000;
  for (const row of source.rowsOf(metric, startMs, startMs + buckets.count * widthMs, now)) {
    const bucket = sums[Math.floor((row.start - startMs) / widthMs)];
    if (bucket) addRow(bucket, row);
  }
  return sums;
}

type Formula = (s: Sums) => number;

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

function formulaFor(kind: MetricKind, value: string): Formula {
  const formula = KIND_FORMULAS[kind]?.[value] ?? FORMULAS[value];
  // Value names come from the catalog, never from the request: a miss is a bug here.
  if (!formula) throw new Error(`No formula for ${kind} value ${value}`);
  return formula;
}

// ---------------------------------------------------------------------------------------------
// metrics/data.json: the answer (rules §4, §6)

/** Names with control characters or over 1024 characters are never looked up. */
const lookable = (name: string): boolean => name.length <= MAX_NAME_LENGTH && !CONTROL.test(name);

function metricEntry(req: MetricRequest, metric: SandboxMetric, wanted: string[] | undefined, buckets: Buckets): V2Body {
  const values = wanted ? wanted.filter((value) => metric.values.includes(value) || (metric.kind === 'call' && value === 'average_call_time')) : metric.values;
  const formulas = values.map((value) => [value, formulaFor(metric.kind, value)] as const);
  const timeslices = bucketSums(req.source, metric, buckets, req.now).map((sums, k): JsonValue => {
    const from = buckets.start + k * buckets.width;
    const to = from + buckets.width - (buckets.summarized ? 1 : 0);
    return {
      from: isoSeconds(from * 1000),
      to: isoSeconds(to * 1000),
      values: Object.fromEntries(formulas.map(([value, formula]) => [value, formula(sums)])),
    };
  });
  return { name: metric.name, timeslices };
}

/** `nameAlias`: a single `name` is one more name (MOBILE-REST sends `name=Mobile/Crash/All`). */
export interface DataOptions {
  nameAlias?: boolean;
}

export function legacyMetricData(req: MetricRequest, options: DataOptions = {}): Response {
  const params = dataParams(req, options);
  const buckets = bucketsFor(params, req.now);
  const known = new Map(knownMetrics(req.source.owner, req.data, req.now).map((metric) => [metric.name, metric]));
  const found = params.names.filter((name) => lookable(name) && known.has(name));
  const metrics = found.map((name) => metricEntry(req, known.get(name) as SandboxMetric, params.values, buckets));
  if (req.jitter && newestIsOpen(buckets, req.now)) jitterNewest(metrics, 1 + (req.jitter() - 0.5) * 2 * JITTER);
  const body: V2Body = {
    metric_data: {
      from: isoSeconds(params.from * 1000),
      to: isoSeconds(params.to * 1000),
      metrics_not_found: params.names.filter((name) => !found.includes(name)),
      metrics_found: found,
      metrics,
    },
  };
  return withEtag(req, serialise(body, req.format));
}

// ---------------------------------------------------------------------------------------------
// Legacy jitter: the newest timeslice was still filling in v2 (agents report up to a minute
// late), so two calls a moment apart saw it with different values, while closed timeslices
// never changed. With `legacyJitter` on, the face shows that: each call scales every value of
// the newest timeslice by its own factor within ±JITTER; counts stay whole numbers.

/** At most ±1 %. */
const JITTER = 0.01;
/** A timeslice ending less than this before now was still open (seconds). */
const OPEN_SECONDS = 2 * MINUTE;

function newestIsOpen(buckets: Buckets, now: number): boolean {
  const end = buckets.start + buckets.count * buckets.width;
  return end * 1000 > now - OPEN_SECONDS * 1000;
}

function jitterNewest(metrics: V2Body[], factor: number): void {
  for (const metric of metrics) {
    const timeslices = metric.timeslices as Array<{ values: Record<string, JsonValue> }>;
    const newest = timeslices.at(-1);
    if (!newest) continue;
    for (const [key, value] of Object.entries(newest.values)) {
      if (typeof value !== 'number' || value === 0) continue;
      newest.values[key] = Number.isInteger(value) ? Math.max(0, Math.round(value * factor)) : Number((value * factor).toPrecision(12));
    }
  }
}


/** A 200 with a strong ETag of the body, or a bodiless 304 when the client already has it. */
function withEtag(req: MetricRequest, text: string): Response {
  const etag = `"${createHash('sha256').update(text).digest('hex')}"`;
  const headers = { etag, 'cache-control': CACHE_CONTROL };
  if (etagMatches(req.ifNoneMatch, etag)) return new Response(null, { status: 304, headers });
  return new Response(text, { status: 200, headers: { 'content-type': CONTENT_TYPES[req.format], ...headers } });
}

