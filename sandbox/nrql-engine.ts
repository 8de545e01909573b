/**
 * Runs parsed NRQL (nrql-parser.ts) over the sandbox's metric timeslices (timeslices.ts), the
 * way NRDB answers `FROM Metric` queries on APM timeslice data, and over the apps' deployment
 * markers (`FROM Deployment, ChangeTrackingEvent`, raw columns or aggregates: see "deployment
 * events"). Entry point: runNrql (or executeNrql on a parsed query); the sandbox README's
 * "NRQL" section lists the subset and its sources. Behaviours (behaviours.ts) read here:
 * strictAttributeTypes, mobileGuidAttribute, rollupSnapping.
 *
 * A row of `FROM Metric` is one timeslice of one metric of one app. Every attribute a query
 * can test (appId, appName, entity.guid, accountId, metricTimesliceName) is the same for all
 * rows of one (app, metric) pair, a "series", and newrelic.timeslice.value is never null; so
 * WHERE and filter() conditions are decided once per series, not once per row, and the rows
 * of a series are only generated when an aggregate needs their values.
 *
 * Instances: when the WHERE, a filter() condition, the FACET or a uniques() mentions an
 * instance attribute (INSTANCE_ATTRIBUTES: `host`, `realAgentId`, `instanceName`), a series is
 * one (app, instance, metric) instead, and its rows are the app's rows split by
 * instance-split.ts (an app without instances keeps one series, its instance attributes null). Otherwise
 * nothing changes: app-level answers and their cost are those of the unsplit rows.
 * `realAgentId` is the REST instance id, stored as a string (its type is undocumented; see
 * ATTRIBUTE_TYPES): with strictAttributeTypes only `realAgentId = '5'` matches it.
 *
 * Key transactions: `entity.guid = '<KT guid>'` (or IN) selects the KT's series: its parent
 * app's rows of the KT's `metricName` and `Apdex/<metricName without its first segment>`
 * (timeslices.ts keyTransactionApdexName), whose `entity.guid` is then the KT's GUID, so
 * `FACET entity.guid` groups them per KT. That real NRDB answers KT timeslices this way is an
 * UNCONFIRMED assumption (rest-v2.md §2.5 shows the query, not its rows; with
 * behaviours.keyTransactionRowsCarryEntityGuid off, a KT GUID selects nothing). A KT series is never
 * split by instance (its instance attributes are null).
 *
 * Mobile apps: their rows carry the GUID as `entityGuid`, `entity.guid` or both
 * (mobileGuidAttribute), and accountId. Whether mobile timeslices carry appId is UNCONFIRMED
 * (routes-next.md §3), and mobile ids share no id space with APM ids, so `appId` never names a
 * mobile app here.
 *
 * Scoped rows (behaviour `scopedTimeslices`, timeslices.ts scopesOf): a segment metric
 * (`Datastore/statement/...`, `External/<host>/<library>/...`, `Custom/...`, Ruby
 * `Controller/...`) has, besides its unscoped series, one series per transaction it is scoped
 * to, whose `scope` attribute names the transaction and whose rows are the unscoped rows times
 * the scope's share. Unscoped series have no `scope` (`scope IS NULL` selects them). Source:
 * "Query APM metric timeslice data with NRQL" (its attribute table and its `scope = '...'`
 * example); the Ruby agent's record_scoped_and_unscoped. With the behaviour off there are no
 * scoped series.
 *
 * Evaluation: the WHERE's top-level AND chain picks the apps (candidateApps: those it names, or
 * every visible app when it names none) and, when it names metrics, the metrics to read; the
 * full WHERE then keeps or drops each series. Rows are summed into cells, one per
 * (facet value, filter context, time bucket), in a single pass, and every select item is
 * computed from those sums.
 */
import { DEFAULT_BEHAVIOURS, type SandboxBehaviours } from './behaviours.ts';
import { instanceRow, instanceSharesOf, splitRow, type InstanceShare } from './instance-split.ts';
import { nerdgraphDeploymentUser } from './divergence.ts';
import type { SandboxApp, SandboxData, SandboxDeployment, SandboxKeyTransaction } from './model.ts';
import {
  TIMESLICE_FIELDS,
  TIMESLICE_VALUE,
  isRawSelect,
  parseNrql,
  type AggregateFunction,
  type AttributeFunction,
  type NrqlCondition,
  type NrqlExpression,
  type NrqlLiteral,
  type NrqlQuery,
  type NrqlSelectItem,
  type NrqlTime,
  type NrqlTimeseries,
  type TimesliceField,
} from './nrql-parser.ts';
import {
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  hasRows,
  isMobileOwner,
  keyTransactionApdexName,
  metricsOf,
  rowAt,
  rowStarts,
  scopesOf,
  type MetricOwner,
  type SandboxMetric,
  type TimesliceRow,
  type TimesliceScope,
} from './timeslices.ts';
import { ingestedDeploymentsOf } from './writes.ts';

/** A query NRDB would refuse; the message is the one NerdGraph shows. */
export class NrqlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NrqlError';
  }
}

export const NRQL_MESSAGES = {
  noApplication: 'No application was matched (did you specify appId, appName or entity.guid?)',
  startAfterEnd: "Your query's start time must be before its end time",
  tooManyBuckets: 'TIMESERIES supports a maximum of 366 buckets',
  stepTooLarge: 'TIMESERIES step size is larger than the current time window',
  tooManyRows: 'Your query reads too many timeslice rows for the sandbox: narrow the time range or the metric names',
} as const;

export const MAX_BUCKETS = 366;
/**
 * Rows one query may read (about ten seconds of work). The sandbox can run inside the gateway's
 * process, so an unbounded query (every metric of the bulk app for years) must not stall it.
 * The gateway's largest queries (100 names over the whole data history, ~5M rows) stay below.
 */
export const MAX_ROWS = 10_000_000;
const DEFAULT_FACET_LIMIT = 10;
const DEFAULT_SINCE_TEXT = '60 MINUTES AGO';
const DEFAULT_UNTIL_TEXT = 'NOW';

export interface NrqlScope {
  data: SandboxData;
  /** Accounts the query may read: apps of any other account do not exist for it. */
  accountIds: readonly number[];
  /** Epoch ms: the query's clock (default SINCE/UNTIL, and which rows exist yet). */
  now: number;
  /** Rows the query may read before it fails (default MAX_ROWS). */
  maxRows?: number;
}

export interface NrqlMetadata {
  eventTypes: string[];
  facets: string[];
  messages: string[];
  timeWindow: { begin: number; end: number; since: string; until: string; compareWith: null };
}

export interface NrqlOutcome {
  results: Array<Record<string, unknown>>;
  metadata: NrqlMetadata;
}

/**
 * What one select item evaluates to: a number, null (no data, or undefined arithmetic), uniques'
 * list, latest()'s value (a string too), or percentile()'s `{ "<percentile>": value }`.
 */
type Value = number | string | null | Array<string | number> | Record<string, number | null>;

