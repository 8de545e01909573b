/**
 * Synthetic metric timeslice data: the raw rows both sandbox faces compute metric answers
 * from. The NerdGraph face's NRQL engine (nrql/engine.ts) aggregates them as NRDB would; the
 * legacy face applies the REST v2 rules to them directly.
 *
 * A row is one timeslice of one metric of one application, with the six fields New Relic
 * agents report (rest-v2.md §1.1): count, total, totalExclusive, min, max, sumOfSquares, the
 * times in seconds. Rows are never stored: each is a pure function of (app, metric, start), so
 * any range of any app costs only the rows it touches, and the same world comes back every run.
 *
 * Resolution follows NRDB's retention: rows younger than ROLLUP_AGE_MS are per minute; older
 * data exists only as hourly rollups (start on the hour, counts and totals of the whole hour).
 */
import { fnv1a32 } from './ids.ts';
import type { SandboxApp, SandboxData, SandboxMobileApp } from './model.ts';

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

/** Metric names with the shapes real clients send (client-behaviour.md §5, §9). */
const SPECIAL_NAMES = {
  quoted: `Custom/O'Brien "quoted" \\ job`,
  regexUri: 'WebTransaction/Expressjs/GET//users/{id:[\\w_\\-]}',
  brackets: 'WebTransaction/Uri/api/items[id]',
  spaces: 'WebTransaction/SpringController/foo (GET)',
} as const;

/** Segment metrics of the kinds agents record both scoped and unscoped (see scopesOf). */
export const SEGMENT_NAMES = {
  datastore: 'Datastore/statement/MySQL/users/select',
  external: 'External/api.example.com/Net::HTTP/GET',
  /** Ruby apps only: the Ruby agent records the controller metric scoped to its own transaction. */
  rubyController: 'Controller/users/show',
} as const;

/** Names that stopped or started reporting, relative to when the world was generated. */
export const LIFECYCLE_NAMES = {
  /** Stopped 2 days before generation: known, no recent data (REST answers zeros). */
  retired: 'WebTransaction/Custom/retired',
  /** Stopped 30 days before generation: known to REST v2 for ever. */
  archived: 'Custom/Archive/legacy-job',
  /** Started 1 day before generation. */
  recent: 'Custom/Recent/feature-flag',
} as const;

/** The bulk app (see bulkMetricsApp) has this many extra metrics, for name paging. */
export const BULK_METRIC_COUNT = 2_345;
const BULK_APP_INDEX = 3;

const bulkApps = new WeakMap<SandboxData, SandboxApp | null>();

/**
 * The app with BULK_METRIC_COUNT extra `Custom/Bulk/job-NNNN` metrics: the first reporting app
 * of the primary account from its 4th app on (reporting, so every name is in any look-back).
 */
export function bulkMetricsApp(data: SandboxData): SandboxApp | undefined {
  let app = bulkApps.get(data);
  if (app === undefined) {
    const primary = data.apps.filter((candidate) => candidate.accountId === data.accounts[0]?.id);
    app = primary.slice(BULK_APP_INDEX).find((candidate) => candidate.reporting) ?? null;
    bulkApps.set(data, app);
  }
  return app ?? undefined;
}

/** When regular metrics began reporting: fixed, so row values never depend on the clock. */
const DATA_EPOCH = Date.UTC(2023, 0, 1);

const floorTo = (ms: number, step: number): number => Math.floor(ms / step) * step;
const ceilTo = (ms: number, step: number): number => Math.ceil(ms / step) * step;

const catalogs = new WeakMap<MetricOwner, SandboxMetric[]>();

/** Every metric the app has ever reported (REST v2's "every metric name ever known"). */
export function metricsOf(app: MetricOwner, data: SandboxData): SandboxMetric[] {
  let catalog = catalogs.get(app);
  if (!catalog) {
    catalog = isMobileOwner(app) ? buildMobileCatalog(app, data) : buildCatalog(app, data);
    catalogs.set(app, catalog);
  }
  return catalog;
}

