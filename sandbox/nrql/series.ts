/**
 * Which series a Metric query reads (nrql/engine.ts): the apps its top-level WHERE names (or
 * every visible app), the metrics it names, one series per instance share and per scope
 * (behaviour scopedTimeslices, timeslices.ts scopesOf), and key transactions named by GUID
 * (behaviour keyTransactionRowsCarryEntityGuid). "No application was matched" is a documented
 * NRQL error (rest-v2.md §4 CHART-ERR).
 */
import { instanceSharesOf } from '../instance-split.ts';
import type { SandboxApp, SandboxData, SandboxKeyTransaction } from '../model.ts';
import { isMobileOwner, keyTransactionApdexName, metricsOf, scopesOf, type MetricOwner, type SandboxMetric, type TimesliceScope } from '../timeslices.ts';
import { appAttribute, attributeOf, holds, sameValue } from './conditions.ts';
import { INSTANCE_ATTRIBUTE_SET, type Plan } from './plan.ts';
import type { NrqlCondition, NrqlLiteral, NrqlQuery } from './query.ts';
import { NRQL_MESSAGES, NrqlError, type NrqlScope, type Series } from './scope.ts';
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

export function selectSeries(query: NrqlQuery, plan: Plan, scope: NrqlScope): Series[] {
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

export function conjunctsOf(condition: NrqlCondition | null): NrqlCondition[] {
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
export function candidateApps(conjuncts: NrqlCondition[], scope: NrqlScope, metricScoped = false, readsTimeslices = false): MetricOwner[] {
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