interface Series {
  app: MetricOwner;
  metric: SandboxMetric;
  /** The instance whose share of the rows this is; null for the whole app's rows. */
  share: InstanceShare | null;
  /** Set when the rows are selected as a key transaction's: its GUID is their entity.guid. */
  keyTransaction?: SandboxKeyTransaction;
  /** The transaction these rows are scoped to (their `scope`); absent for unscoped rows. */
  scope?: TimesliceScope;
}

/** Attributes of one agent instance's rows; mentioning one splits series by instance. */
export const INSTANCE_ATTRIBUTES = ['host', 'realAgentId', 'instanceName'] as const;
const INSTANCE_ATTRIBUTE_SET = new Set<string>(INSTANCE_ATTRIBUTES);

/** Parses and runs; throws NrqlSyntaxError or NrqlError. */
export function runNrql(text: string, scope: NrqlScope): NrqlOutcome {
  return executeNrql(parseNrql(text), scope);
}

/**
 * The behaviours (behaviours.ts) one execution follows. Set for the duration of one synchronous
 * executeNrql (nothing in it awaits, so no other query can interleave), rather than threaded
 * through every attribute read and comparison.
 */
let rules: Pick<SandboxBehaviours, 'strictAttributeTypes' | 'mobileGuidAttribute' | 'rollupSnapping'> = DEFAULT_BEHAVIOURS;

export function executeNrql(query: NrqlQuery, scope: NrqlScope): NrqlOutcome {
  const previous = rules;
  // Data built before a behaviour existed (or by hand in a test) follows the defaults.
  rules = { ...DEFAULT_BEHAVIOURS, ...scope.data.behaviours };
  try {
    return execute(query, scope);
  } finally {
    rules = previous;
  }
}

function execute(query: NrqlQuery, scope: NrqlScope): NrqlOutcome {
  const range = rangeOf(query, scope.now);
  if (isRawSelect(query)) return executeEventQuery(query, scope, range);
  const metric = query.from.includes('Metric');
  const snapped = metric && rules.rollupSnapping ? snapToRollup(range) : range;
  const window = timeWindowOf(query, snapped);
  const plan = planOf(query);
  const budget = { rows: scope.maxRows ?? MAX_ROWS };
  const groups = new Map<string | number | null, Group>();
  // Without FACET there is exactly one group, even with no rows at all.
  if (query.facets.length === 0) groups.set(null, new Group(null, plan, window.buckets));
  if (metric) accumulate(selectSeries(query, plan, scope), groups, query, plan, window, scope.now, budget);
  if (query.from.some((type) => (DEPLOYMENT_EVENT_TYPES as readonly string[]).includes(type))) {
    accumulateEvents(deploymentEvents(query, scope, window.begin, window.until), groups, query, plan, window);
  }
  return {
    results: resultRows(query, plan, window, [...groups.values()]),
    metadata: metadataOf(query, window.begin, window.until),
  };
}

function timeText(time: NrqlTime | null, fallback: string): string {
  if (time === null) return fallback;
  return typeof time === 'number' ? String(time) : time.text;
}