/** Looks a metric up by exact name (names are case-sensitive, as in REST v2 and NRQL). */
export function findMetric(app: MetricOwner, data: SandboxData, name: string): SandboxMetric | undefined {
  return metricsOf(app, data).find((metric) => metric.name === name);
}

type CatalogEntry = [string, MetricKind, Partial<Pick<SandboxMetric, 'since' | 'until' | 'every'>>?];

function catalogMetrics(owner: MetricOwner, data: SandboxData, entries: CatalogEntry[]): SandboxMetric[] {
  // A non-reporting app's metrics all stopped when it stopped.
  const stopped = owner.reporting ? Infinity : floorTo(owner.lastReportingChangeAt, HOUR_MS);
  // Mobile ids live in their own id space: keep their seeds apart from APM apps'.
  const prefix = isMobileOwner(owner) ? `mobile|${owner.id}` : String(owner.id);
  return entries.map(([name, kind, overrides = {}]) => ({
    name,
    kind,
    values: VALUES_BY_KIND[kind],
    since: overrides.since ?? DATA_EPOCH,
    until: Math.min(overrides.until ?? Infinity, stopped),
    every: overrides.every ?? 1,
    seed: fnv1a32(`${prefix}|${name}`),
  }));
}

/**
 * The `Apdex/…` metric of a key transaction: its metric name without the first segment
 * (`WebTransaction/Uri/kt/slug` -> `Apdex/Uri/kt/slug`), as REST v2 names transaction apdex.
 */
export function keyTransactionApdexName(metricName: string): string {
  const slash = metricName.indexOf('/');
  return `Apdex/${slash === -1 ? metricName : metricName.slice(slash + 1)}`;
}

/**
 * A mobile app's timeslices. Names from rest-v2.md §1.4-1.5 and routes-next.md §3: crash rate
 * is `Mobile/Crash/All:call_count / Session/Start:call_count`; launch_count is `count(v)`
 * (taking it on Session/Start is INFER). The reference names no network or interaction metric: External/all
 * (HTTP request times, shaped like an APM external call) is INFER, and no interaction metric
 * is invented.
 */
const MOBILE_ENTRIES: CatalogEntry[] = [
  ['Session/Start', 'count'],
  ['Mobile/Crash/All', 'count'],
  ['External/all', 'call'],
];

function buildMobileCatalog(app: SandboxMobileApp, data: SandboxData): SandboxMetric[] {
  return catalogMetrics(app, data, MOBILE_ENTRIES);
}

