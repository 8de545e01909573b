/**
 * Which metrics an owner has (kinds.ts): every APM app's catalog (transactions, segments with
 * the name shapes real clients send, client-behaviour.md §5, §9; names that stopped or started
 * reporting), the bulk app's extra names (for name paging), mobile apps' catalog, and key
 * transactions' Apdex names. Metric lifetimes start at a fixed epoch, so rows never depend on
 * the clock.
 */
import { fnv1a32 } from '../ids.ts';
import type { SandboxApp, SandboxData, SandboxMobileApp } from '../model.ts';
import { DAY_MS, HOUR_MS, VALUES_BY_KIND, floorTo, isMobileOwner, type MetricKind, type MetricOwner, type SandboxMetric } from './kinds.ts';
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