function metadataOf(query: NrqlQuery, begin: number, end: number): NrqlMetadata {
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

// ---------------------------------------------------------------- time window

interface TimeWindow {
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
function timeWindowOf(query: NrqlQuery, range: TimeRange): TimeWindow {
  const { since, until } = range;
  if (since >= until) throw new NrqlError(NRQL_MESSAGES.startAfterEnd);
  if (query.timeseries === null) return { until, begin: since, bucketMs: until - since, buckets: 1 };
  const bucketMs = bucketMsOf(query.timeseries, until - since);
  const buckets = Math.floor((until - since) / bucketMs);
  if (buckets < 1) throw new NrqlError(NRQL_MESSAGES.stepTooLarge);
  if (buckets > MAX_BUCKETS) throw new NrqlError(NRQL_MESSAGES.tooManyBuckets);
  return { until, begin: until - buckets * bucketMs, bucketMs, buckets };
}

// ---------------------------------------------------------------- plan

/**
 * What accumulation must keep. Context 0 is the WHERE alone; each filter() adds a context
 * whose conditions (its own and those of enclosing filters) a series must also meet.
 */
interface Plan {
  contexts: NrqlCondition[][];
  contextOf: Map<NrqlExpression, number>;
  /** Some item aggregates values, so rows must be generated (otherwise presence is enough). */
  needsRows: boolean;
  /** Some item aggregates a single field (`v['total']`), so per-field sums are kept. */
  needsFields: boolean;
  /** Some item is uniques(), so cells remember which series they saw. */
  needsSeries: boolean;
  /** Aggregates of plain attributes (count(*), latest(x), percentile(x, 95), …): each cell keeps one accumulator per entry. */
  attributeAggregates: Array<Extract<NrqlExpression, { type: 'attributeAggregate' }>>;
  /** Some item or condition reads newrelic.timeslice.value: the query is about APM timeslices. */
  readsTimeslices: boolean;
  /** The WHERE, a filter(), the FACET or a uniques() reads an instance attribute: series are per instance. */
  byInstance: boolean;
}

function mentionsInstance(condition: NrqlCondition | null): boolean {
  if (condition === null) return false;
  switch (condition.type) {
    case 'and':
    case 'or':
      return mentionsInstance(condition.left) || mentionsInstance(condition.right);
    case 'not':
      return mentionsInstance(condition.operand);
    default:
      return INSTANCE_ATTRIBUTE_SET.has(condition.attribute);
  }
}

function mentionsAttribute(condition: NrqlCondition | null, attribute: string): boolean {
  if (condition === null) return false;
  switch (condition.type) {
    case 'and':
    case 'or':
      return mentionsAttribute(condition.left, attribute) || mentionsAttribute(condition.right, attribute);
    case 'not':
      return mentionsAttribute(condition.operand, attribute);
    default:
      return condition.attribute === attribute;
  }
}

function planOf(query: NrqlQuery): Plan {
  const plan: Plan = {
    contexts: [[]],
    contextOf: new Map(),
    needsRows: false,
    needsFields: false,
    needsSeries: false,
    attributeAggregates: [],
    readsTimeslices: mentionsAttribute(query.where, TIMESLICE_VALUE),
    byInstance: mentionsInstance(query.where) || query.facets.some((facet) => INSTANCE_ATTRIBUTE_SET.has(facet)),
  };
  const visit = (expression: NrqlExpression, conditions: NrqlCondition[]): void => {
    switch (expression.type) {
      case 'aggregate':
        plan.needsRows = true;
        plan.readsTimeslices = true;
        if (expression.field !== null) plan.needsFields = true;
        return;
      case 'attributeAggregate':
        if (!plan.attributeAggregates.includes(expression)) plan.attributeAggregates.push(expression);
        if (expression.attribute !== null && INSTANCE_ATTRIBUTE_SET.has(expression.attribute)) plan.byInstance = true;
        return;
      case 'uniques':
        plan.needsSeries = true;
        // uniques(host) needs per-instance series as much as FACET host does.
        if (INSTANCE_ATTRIBUTE_SET.has(expression.attribute)) plan.byInstance = true;
        return;
      case 'filter': {
        const inner = [...conditions, expression.where];
        if (mentionsInstance(expression.where)) plan.byInstance = true;
        if (mentionsAttribute(expression.where, TIMESLICE_VALUE)) plan.readsTimeslices = true;
        plan.contextOf.set(expression, plan.contexts.push(inner) - 1);
        visit(expression.of, inner);
        return;
      }
      case 'rate':
        visit(expression.of, conditions);
        return;
      case 'negate':
        visit(expression.operand, conditions);
        return;
      case 'arithmetic':
        visit(expression.left, conditions);
        visit(expression.right, conditions);
        return;
      case 'number':
      case 'attribute':
      case 'wildcard':
        return;
    }
  };
  for (const item of query.select) visit(item.expression, []);
  return plan;
}

// ---------------------------------------------------------------- which series

interface Lookups {
  /** data.writes.version they were built at: a write (rename, delete) makes them stale. */
  version: number;
  byId: Map<number, SandboxApp>;
  byName: Map<string, SandboxApp>;
  byGuid: Map<string, SandboxApp>;
  mobileByGuid: Map<string, MetricOwner>;
  keyTransactionByGuid: Map<string, SandboxKeyTransaction>;
}

const lookupsByData = new WeakMap<SandboxData, Lookups>();
const metricsByName = new WeakMap<MetricOwner, Map<string, SandboxMetric>>();

function lookupsOf(data: SandboxData): Lookups {
  let lookups = lookupsByData.get(data);
  if (!lookups || lookups.version !== data.writes.version) {
    lookups = {
      version: data.writes.version,
      byId: new Map(data.apps.map((app) => [app.id, app])),
      byName: new Map(data.apps.map((app) => [app.name, app])),
      byGuid: new Map(data.apps.map((app) => [app.guid, app])),
      mobileByGuid: new Map(data.mobileApps.map((app) => [app.guid, app])),
      keyTransactionByGuid: new Map(data.keyTransactions.map((keyTransaction) => [keyTransaction.guid, keyTransaction])),
    };
    lookupsByData.set(data, lookups);
  }
  return lookups;
}

function metricIndexOf(app: MetricOwner, data: SandboxData): Map<string, SandboxMetric> {
  let index = metricsByName.get(app);
  if (!index) {
    index = new Map(metricsOf(app, data).map((metric) => [metric.name, metric]));
    metricsByName.set(app, index);
  }
  return index;
}

/** Attributes that name an app (`entityGuid`: mobile rows, see behaviours.ts mobileGuidAttribute). */
const APP_ATTRIBUTES = ['appId', 'appName', 'entity.guid', 'entityGuid'] as const;
type AppAttribute = (typeof APP_ATTRIBUTES)[number];

function selectSeries(query: NrqlQuery, plan: Plan, scope: NrqlScope): Series[] {
  // Aggregates read Metric rows only; any other event type is simply empty for them.
  if (!query.from.includes('Metric')) return [];
  const conjuncts = conjunctsOf(query.where);
  const series: Series[] = [];
  const keep = (candidate: Series): void => {
    if (query.where === null || holds(query.where, candidate, attributeOf)) series.push(candidate);
  };
  for (const app of candidateApps(conjuncts, scope, true, plan.readsTimeslices)) {
    // An app without instances keeps its whole rows (instance attributes null) even when split.
    const shares = plan.byInstance && !isMobileOwner(app) ? instanceSharesOf(app) : [];
    for (const metric of candidateMetrics(app, conjuncts, scope.data)) {
      // The unscoped series, then one per transaction the metric is scoped to (if any).
      const scopes: Array<TimesliceScope | undefined> = [undefined];
      if (scope.data.behaviours.scopedTimeslices) scopes.push(...scopesOf(app, metric, scope.data));
      for (const timesliceScope of scopes) {
        const scoped = timesliceScope === undefined ? {} : { scope: timesliceScope };
        if (shares.length === 0) keep({ app, metric, share: null, ...scoped });
        else for (const share of shares) keep({ app, metric, share, ...scoped });
      }
    }
  }
  for (const keyTransaction of keyTransactionsNamed(conjuncts, scope)) {
    const app = lookupsOf(scope.data).byId.get(keyTransaction.appId);
    if (!app) continue;
    const index = metricIndexOf(app, scope.data);
    for (const name of [keyTransaction.metricName, keyTransactionApdexName(keyTransaction.metricName)]) {
      const metric = index.get(name);
      if (metric) keep({ app, metric, share: null, keyTransaction });
    }
  }
  return series;
}

/** Key transactions a top-level `entity.guid = …` / `IN (…)` names, in the visible accounts. */
function keyTransactionsNamed(conjuncts: NrqlCondition[], scope: NrqlScope): SandboxKeyTransaction[] {
  // Off: KT rows do not answer to the KT's GUID (behaviours.keyTransactionRowsCarryEntityGuid).
  if (!scope.data.behaviours.keyTransactionRowsCarryEntityGuid) return [];
  const byGuid = lookupsOf(scope.data).keyTransactionByGuid;
  const visible = new Set(scope.accountIds);
  const named = new Set<SandboxKeyTransaction>();
  for (const conjunct of conjuncts) {
    for (const value of equalityValues(conjunct, 'entity.guid') ?? []) {
      const keyTransaction = byGuid.get(String(value));
      if (keyTransaction && visible.has(keyTransaction.accountId)) named.add(keyTransaction);
    }
  }
  return [...named];
}

function conjunctsOf(condition: NrqlCondition | null): NrqlCondition[] {
  if (condition === null) return [];
  if (condition.type === 'and') return [...conjunctsOf(condition.left), ...conjunctsOf(condition.right)];
  return [condition];
}

/** The literals of `attribute = x` or `attribute IN (…)`, or null for any other condition. */
function equalityValues(condition: NrqlCondition, attribute: string): NrqlLiteral[] | null {
  if (condition.type === 'compare' && condition.operator === '=' && condition.attribute === attribute) return [condition.value];
  if (condition.type === 'in' && !condition.negated && condition.attribute === attribute) return condition.values;
  return null;
}

/**
 * Apps the top-level conjuncts name, among the visible accounts: a conjunct names apps by
 * `attr = x` or `attr IN (…)` on an app attribute, or an OR of such tests (`entityGuid = 'g' OR
 * entity.guid = 'g'`). Without one, a query is account-wide (every visible app; for Metric, the
 * mobile apps too), except a Metric query that reads newrelic.timeslice.value: that one fails
 * with "No application was matched" (a documented NRQL error, rest-v2.md §4 CHART-ERR) unless a
 * top-level conjunct tests an instance attribute and one names the metrics (v2's `filter[host]`).
 */
function candidateApps(conjuncts: NrqlCondition[], scope: NrqlScope, metricScoped = false, readsTimeslices = false): MetricOwner[] {
  const lookups = lookupsOf(scope.data);
  const constraints = conjuncts.flatMap((conjunct) => {
    const named = appsNamed(conjunct, lookups, metricScoped);
    return named === null ? [] : [named];
  });
  const visible = new Set(scope.accountIds);
  if (constraints.length === 0) {
    if (metricScoped && readsTimeslices && !scopedByInstanceAndMetric(conjuncts)) throw new NrqlError(NRQL_MESSAGES.noApplication);
    // MAX_ROWS still bounds the rows read.
    const owners: MetricOwner[] = scope.data.apps.filter((app) => visible.has(app.accountId));
    if (metricScoped) owners.push(...scope.data.mobileApps.filter((app) => visible.has(app.accountId)));
    return owners;
  }
  const [first, ...others] = constraints as [Set<MetricOwner>, ...Array<Set<MetricOwner>>];
  return [...first].filter((app) => visible.has(app.accountId) && others.every((matches) => matches.has(app)));
}

/** The apps one conjunct names (see candidateApps), or null when it names none. */
function appsNamed(conjunct: NrqlCondition, lookups: Lookups, withMobile: boolean): Set<MetricOwner> | null {
  if (conjunct.type === 'or') {
    const left = appsNamed(conjunct.left, lookups, withMobile);
    const right = left === null ? null : appsNamed(conjunct.right, lookups, withMobile);
    return left === null || right === null ? null : new Set([...left, ...right]);
  }
  for (const attribute of APP_ATTRIBUTES) {
    const values = equalityValues(conjunct, attribute);
    if (values !== null) return new Set(values.flatMap((value) => appsMatching(attribute, value, lookups, withMobile)));
  }
  return null;
}

/** A top-level instance-attribute test (=, IN or LIKE) and a top-level metric name list. */
function scopedByInstanceAndMetric(conjuncts: NrqlCondition[]): boolean {
  const instanceTest = conjuncts.some((conjunct) => {
    const positive = (conjunct.type === 'compare' && conjunct.operator === '=') || ((conjunct.type === 'in' || conjunct.type === 'like') && !conjunct.negated);
    return positive && INSTANCE_ATTRIBUTE_SET.has(conjunct.attribute);
  });
  return instanceTest && conjuncts.some((conjunct) => equalityValues(conjunct, 'metricTimesliceName') !== null);
}

function appsMatching(attribute: AppAttribute, value: NrqlLiteral, lookups: Lookups, withMobile: boolean): MetricOwner[] {
  const mobile = withMobile ? lookups.mobileByGuid.get(String(value)) : undefined;
  const app =
    attribute === 'appId' ? lookups.byId.get(Number(value))
    : attribute === 'appName' ? lookups.byName.get(String(value))
    : attribute === 'entityGuid' ? mobile
    : (lookups.byGuid.get(String(value)) ?? mobile);
  // The lookup key is normalised; the comparison the WHERE will make decides.
  return app && sameValue(appAttribute(app, attribute), value) ? [app] : [];
}

function candidateMetrics(app: MetricOwner, conjuncts: NrqlCondition[], data: SandboxData): SandboxMetric[] {
  const nameLists = conjuncts
    .map((conjunct) => equalityValues(conjunct, 'metricTimesliceName'))
    .filter((values): values is NrqlLiteral[] => values !== null);
  if (nameLists.length === 0) return metricsOf(app, data);
  // The shortest list bounds the reading; any other name conjunct is applied by the full WHERE.
  const shortest = nameLists.reduce((a, b) => (b.length < a.length ? b : a));
  const index = metricIndexOf(app, data);
  return [...new Set(shortest.map(String))].flatMap((name) => index.get(name) ?? []);
}

// ---------------------------------------------------------------- conditions

/** Stands for newrelic.timeslice.value: present on every row, equal to no literal. */
const TIMESLICE_VALUE_PRESENT = Symbol('newrelic.timeslice.value');

function appAttribute(app: MetricOwner, attribute: string): unknown {
  if (isMobileOwner(app)) {
    // Mobile rows: their GUID attribute(s) (behaviours.ts mobileGuidAttribute) and accountId only (see the header on appId).
    const spelling = rules.mobileGuidAttribute;
    if (attribute === 'entityGuid') return spelling === 'entity.guid' ? null : app.guid;
    if (attribute === 'entity.guid') return spelling === 'entityGuid' ? null : app.guid;
    return attribute === 'accountId' ? app.accountId : null;
  }
  switch (attribute) {
    case 'appId':
      return app.id;
    case 'appName':
      return app.name;
    case 'entity.guid':
      return app.guid;
    case 'accountId':
      return app.accountId;
    default:
      return null;
  }
}

function attributeOf(series: Series, attribute: string): unknown {
  if (attribute === 'metricTimesliceName') return series.metric.name;
  if (attribute === 'scope') return series.scope?.name ?? null;
  if (attribute === TIMESLICE_VALUE) return TIMESLICE_VALUE_PRESENT;
  if (INSTANCE_ATTRIBUTE_SET.has(attribute)) return instanceAttribute(series.share, attribute);
  if (attribute === 'entity.guid' && series.keyTransaction) return series.keyTransaction.guid;
  return appAttribute(series.app, attribute);
}

function instanceAttribute(share: InstanceShare | null, attribute: string): unknown {
  if (share === null) return null;
  switch (attribute) {
    case 'host':
      return share.host.name;
    case 'realAgentId':
      // A string: the only New Relic document that filters on it quotes it (see ATTRIBUTE_TYPES).
      return String(share.instance.id);
    case 'instanceName':
      return share.instance.instanceName;
    default:
      return null;
  }
}

const likePatterns = new Map<string, RegExp>();

/** NRQL LIKE: `%` is any run of characters, the rest literal; case-sensitive (see nrql-parser.ts). */
function likeRegExp(pattern: string): RegExp {
  let regExp = likePatterns.get(pattern);
  if (!regExp) {
    const body = pattern
      .split('%')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[\\s\\S]*');
    regExp = new RegExp(`^${body}$`);
    // Patterns come from query text: bound the cache rather than grow it for ever.
    if (likePatterns.size > 1000) likePatterns.clear();
    likePatterns.set(pattern, regExp);
  }
  return regExp;
}

function isScalar(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}

/**
 * Equality as NRQL compares attribute values: by type (behaviours.ts strictAttributeTypes), so a
 * numeric attribute never equals a string literal nor a string attribute a number. With the
 * behaviour off, the sandbox's old loose rule: a number and a string compare as text.
 */
function sameValue(actual: unknown, literal: NrqlLiteral): boolean {
  if (!isScalar(actual)) return false;
  if (typeof actual === typeof literal) return actual === literal;
  return !rules.strictAttributeTypes && String(actual) === String(literal);
}

/**
 * The type of each attribute the sandbox's rows carry, as comparisons see it (sandbox README,
 * "NRQL attribute types"). Source per attribute, or "undocumented".
 */
export const ATTRIBUTE_TYPES: Readonly<Record<string, { type: 'number' | 'string'; source: string }>> = {
  appId: { type: 'number', source: 'MIG-NRQL data query and MIG-NG write it bare (`appId = $APP_ID`); the listing query quotes it (rest-v2.md §1.1)' },
  appName: { type: 'string', source: 'TS-NRQL attribute table' },
  'entity.guid': { type: 'string', source: 'TS-NRQL attribute table' },
  entityGuid: { type: 'string', source: 'mobile rows (behaviours.ts mobileGuidAttribute)' },
  accountId: { type: 'number', source: 'undocumented for Metric; an account id is an Int in NerdGraph' },
  metricTimesliceName: { type: 'string', source: 'TS-NRQL attribute table' },
  host: { type: 'string', source: 'TS-NRQL attribute table' },
  instanceName: { type: 'string', source: 'TS-NRQL attribute table (Java `host:port`)' },
  realAgentId: { type: 'string', source: "undocumented (not in TS-NRQL's table); MIG-NRQL quotes it (`realAgentId = '$AGENT_ID'`)" },
  timestamp: { type: 'number', source: 'epoch ms on every event (NRQL docs)' },
};

/**
 * Two-valued: a test on a missing attribute is false, except IS NULL. `subject` is a series
 * (Metric) or an event (deployment events); `read` gives its attributes.
 */
function holds<T>(condition: NrqlCondition, subject: T, read: (subject: T, attribute: string) => unknown): boolean {
  switch (condition.type) {
    case 'and':
      return holds(condition.left, subject, read) && holds(condition.right, subject, read);
    case 'or':
      return holds(condition.left, subject, read) || holds(condition.right, subject, read);
    case 'not':
      return !holds(condition.operand, subject, read);
    case 'isNull': {
      const value = read(subject, condition.attribute);
      return (value === null || value === undefined) !== condition.negated;
    }
    case 'compare': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return sameValue(value, condition.value) === (condition.operator === '=');
    }
    case 'in': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return condition.values.some((literal) => sameValue(value, literal)) !== condition.negated;
    }
    case 'like': {
      const value = read(subject, condition.attribute);
      if (!isScalar(value)) return false;
      return likeRegExp(condition.pattern).test(String(value)) !== condition.negated;
    }
  }
}