function buildCatalog(app: SandboxApp, data: SandboxData): SandboxMetric[] {
  const generated = floorTo(data.generatedAt, HOUR_MS);
  const entries: CatalogEntry[] = [
    ['HttpDispatcher', 'call'],
    ['WebTransaction', 'call'],
    ['WebTransactionTotalTime', 'call'],
    ['OtherTransaction/all', 'call'],
    ['WebFrontend/QueueTime', 'call'],
    ['Apdex', 'apdex'],
    ['Apdex/Uri/checkout', 'apdex'],
    ['Errors/all', 'errors'],
    ['Datastore/all', 'call'],
    ['Datastore/MySQL/allWeb', 'call'],
    ['External/all', 'call'],
    ['External/allWeb', 'call'],
    ['External/api.example.com/all', 'call', { every: 3 }],
    // Segment metrics recorded scoped as well as unscoped (see scopesOf).
    [SEGMENT_NAMES.datastore, 'call'],
    [SEGMENT_NAMES.external, 'call', { every: 3 }],
    ['Memory/Physical', 'memory'],
    ['CPU/User Time', 'cpu-time'],
    ['CPU/User/Utilization', 'cpu-utilization'],
    ['Agent/MetricsReported/count', 'call'],
    [SPECIAL_NAMES.spaces, 'call'],
    [SPECIAL_NAMES.brackets, 'call'],
    [SPECIAL_NAMES.regexUri, 'call', { every: 2 }],
    [SPECIAL_NAMES.quoted, 'call'],
    [LIFECYCLE_NAMES.retired, 'call', { until: generated - 2 * DAY_MS }],
    [LIFECYCLE_NAMES.archived, 'call', { until: generated - 30 * DAY_MS }],
    [LIFECYCLE_NAMES.recent, 'call', { since: generated - DAY_MS }],
  ];
  if (app.language === 'java') entries.push(['GC/System/Pauses', 'gc']);
  if (app.language === 'ruby') entries.push([SEGMENT_NAMES.rubyController, 'call']);
  if (app.browser) entries.push(['EndUser', 'end-user'], ['EndUser/Apdex', 'apdex'], ['EndUser/RB', 'end-user-rb']);
  if (bulkMetricsApp(data) === app) {
    for (let i = 1; i <= BULK_METRIC_COUNT; i++) entries.push([`Custom/Bulk/job-${String(i).padStart(4, '0')}`, 'call']);
  }
  // Key transactions are read at build time: the catalog is built once per app.
  const known = new Set(entries.map(([name]) => name));
  for (const kt of data.keyTransactions) {
    if (kt.appId !== app.id) continue;
    for (const [name, kind] of [[kt.metricName, 'call'], [keyTransactionApdexName(kt.metricName), 'apdex']] as const) {
      if (!known.has(name)) entries.push([name, kind]);
      known.add(name);
    }
  }
  return catalogMetrics(app, data, entries);
}

/** Start of the hourly-rollup region: rows before it are hourly, rows from it on per minute. */
export function rollupBoundary(now: number): number {
  return floorTo(now - ROLLUP_AGE_MS, HOUR_MS);
}

/**
 * Start times (and durations) of the metric's rows that start in [since, until), oldest first.
 * Rows exist only for completed minutes: nothing starts at or after the current minute.
 */
export function* rowStarts(metric: SandboxMetric, since: number, until: number, now: number): Generator<[number, number]> {
  const from = Math.max(since, metric.since);
  const to = Math.min(until, metric.until, floorTo(now, MINUTE_MS));
  if (from >= to) return;
  const boundary = rollupBoundary(now);
  for (let start = ceilTo(from, HOUR_MS); start < Math.min(to, boundary); start += HOUR_MS) {
    if ((start / HOUR_MS) % metric.every === 0) yield [start, HOUR_MS];
  }
  for (let start = ceilTo(Math.max(from, boundary), MINUTE_MS); start < to; start += MINUTE_MS) {
    if ((start / MINUTE_MS) % metric.every === 0) yield [start, MINUTE_MS];
  }
}

/** Does the metric have at least one row starting in [since, until)? (Cheap: stops at the first.) */
export function hasRows(metric: SandboxMetric, since: number, until: number, now: number): boolean {
  return !rowStarts(metric, since, until, now).next().done;
}