// ---------------------------------------------------------------- accumulation

const FIELD_INDEX = Object.fromEntries(TIMESLICE_FIELDS.map((field, index) => [field, index])) as Record<TimesliceField, number>;

/** Running sums over rows: enough for every aggregate, and mergeable across buckets. */
class Stats {
  rows = 0;
  count = 0;
  total = 0;
  sumOfSquares = 0;
  min = Infinity;
  max = -Infinity;
  /** The newest row (latest()). */
  latest: TimesliceRow | null = null;
  /** Per field, at 4·i: Σf, Σf², min f, max f. Only kept when the query reads fields. */
  readonly fields: Float64Array | null;

  constructor(withFields: boolean) {
    this.fields = withFields ? new Float64Array(TIMESLICE_FIELDS.length * 4) : null;
    if (this.fields) for (let i = 0; i < TIMESLICE_FIELDS.length; i++) this.fields.set([Infinity, -Infinity], 4 * i + 2);
  }

  add(row: TimesliceRow): void {
    this.rows++;
    this.count += row.count;
    this.total += row.total;
    this.sumOfSquares += row.sumOfSquares;
    if (row.min < this.min) this.min = row.min;
    if (row.max > this.max) this.max = row.max;
    if (this.latest === null || row.start >= this.latest.start) this.latest = row;
    const fields = this.fields;
    if (!fields) return;
    for (let i = 0; i < TIMESLICE_FIELDS.length; i++) {
      const value = row[TIMESLICE_FIELDS[i] as TimesliceField];
      fields[4 * i] = (fields[4 * i] as number) + value;
      fields[4 * i + 1] = (fields[4 * i + 1] as number) + value * value;
      if (value < (fields[4 * i + 2] as number)) fields[4 * i + 2] = value;
      if (value > (fields[4 * i + 3] as number)) fields[4 * i + 3] = value;
    }
  }

  merge(other: Stats): void {
    this.rows += other.rows;
    this.count += other.count;
    this.total += other.total;
    this.sumOfSquares += other.sumOfSquares;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    if (other.latest !== null && (this.latest === null || other.latest.start >= this.latest.start)) this.latest = other.latest;
    if (!this.fields || !other.fields) return;
    for (let i = 0; i < TIMESLICE_FIELDS.length; i++) {
      const at = 4 * i;
      this.fields[at] = (this.fields[at] as number) + (other.fields[at] as number);
      this.fields[at + 1] = (this.fields[at + 1] as number) + (other.fields[at + 1] as number);
      this.fields[at + 2] = Math.min(this.fields[at + 2] as number, other.fields[at + 2] as number);
      this.fields[at + 3] = Math.max(this.fields[at + 3] as number, other.fields[at + 3] as number);
    }
  }
}

/** One attribute aggregate's running values over rows: counts, sums, the newest value, and (percentile) every number. */
class Accumulator {
  /** Rows with a value (all rows, for count(*)). */
  count = 0;
  numeric = 0;
  sum = 0;
  squares = 0;
  min = Infinity;
  max = -Infinity;
  latestAt = -Infinity;
  latest: string | number | null = null;
  readonly values: number[] | null;

  constructor(keepValues: boolean) {
    this.values = keepValues ? [] : null;
  }

  add(value: unknown, at: number): void {
    if (value === null || value === undefined) return;
    this.count++;
    if (isScalar(value) && at >= this.latestAt) {
      this.latestAt = at;
      this.latest = value;
    }
    if (typeof value !== 'number') return;
    this.numeric++;
    this.sum += value;
    this.squares += value * value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    this.values?.push(value);
  }

  merge(other: Accumulator): void {
    this.count += other.count;
    this.numeric += other.numeric;
    this.sum += other.sum;
    this.squares += other.squares;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    if (other.latestAt >= this.latestAt && other.latest !== null) {
      this.latestAt = other.latestAt;
      this.latest = other.latest;
    }
    if (this.values && other.values) this.values.push(...other.values);
  }
}

/** What rows come from: a timeslice series (Metric) or one deployment event. */
type Subject = Series | DeploymentEvent;

function readAttribute(subject: Subject, attribute: string): unknown {
  return 'metric' in subject ? attributeOf(subject, attribute) : eventAttribute(subject, attribute);
}

/** The rows of one facet value, filter context and bucket. */
class Cell {
  readonly stats: Stats;
  /** Some row falls here (known even on the presence-only path, where stats stay empty). */
  present = false;
  /** Series (or events) with rows here, each once; only kept for uniques(). */
  readonly series: Subject[] = [];
  /** One per plan.attributeAggregates entry. */
  readonly attributes: Accumulator[];

  constructor(private readonly plan: Plan) {
    this.stats = new Stats(plan.needsFields);
    this.attributes = plan.attributeAggregates.map((item) => new Accumulator(item.function === 'percentile'));
  }

  mark(series: Subject): void {
    this.present = true;
    // Rows arrive series by series, so a repeat is always the last one pushed.
    if (this.plan.needsSeries && this.series[this.series.length - 1] !== series) this.series.push(series);
  }

  /** Adds one row's values of the attribute aggregates (`values[i]` for plan.attributeAggregates[i]). */
  addAttributes(values: readonly unknown[], at: number): void {
    for (let i = 0; i < values.length; i++) (this.attributes[i] as Accumulator).add(values[i], at);
  }

  merge(other: Cell): void {
    this.present ||= other.present;
    this.stats.merge(other.stats);
    if (this.plan.needsSeries) this.series.push(...other.series);
    this.attributes.forEach((accumulator, i) => accumulator.merge(other.attributes[i] as Accumulator));
  }
}

/** One facet value's cells (the only group without FACET): created on first use, per context and bucket. */
class Group {
  private readonly cells: Array<Array<Cell | undefined>>;
  private readonly totals = new Map<number, Cell>();
  private readonly empty: Cell;