/** The metric's rows starting in [since, until), oldest first. */
export function rowsOf(app: MetricOwner, metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[] {
  const rows: TimesliceRow[] = [];
  for (const [start, durationMs] of rowStarts(metric, since, until, now)) rows.push(rowAt(app, metric, start, durationMs));
  return rows;
}

/** Uniform numbers in [0, 1) from (metric, slice, draw): a stateless hash, so rows are random-access. */
function uniform(seed: number, slice: number, draw: number): number {
  let h = Math.imul(seed ^ Math.imul(slice | 0, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(draw + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** One row of one metric. Hourly rollups carry an hour's worth of counts and totals. */
export function rowAt(owner: MetricOwner, metric: SandboxMetric, start: number, durationMs: number): TimesliceRow {
  const minutes = durationMs / MINUTE_MS;
  const slice = Math.floor(start / MINUTE_MS);
  const u = (draw: number): number => uniform(metric.seed, slice, draw);
  const app = isMobileOwner(owner) ? null : owner;
  const hosts = app?.hosts.length ?? 0;
  const row = (count: number, total: number, totalExclusive: number, min: number, max: number, sumOfSquares: number): TimesliceRow => ({
    start,
    durationMs,
    count,
    total,
    totalExclusive,
    min,
    max,
    sumOfSquares,
  });
  switch (metric.kind) {
    case 'call':
    case 'gc': {
      const rate = metric.kind === 'gc' ? 20 + (metric.seed % 80) : 1 + (metric.seed % 400);
      const count = Math.max(1, Math.round(rate * minutes * (0.5 + u(0))));
      const mean = (metric.kind === 'gc' ? 0.0005 : 0.005 + (metric.seed % 900) / 1000) * (0.5 + u(1));
      const total = count * mean;
      return row(count, total, total * (0.3 + 0.6 * u(2)), mean * (0.1 + 0.4 * u(3)), mean * (1.5 + 3 * u(4)), count * mean * mean * (1 + 0.5 * u(5)));
    }
    case 'apdex': {
      const samples = Math.max(1, Math.round((10 + (metric.seed % 300)) * minutes * (0.5 + u(0))));
      const satisfied = Math.round(samples * (0.5 + 0.45 * u(1)));
      const tolerating = Math.round((samples - satisfied) * u(2));
      const threshold = metric.name === 'EndUser/Apdex' ? (app?.browser?.apdexTarget ?? 7) : (app?.apdexTarget ?? 0.5);
      return row(satisfied, tolerating, samples - satisfied - tolerating, threshold, threshold, 0);
    }
    case 'end-user': {
      const views = Math.max(1, Math.round((5 + (metric.seed % 200)) * minutes * (0.5 + u(0))));
      const load = 0.5 + 4 * u(1);
      const total = views * load;
      // The EndUser formulas read the application time from sumOfSquares (rest-v2.md §1.4).
      return row(views, total, total * (0.4 + 0.2 * u(2)), load * 0.2, load * (2 + u(3)), total * (0.1 + 0.2 * u(4)));
    }
    case 'end-user-rb': {
      const views = Math.max(1, Math.round((5 + (metric.seed % 200)) * minutes * (0.5 + u(0))));
      const dom = 0.2 + 2 * u(1);
      return row(views, views * dom, views * dom * 0.1 * u(2), dom * 0.3, dom * 3, views * dom * dom * 1.2);
    }
    case 'errors': {
      const count = Math.round((metric.seed % 30) * minutes * u(0));
      return row(count, 0, 0, 0, 0, 0);
    }
    case 'count': {
      // Sessions start at 25+ a minute; crashes stay under 3 a minute, so crash rate < 100 %.
      const count =
        metric.name === 'Mobile/Crash/All' ? Math.round((metric.seed % 4) * minutes * u(0))
        : Math.max(1, Math.round((50 + (metric.seed % 250)) * minutes * (0.5 + u(0))));
      return row(count, 0, 0, 0, 0, 0);
    }
    case 'memory': {
      const mb = 256 + (metric.seed % 3840) * (0.9 + 0.2 * u(0));
      const count = hosts * minutes;
      return row(count, count * mb, count * mb, mb * 0.9, mb * 1.1, count * mb * mb);
    }
    case 'cpu-time': {
      const utilisation = 0.05 + 0.85 * u(0);
      const count = hosts * minutes;
      const seconds = count * 60 * utilisation;
      return row(count, seconds, seconds, 60 * utilisation * 0.8, 60 * utilisation * 1.2, count * (60 * utilisation) ** 2);
    }
    case 'cpu-utilization': {
      const utilisation = 0.05 + 0.85 * u(0);
      const count = hosts * minutes;
      return row(count, count * utilisation, count * utilisation, utilisation * 0.8, utilisation * 1.2, count * utilisation ** 2);
    }
  }
}

// ---------------------------------------------------------------- scoped timeslices

/**
 * Scoped timeslices (behaviour `scopedTimeslices`, behaviours.ts). Agents record a segment
 * metric (a datastore statement, an external call, a custom method tracer, the Ruby agent's
 * `Controller/...`) twice: unscoped, and scoped to the transaction it ran in. New Relic's page
 * "Query APM metric timeslice data with NRQL" (docs.newrelic.com/docs/data-apis/understand-data/
 * metric-data/query-apm-metric-timeslice-data-nrql, attribute table: `scope`, optional, "the
 * name of the legacy metric timeslice this metric is scoped to"; its example breaks one
 * transaction down with `WHERE appName = ... AND scope = 'Controller/users/show' FACET
 * metricTimesliceName`), and the Ruby agent's `TransactionMetrics#record_scoped_and_unscoped`
 * (newrelic-ruby-agent, lib/new_relic/agent/transaction_metrics.rb: "when recording a scoped
 * metric, the corresponding unscoped metric should always be recorded as well"). Rollups
 * (`Datastore/all`, `External/all`, `External/<host>/all`) are recorded unscoped only.
 *
 * So a scoped row has the same `metricTimesliceName` as the unscoped one plus `scope`; the
 * unscoped rows here stay the source of truth (every row above is unscoped), and a metric's
 * scoped rows are its unscoped rows split between one or two of the app's transactions by
 * weight (they sum back to the unscoped row). A query that filters by name only reads both and
 * counts twice; `scope IS NULL` reads the unscoped rows, which are what REST v2 reported.
 */
export interface TimesliceScope {
  /** The transaction's metric name (the `scope` attribute). */
  name: string;
  /** In (0, 1]; the scopes of one metric sum to 1. */
  weight: number;
}

/** Is this a segment metric, recorded scoped as well as unscoped? */
export function isScopedSegment(name: string): boolean {
  if (name.startsWith('Datastore/statement/') || name.startsWith('Custom/') || name.startsWith('Controller/')) return true;
  // External/<host>/<library>/<method> is the call's own segment; External/all, External/allWeb
  // and External/<host>/all are rollups.
  const parts = name.split('/');
  return parts[0] === 'External' && parts.length >= 4;
}

const scopesByMetric = new WeakMap<SandboxMetric, TimesliceScope[]>();

/** The transactions a metric's scoped rows belong to, with their shares; [] for an unscoped-only metric. */
export function scopesOf(owner: MetricOwner, metric: SandboxMetric, data: SandboxData): TimesliceScope[] {
  let scopes = scopesByMetric.get(metric);
  if (scopes === undefined) {
    scopes = buildScopes(owner, metric, data);
    scopesByMetric.set(metric, scopes);
  }
  return scopes;
}

function buildScopes(owner: MetricOwner, metric: SandboxMetric, data: SandboxData): TimesliceScope[] {
  if (isMobileOwner(owner) || !isScopedSegment(metric.name)) return [];
  // The Ruby agent's transaction is named by its controller metric: that metric is scoped to itself.
  if (metric.name.startsWith('Controller/')) return [{ name: metric.name, weight: 1 }];
  const transactions = metricsOf(owner, data)
    .map((candidate) => candidate.name)
    .filter((name) => name.startsWith('WebTransaction/') || (name.startsWith('OtherTransaction/') && name !== 'OtherTransaction/all'));
  if (transactions.length === 0) return [];
  const first = metric.seed % transactions.length;
  if (metric.seed % 2 === 0 || transactions.length === 1) return [{ name: transactions[first] as string, weight: 1 }];
  const weight = 0.25 + (((metric.seed >>> 8) % 1000) / 1000) * 0.5;
  return [
    { name: transactions[first] as string, weight },
    { name: transactions[(first + 1) % transactions.length] as string, weight: 1 - weight },
  ];
}