  constructor(
    readonly key: FacetKey,
    private readonly plan: Plan,
    private readonly buckets: number,
  ) {
    this.cells = plan.contexts.map(() => []);
    this.empty = new Cell(plan);
  }

  /** The cell to add rows to. */
  cellFor(context: number, bucket: number): Cell {
    const row = this.cells[context] as Array<Cell | undefined>;
    return (row[bucket] ??= new Cell(this.plan));
  }

  /** The cell to read: one bucket, or all of them merged (`'all'`, computed once per context). */
  read(context: number, bucket: number | 'all'): Cell {
    const row = this.cells[context] as Array<Cell | undefined>;
    if (bucket !== 'all') return row[bucket] ?? this.empty;
    if (this.buckets === 1) return row[0] ?? this.empty;
    let merged = this.totals.get(context);
    if (!merged) {
      merged = new Cell(this.plan);
      for (const cell of row) if (cell) merged.merge(cell);
      this.totals.set(context, merged);
    }
    return merged;
  }

  hasRows(): boolean {
    return (this.cells[0] as Array<Cell | undefined>).some((cell) => cell?.present);
  }
}

/** A group's facet: null without FACET, the value of one attribute, or the values of several in order. */
type FacetKey = string | number | null | Array<string | number>;
/** Groups by their facet (several attributes' values keyed by their JSON). */
type Groups = Map<string | number | null, Group>;

/**
 * The group of a subject's facet values; null when the subject lacks a faceted attribute (it
 * belongs to no facet; UNCONFIRMED for several attributes: NRQL may facet a missing one as null).
 */
function groupOf(subject: Subject, groups: Groups, query: NrqlQuery, plan: Plan, window: TimeWindow): Group | null {
  const values = query.facets.map((facet) => readAttribute(subject, facet));
  if (!values.every(isScalar)) return null;
  const key: FacetKey = values.length === 0 ? null : values.length === 1 ? (values[0] as string | number) : (values as Array<string | number>);
  const mapKey = Array.isArray(key) ? JSON.stringify(key) : key;
  let group = groups.get(mapKey);
  if (!group) groups.set(mapKey, (group = new Group(key, plan, window.buckets)));
  return group;
}

function contextsOf(subject: Subject, plan: Plan): number[] {
  return plan.contexts.flatMap((conditions, index) => (conditions.every((c) => holds(c, subject, readAttribute)) ? [index] : []));
}

function accumulate(series: Series[], groups: Groups, query: NrqlQuery, plan: Plan, window: TimeWindow, now: number, budget: { rows: number }): void {
  for (const one of series) {
    const group = groupOf(one, groups, query, plan, window);
    if (group === null) continue;
    const contexts = contextsOf(one, plan);
    if (plan.needsRows || plan.attributeAggregates.length > 0) addRows(one, group, contexts, plan, window, now, budget);
    else addPresence(one, group, contexts, window, now);
  }
}

/** One pass over the series' rows, each summed into its bucket of every context it meets. */
function addRows(series: Series, group: Group, contexts: number[], plan: Plan, window: TimeWindow, now: number, budget: { rows: number }): void {
  // A series' attributes are the same on all its rows, but for each row's timestamp (its start).
  const values = plan.attributeAggregates.map((item) => (item.attribute === null ? true : attributeOf(series, item.attribute)));
  const timestamps = plan.attributeAggregates.flatMap((item, index) => (item.attribute === 'timestamp' ? [index] : []));
  for (const [start, durationMs] of rowStarts(series.metric, window.begin, window.until, now)) {
    if (--budget.rows < 0) throw new NrqlError(NRQL_MESSAGES.tooManyRows);
    const unscoped = !plan.needsRows ? null
      : series.share === null ? rowAt(series.app, series.metric, start, durationMs)
      : instanceRow(series.share, series.metric, start, durationMs);
    const row = unscoped === null || series.scope === undefined ? unscoped : splitRow(unscoped, series.scope.weight);
    for (const index of timestamps) values[index] = start;
    const bucket = Math.floor((start - window.begin) / window.bucketMs);
    for (const context of contexts) {
      const cell = group.cellFor(context, bucket);
      if (row !== null) cell.stats.add(row);
      if (values.length > 0) cell.addAttributes(values, start);
      cell.mark(series);
    }
  }
}

/** Each deployment event is one row at its timestamp (the WHERE was applied when they were read). */
function accumulateEvents(events: DeploymentEvent[], groups: Groups, query: NrqlQuery, plan: Plan, window: TimeWindow): void {
  for (const event of events) {
    const at = event.attributes.timestamp as number;
    const bucket = Math.floor((at - window.begin) / window.bucketMs);
    if (bucket < 0 || bucket >= window.buckets) continue;
    const group = groupOf(event, groups, query, plan, window);
    if (group === null) continue;
    const values = plan.attributeAggregates.map((item) => (item.attribute === null ? true : eventAttribute(event, item.attribute)));
    for (const context of contextsOf(event, plan)) {
      const cell = group.cellFor(context, bucket);
      if (values.length > 0) cell.addAttributes(values, at);
      cell.mark(event);
    }
  }
}

/** Without aggregates only "has rows" matters: hasRows per bucket, never a row generated. */
function addPresence(series: Series, group: Group, contexts: number[], window: TimeWindow, now: number): void {
  for (let bucket = 0; bucket < window.buckets; bucket++) {
    const start = window.begin + bucket * window.bucketMs;
    if (!hasRows(series.metric, start, start + window.bucketMs, now)) continue;
    for (const context of contexts) group.cellFor(context, bucket).mark(series);
  }
}

// ---------------------------------------------------------------- results

function resultRows(query: NrqlQuery, plan: Plan, window: TimeWindow, groups: Group[]): Array<Record<string, unknown>> {
  const buckets = Array.from({ length: window.buckets }, (_, index) => index);
  const timeseries = query.timeseries !== null;
  const rowsOf = (group: Group, prefix: Record<string, unknown>): Array<Record<string, unknown>> =>
    timeseries
      ? buckets.map((bucket) => {
          const begin = window.begin + bucket * window.bucketMs;
          return {
            beginTimeSeconds: begin / 1000,
            endTimeSeconds: (begin + window.bucketMs) / 1000,
            ...prefix,
            ...itemValues(query.select, plan, group, bucket, window.bucketMs),
          };
        })
      : [{ ...prefix, ...itemValues(query.select, plan, group, 0, window.bucketMs) }];

  const facets = query.facets;
  if (facets.length === 0) return rowsOf(groups[0] as Group, {});
  // One attribute: `facet` is its value; several: `facet` is the array of their values. Each
  // attribute is also a column by name (NerdGraph's NRQL results).
  return chooseFacets(query, plan, window, groups).flatMap((group) => {
    const values = Array.isArray(group.key) ? group.key : [group.key];
    return rowsOf(group, { facet: group.key, ...Object.fromEntries(facets.map((facet, index) => [facet, values[index]])) });
  });
}

/** Facets with rows, by the first item over the whole window (descending, ties by facet), at most LIMIT. */
function chooseFacets(query: NrqlQuery, plan: Plan, window: TimeWindow, groups: Group[]): Group[] {
  const first = query.select[0] as NrqlSelectItem;
  const ranked = groups
    .filter((group) => group.hasRows())
    .map((group) => ({ group, rank: rankOf(evaluate(first.expression, frameOf(plan, group, 'all', window.until - window.begin))) }));
  ranked.sort((a, b) => b.rank - a.rank || compareValues(a.group.key, b.group.key));
  return ranked.slice(0, query.limit ?? DEFAULT_FACET_LIMIT).map(({ group }) => group);
}

function rankOf(value: Value): number {
  if (value === null || typeof value === 'string') return -Infinity;
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object') return Object.values(value)[0] ?? -Infinity;
  return value;
}

/** Numbers before strings; numbers by value, strings by UTF-16 code units; facet arrays element by element. */
function compareValues(a: unknown, b: unknown): number {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
      const order = compareValues(a[index], b[index]);
      if (order !== 0) return order;
    }
    return a.length - b.length;
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  const left = String(a);
  const right = String(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

function itemValues(items: NrqlSelectItem[], plan: Plan, group: Group, bucket: number, bucketMs: number): Record<string, Value> {
  const frame = frameOf(plan, group, bucket, bucketMs);
  return Object.fromEntries(items.map((item) => [item.alias ?? defaultName(item.expression), evaluate(item.expression, frame)]));
}

// ---------------------------------------------------------------- evaluation

interface Frame {
  plan: Plan;
  group: Group;
  bucket: number | 'all';
  /** Length of the time the cell covers: rate()'s denominator. */
  spanMs: number;
  context: number;
}

function frameOf(plan: Plan, group: Group, bucket: number | 'all', spanMs: number): Frame {
  return { plan, group, bucket, spanMs, context: 0 };
}

function evaluate(expression: NrqlExpression, frame: Frame): Value {
  switch (expression.type) {
    case 'number':
      return expression.value;
    case 'negate': {
      const value = evaluate(expression.operand, frame);
      return typeof value === 'number' ? -value : null;
    }
    case 'arithmetic':
      return arithmetic(expression.operator, evaluate(expression.left, frame), evaluate(expression.right, frame));
    case 'aggregate':
      return aggregate(frame.group.read(frame.context, frame.bucket).stats, expression.function, expression.field);
    case 'attributeAggregate': {
      const cell = frame.group.read(frame.context, frame.bucket);
      return attributeAggregate(cell.attributes[frame.plan.attributeAggregates.indexOf(expression)] as Accumulator, expression.function, expression.percentiles);
    }
    case 'rate': {
      const value = evaluate(expression.of, frame);
      return typeof value === 'number' ? finite((value * expression.per.milliseconds) / frame.spanMs) : null;
    }
    case 'filter':
      return evaluate(expression.of, { ...frame, context: frame.plan.contextOf.get(expression) as number });
    case 'uniques':
      return uniques(frame.group.read(frame.context, frame.bucket).series, expression.attribute, expression.limit);
    case 'attribute':
    case 'wildcard':
      // Raw columns never reach aggregation: executeNrql sends them to executeEventQuery.
      return null;
  }
}

function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/** null in, null out; division by zero is null, as NRQL answers it. */
function arithmetic(operator: '+' | '-' | '*' | '/', left: Value, right: Value): Value {
  if (typeof left !== 'number' || typeof right !== 'number') return null;
  switch (operator) {
    case '+':
      return finite(left + right);
    case '-':
      return finite(left - right);
    case '*':
      return finite(left * right);
    case '/':
      return right === 0 ? null : finite(left / right);
  }
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : finite(numerator / denominator);
}

function deviation(sum: number, squares: number, n: number): number | null {
  if (n === 0) return null;
  const mean = sum / n;
  return finite(Math.sqrt(Math.max(0, squares / n - mean * mean)));
}

/**
 * On the whole value, aggregates follow timeslice semantics (count is Σcount, average is
 * Σtotal/Σcount, …); on one field they are plain statistics of that field over the rows.
 */
function aggregate(stats: Stats, fn: AggregateFunction, field: TimesliceField | null): number | null {
  if (field === null) {
    switch (fn) {
      case 'count':
        return stats.count;
      case 'sum':
        return stats.total;
      case 'average':
        return ratio(stats.total, stats.count);
      case 'min':
        return stats.rows === 0 ? null : stats.min;
      case 'max':
        return stats.rows === 0 ? null : stats.max;
      case 'stddev':
        return deviation(stats.total, stats.sumOfSquares, stats.count);
      case 'latest':
        // The newest timeslice's value as a whole: its average (total / count). UNCONFIRMED.
        return stats.latest === null ? null : ratio(stats.latest.total, stats.latest.count);
    }
  }
  if (fn === 'latest') return stats.latest === null ? null : stats.latest[field];
  const fields = stats.fields as Float64Array;
  const at = 4 * FIELD_INDEX[field];
  const sum = fields[at] as number;
  switch (fn) {
    case 'count':
      return stats.rows;
    case 'sum':
      return sum;
    case 'average':
      return ratio(sum, stats.rows);
    case 'min':
      return stats.rows === 0 ? null : (fields[at + 2] as number);
    case 'max':
      return stats.rows === 0 ? null : (fields[at + 3] as number);
    case 'stddev':
      return deviation(sum, fields[at + 1] as number, stats.rows);
  }
}

/**
 * An aggregate of an attribute's values: count (rows with a value; count(*) all rows), sum (0
 * without numbers), average, min, max and stddev over the numeric values (null without any),
 * latest (the value of the newest row), percentile (nearest rank over the numeric values: a
 * sandbox choice; NRDB computes percentiles approximately).
 */
function attributeAggregate(accumulator: Accumulator, fn: AttributeFunction, percentiles: readonly number[]): Value {
  const { numeric } = accumulator;
  switch (fn) {
    case 'count':
      return accumulator.count;
    case 'sum':
      return finite(accumulator.sum);
    case 'average':
      return numeric === 0 ? null : finite(accumulator.sum / numeric);
    case 'min':
      return numeric === 0 ? null : accumulator.min;
    case 'max':
      return numeric === 0 ? null : accumulator.max;
    case 'stddev':
      return deviation(accumulator.sum, accumulator.squares, numeric);
    case 'latest':
      return accumulator.latest;
    case 'percentile': {
      const sorted = [...(accumulator.values ?? [])].sort((a, b) => a - b);
      const at = (p: number): number | null => (sorted.length === 0 ? null : (sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number));
      return Object.fromEntries(percentiles.map((p) => [String(p), at(p)]));
    }
  }
}

/** Sorted distinct values of the attribute over the series (or events) that had rows, at most `limit`. */
function uniques(series: Subject[], attribute: string, limit: number): Array<string | number> {
  const values = new Set<string | number>();
  for (const one of series) {
    const value = readAttribute(one, attribute);
    if (isScalar(value)) values.add(value);
  }
  return [...values].sort(compareValues).slice(0, limit);
}

/** NerdGraph-like result keys for items without an alias, e.g. `average.newrelic.timeslice.value`. */
function defaultName(expression: NrqlExpression): string {
  switch (expression.type) {
    case 'number':
      return String(expression.value);
    case 'negate':
      return `-${defaultName(expression.operand)}`;
    case 'arithmetic': {
      const side = (operand: NrqlExpression): string =>
        operand.type === 'arithmetic' ? `(${defaultName(operand)})` : defaultName(operand);
      return `${side(expression.left)} ${expression.operator} ${side(expression.right)}`;
    }
    case 'aggregate':
      return `${expression.function}.${TIMESLICE_VALUE}${expression.field === null ? '' : `.${expression.field}`}`;
    case 'attributeAggregate':
      // count(*) is `count`; the others `<function>.<attribute>`, as NerdGraph names them.
      return expression.attribute === null ? 'count' : `${expression.function}.${expression.attribute}`;
    case 'rate':
      return `rate.${defaultName(expression.of)}`;
    case 'filter':
      return `filter.${defaultName(expression.of)}`;
    case 'uniques':
      return `uniques.${expression.attribute}`;
    case 'attribute':
      return expression.attribute;
    case 'wildcard':
      return '*';
  }
}


// ---------------------------------------------------------------- deployment events

/**
 * Deployment markers as NRDB keeps them: legacy `Deployment` events (REST writes, and the
 * seeded history) and `ChangeTrackingEvent`s (changeTrackingCreateEvent). A query with raw
 * columns over these event types returns one row per event in [SINCE, UNTIL), newest first,
 * at most LIMIT (default 100, MAX 5000), for the apps its top-level WHERE names by appId,
 * appName or entity.guid (as for Metric), in the visible accounts only.
 *
 * Row attributes: `timestamp` (epoch ms) and `entity.guid` on both; `deploymentId` on
 * Deployment rows; `changeTrackingId`, `category` ('Deployment') and `type` on change-tracking
 * rows; `version`, `changelog`, `description`, `user` on both (null when not set). The
 * change-tracking fields the shared model does not keep (type when not Basic, commit, deepLink,
 * shortDescription, groupId) come from recordChangeTrackingDetails. A column a row lacks is
 * null. WHERE may also test appId, appName (legacy Deployment rows only: change-tracking rows
 * have neither) and accountId (the app's). `SELECT *` returns each
 * row's own attributes.
 */
export const DEPLOYMENT_EVENT_TYPES = ['Deployment', 'ChangeTrackingEvent'] as const;
export const DEFAULT_EVENT_LIMIT = 100;

/** Change-tracking event fields writes.ts does not keep, by changeTrackingId. */
export interface ChangeTrackingDetails {
  type?: string;
  commit?: string | null;
  deepLink?: string | null;
  shortDescription?: string | null;
  groupId?: string | null;
}

const detailsByData = new WeakMap<SandboxData, Map<string, ChangeTrackingDetails>>();

/** Remembers what a changeTrackingCreateEvent carried beyond the shared model's fields. */
export function recordChangeTrackingDetails(data: SandboxData, changeTrackingId: string, details: ChangeTrackingDetails): void {
  let map = detailsByData.get(data);
  if (!map) detailsByData.set(data, (map = new Map()));
  map.set(changeTrackingId, details);
}

interface DeploymentEvent {
  app: SandboxApp;
  attributes: Record<string, string | number | null>;
}

function eventAttributes(data: SandboxData, deployment: SandboxDeployment): Record<string, string | number | null> {
  const common = {
    version: deployment.revision,
    changelog: deployment.changelog,
    description: deployment.description,
    // The NerdGraph face's view of the user (divergence.ts: deployment-user).
    user: nerdgraphDeploymentUser(deployment, data),
    'entity.guid': deployment.entityGuid,
  };
  if (deployment.eventType === 'Deployment') {
    return { timestamp: deployment.timestamp, deploymentId: deployment.changeTrackingId, ...common };
  }
  const details = detailsByData.get(data)?.get(deployment.changeTrackingId) ?? {};
  const extra = Object.fromEntries(
    (['commit', 'deepLink', 'shortDescription', 'groupId'] as const).flatMap((key) => {
      const value = details[key];
      return value === undefined || value === null ? [] : [[key, value]];
    }),
  );
  return {
    timestamp: deployment.timestamp,
    changeTrackingId: deployment.changeTrackingId,
    category: 'Deployment',
    type: details.type ?? 'Basic',
    ...common,
    ...extra,
  };
}

function eventAttribute(event: DeploymentEvent, attribute: string): unknown {
  if (Object.hasOwn(event.attributes, attribute)) return event.attributes[attribute];
  // ChangeTrackingEvent rows are keyed by entity.guid: NRDB gives them no appId or appName.
  if ((attribute === 'appId' || attribute === 'appName') && Object.hasOwn(event.attributes, 'changeTrackingId')) return null;
  if (attribute === 'appId' || attribute === 'appName' || attribute === 'accountId') return appAttribute(event.app, attribute);
  return null;
}

/**
 * The deployment events of the FROM's event types in [since, until) that meet the WHERE, newest
 * first: for the apps the top-level WHERE names by appId, appName or entity.guid, or else every
 * app of the visible accounts (as NRDB reads an account's events: alerts_events lists the
 * account's deployments). Mobile apps have none.
 */
function deploymentEvents(query: NrqlQuery, scope: NrqlScope, since: number, until: number): DeploymentEvent[] {
  const types = new Set<string>(query.from.filter((type) => (DEPLOYMENT_EVENT_TYPES as readonly string[]).includes(type)));
  if (types.size === 0) return [];
  const events: DeploymentEvent[] = [];
  const visible = new Set(scope.accountIds);
  const apps = candidateApps(conjunctsOf(query.where), scope).filter((owner): owner is SandboxApp => !isMobileOwner(owner) && visible.has(owner.accountId));
  for (const app of apps) {
    // Only what the ingest lag has let through (ingest.ts).
    for (const deployment of ingestedDeploymentsOf(scope.data, app)) {
      if (!types.has(deployment.eventType) || deployment.timestamp < since || deployment.timestamp >= until) continue;
      const event = { app, attributes: eventAttributes(scope.data, deployment) };
      if (query.where === null || holds(query.where, event, eventAttribute)) events.push(event);
    }
  }
  // Newest first; each app's list is already newest first, and sort is stable.
  events.sort((a, b) => (b.attributes.timestamp as number) - (a.attributes.timestamp as number));
  return events;
}

function executeEventQuery(query: NrqlQuery, scope: NrqlScope, range: TimeRange): NrqlOutcome {
  const metadata = metadataOf(query, range.since, range.until);
  // Other event types have no events in the sandbox.
  const events = deploymentEvents(query, scope, range.since, range.until);
  const results = events.slice(0, query.limit ?? DEFAULT_EVENT_LIMIT).map((event) => eventRow(query, event));
  return { results, metadata };
}

function eventRow(query: NrqlQuery, event: DeploymentEvent): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const item of query.select) {
    if (item.expression.type === 'wildcard') return { ...event.attributes };
    if (item.expression.type !== 'attribute') continue;
    const value = eventAttribute(event, item.expression.attribute);
    row[item.alias ?? item.expression.attribute] = value === undefined ? null : value;
  }
  return row;
}
