import { quoteLiteral } from './query-literal.ts';

/**
 * Builds the NRQL the metric routes send (as GraphQL variables of static documents). User
 * strings enter only through quoteLiteral; attribute names, aliases and expressions come from
 * the mapping tables and are checked against a conservative shape so that a table typo fails
 * loudly instead of producing a different query.
 */
export const TIMESLICE_VALUE = 'newrelic.timeslice.value';
/** NRQL's ceiling for `uniques(attr, limit)`. */
export const MAX_UNIQUES = 10_000;

export type NrqlValue = string | number;

/**
 * `attribute = value`: how a route scopes its rows (e.g. `appId = 123`). Where New Relic's
 * spelling or stored type is not settled, a scope names every candidate: several attributes
 * match when any one holds the value (`(entityGuid = 'g' OR entity.guid = 'g')`), several values
 * when the attribute equals any (`realAgentId IN (5, '5')`: NRQL compares by type, so a number
 * never equals a string literal).
 */
export interface NrqlEquality {
  attribute: string | readonly string[];
  value: NrqlValue | readonly NrqlValue[];
}

export interface SelectItem {
  alias: string;
  /** An expression template from mappings/shared/metric-values.ts ({v}, {W} placeholders). */
  expression: string;
}

const ATTRIBUTE = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const ALIAS = /^[a-z][a-z0-9_]*$/;
// Function names, the timeslice value, field indexes, numbers, operators, parentheses, commas.
const EXPRESSION = /^(?:[a-z]+\(|newrelic\.timeslice\.value(?:\['[A-Za-z]+'\])?|\d+(?:\.\d+)?|[-+*/(), ]|1 (?:minute|second))+$/;

function attribute(name: string): string {
  if (!ATTRIBUTE.test(name)) throw new Error(`not an NRQL attribute name: ${name}`);
  return name;
}

function literal(value: NrqlValue): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer NRQL literal: ${value}`);
    return String(value);
  }
  return quoteLiteral(value);
}

/**
 * Unscoped timeslice rows only. Agents record a segment metric (Datastore/statement/...,
 * External/<host>/<library>/..., Custom/..., Ruby Controller/...) both unscoped and scoped to
 * its transaction; a scoped row has the same metricTimesliceName plus a `scope` attribute
 * ("Query APM metric timeslice data with NRQL": its attribute table and its
 * `scope = 'Controller/users/show'` example). REST v2's metric data had no scope: it reported
 * the unscoped values, so every timeslice read here leaves the scoped rows out (without this,
 * call_count, calls_per_minute and the other sums of such names come out about doubled).
 * That unscoped rows have no `scope` at all (rather than an empty one) is UNCONFIRMED: the
 * docs call the attribute optional and show no query for the unscoped rows.
 */
export const UNSCOPED_ROWS = 'scope IS NULL';

function equality(c: NrqlEquality): string {
  const attributes = typeof c.attribute === 'string' ? [c.attribute] : c.attribute;
  const values: readonly NrqlValue[] = typeof c.value === 'string' || typeof c.value === 'number' ? [c.value] : c.value;
  if (attributes.length === 0 || values.length === 0) throw new Error('an NRQL equality needs an attribute and a value');
  const test = (name: string): string =>
    values.length === 1 ? `${attribute(name)} = ${literal(values[0] as NrqlValue)}` : `${attribute(name)} IN (${values.map(literal).join(', ')})`;
  return attributes.length === 1 ? test(attributes[0] as string) : `(${attributes.map(test).join(' OR ')})`;
}

function where(scope: readonly NrqlEquality[], names: readonly string[] | undefined): string {
  const conditions = scope.map(equality);
  if (names !== undefined) conditions.push(`metricTimesliceName IN (${names.map(literal).join(', ')})`);
  conditions.push(UNSCOPED_ROWS);
  return conditions.join(' AND ');
}

/**
 * Does the formula divide by the timeslice's length ({W})? Per-minute values and percentages of
 * the window do: computed over a window other than {W} (NerdGraph's snapped one), they need
 * correcting by {W} / the window used.
 */
export function isWindowRelative(template: string): boolean {
  return template.includes('{W}');
}

/** Expands a formula template for a timeslice of `windowSeconds`. */
export function expandFormula(template: string, windowSeconds: number): string {
  const expression = template.replaceAll('{v}', TIMESLICE_VALUE).replaceAll('{W}', String(windowSeconds));
  if (!EXPRESSION.test(expression)) throw new Error(`not a supported NRQL expression: ${expression}`);
  return expression;
}

function timeseries(widthMs: number): string {
  const minutes = widthMs / 60_000;
  if (!Number.isInteger(minutes) || minutes < 1) throw new Error(`TIMESERIES width must be whole minutes: ${widthMs} ms`);
  return `TIMESERIES ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

/**
 * One query for every requested metric: faceted by name, so the answer costs one upstream
 * request however many names and values were asked for.
 */
export function timesliceDataQuery(options: {
  scope: readonly NrqlEquality[];
  names: readonly string[];
  items: readonly SelectItem[];
  since: number;
  until: number;
  /** Bucket width; omitted for one aggregate over the window. */
  timeseriesMs?: number;
}): string {
  const windowSeconds = (options.timeseriesMs ?? options.until - options.since) / 1000;
  const select = options.items.map((item) => {
    if (!ALIAS.test(item.alias)) throw new Error(`not an NRQL alias: ${item.alias}`);
    return `${expandFormula(item.expression, windowSeconds)} AS ${item.alias}`;
  });
  const clauses = [
    `SELECT ${select.join(', ')} FROM Metric`,
    `WHERE ${where(options.scope, options.names)}`,
    `FACET metricTimesliceName LIMIT MAX`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ];
  if (options.timeseriesMs !== undefined) clauses.push(timeseries(options.timeseriesMs));
  return clauses.join(' ');
}

/** The timeslice metric names with data in [since, until), optionally only among `names`. */
export function metricNamesQuery(options: {
  scope: readonly NrqlEquality[];
  names?: readonly string[];
  since: number;
  until: number;
}): string {
  return [
    `SELECT uniques(metricTimesliceName, ${MAX_UNIQUES}) AS names FROM Metric`,
    `WHERE ${where(options.scope, options.names)} AND ${TIMESLICE_VALUE} IS NOT NULL`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ].join(' ');
}

/** The attributes a deployment marker carries, on legacy Deployment and ChangeTrackingEvent rows. */
export const DEPLOYMENT_ATTRIBUTES = ['timestamp', 'changeTrackingId', 'deploymentId', 'version', 'changelog', 'description', 'user'] as const;

/**
 * An entity's deployment markers in [since, until), newest first: legacy `Deployment` events
 * (no category) and change-tracking events of the Deployment category.
 */
export function deploymentEventsQuery(options: { entityGuid: string; since: number; until: number; limit: number | 'MAX' }): string {
  const limit = options.limit === 'MAX' ? 'MAX' : String(Math.trunc(options.limit));
  return [
    `SELECT ${DEPLOYMENT_ATTRIBUTES.join(', ')} FROM Deployment, ChangeTrackingEvent`,
    `WHERE entity.guid = ${literal(options.entityGuid)} AND (category = 'Deployment' OR category IS NULL)`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)} LIMIT ${limit}`,
  ].join(' ');
}

/** Columns of an account's deployment markers (alerts_events' DEPLOYMENT events). */
export const ACCOUNT_DEPLOYMENT_ATTRIBUTES = ['timestamp', 'changeTrackingId', 'deploymentId', 'version', 'description', 'appId', 'entity.guid'] as const;

/** Every deployment marker of the account in [since, until), newest first (alerts_events). */
export function accountDeploymentEventsQuery(options: { since: number; until: number }): string {
  return [
    `SELECT ${ACCOUNT_DEPLOYMENT_ATTRIBUTES.join(', ')} FROM Deployment, ChangeTrackingEvent`,
    `WHERE category = 'Deployment' OR category IS NULL`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)} LIMIT MAX`,
  ].join(' ');
}

/** One summary value: an expression template computed over the rows of the named metrics only. */
export interface FilteredItem extends SelectItem {
  metrics: readonly string[];
}

/**
 * One aggregate row per facet value (e.g. per `host` or `realAgentId`) over [since, until),
 * each item a `filter(<expression>, WHERE metricTimesliceName IN (...))` so several metrics
 * share one query. Metric names enter as literals; LIMIT MAX so no facet is cut.
 */
export function facetedSummaryQuery(options: {
  scope: readonly NrqlEquality[];
  facet: string;
  items: readonly FilteredItem[];
  since: number;
  until: number;
}): string {
  const windowSeconds = (options.until - options.since) / 1000;
  const select = options.items.map((item) => {
    if (!ALIAS.test(item.alias)) throw new Error(`not an NRQL alias: ${item.alias}`);
    const names = item.metrics.map(literal).join(', ');
    return `filter(${expandFormula(item.expression, windowSeconds)}, WHERE metricTimesliceName IN (${names})) AS ${item.alias}`;
  });
  const allNames = [...new Set(options.items.flatMap((item) => item.metrics))];
  return [
    `SELECT ${select.join(', ')} FROM Metric`,
    `WHERE ${where(options.scope, allNames)}`,
    `FACET ${attribute(options.facet)} LIMIT MAX`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ].join(' ');
}

/**
 * The whole-minute look-back that stands for "now" in host and instance lists: v2 listed the
 * hosts and instances that reported recently, as NerdGraph's applicationInstances does (its
 * default window is the last 10 minutes).
 */
export const CURRENT_WINDOW_MS = 10 * 60_000;

/** [since, until) of the current-hosts window: 10 whole minutes up to now's minute. */
export function currentWindow(now: number): { since: number; until: number } {
  const until = Math.floor(now / 60_000) * 60_000;
  return { since: until - CURRENT_WINDOW_MS, until };
}

/**
 * The metric names that prove an agent instance is reporting: web apps report HttpDispatcher,
 * background ones OtherTransaction/all (naming the metrics keeps the read small).
 */
export const PRESENCE_METRICS = ['HttpDispatcher', 'OtherTransaction/all'] as const;

/** The hosts and agent instances (realAgentId) of each app, faceted by appId. */
export function appInstancesQuery(options: { appIds: readonly number[]; since: number; until: number }): string {
  if (options.appIds.length === 0) throw new Error('appInstancesQuery needs at least one app id');
  return [
    `SELECT uniques(host, ${MAX_UNIQUES}) AS hosts, uniques(realAgentId, ${MAX_UNIQUES}) AS instances FROM Metric`,
    `WHERE appId IN (${options.appIds.map(literal).join(', ')}) AND metricTimesliceName IN (${PRESENCE_METRICS.map(literal).join(', ')})`,
    `FACET appId LIMIT MAX`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ].join(' ');
}

/**
 * Every app's current host names in the account, faceted by appId: what v2's filter[host]
 * matched against. No client text goes in (`host LIKE '%'` only says "has a host"): the
 * substring test is made on the answer, case-insensitively as v2 did.
 */
export function hostIndexQuery(options: { since: number; until: number }): string {
  return [
    `SELECT uniques(host, ${MAX_UNIQUES}) AS hosts FROM Metric`,
    `WHERE host LIKE '%' AND metricTimesliceName IN (${PRESENCE_METRICS.map(literal).join(', ')})`,
    `FACET appId LIMIT MAX`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ].join(' ');
}

/** Whether a Metric row is a key transaction's apdex row (`Apdex/…`) rather than its call row. */
const APDEX_ROW = "metricTimesliceName LIKE 'Apdex/%'";
const CALL_ROW = "metricTimesliceName NOT LIKE 'Apdex/%'";

/**
 * The raw sums of key transactions' timeslices in [since, until), one row per KT (FACET
 * entity.guid): a KT's rows are its call metric's and its `Apdex/…` metric's (rest-v2.md §2.5),
 * told apart by name. The mapping applies the REST formulas to the sums.
 */
export function keyTransactionSumsQuery(options: { guids: readonly string[]; since: number; until: number }): string {
  if (options.guids.length === 0) throw new Error('keyTransactionSumsQuery needs at least one GUID');
  const v = TIMESLICE_VALUE;
  return [
    `SELECT filter(count(${v}), WHERE ${CALL_ROW}) AS calls, filter(sum(${v}), WHERE ${CALL_ROW}) AS call_time,`,
    `filter(count(${v}), WHERE ${APDEX_ROW}) AS apdex_s, filter(sum(${v}), WHERE ${APDEX_ROW}) AS apdex_t,`,
    `filter(sum(${v}['totalExclusive']), WHERE ${APDEX_ROW}) AS apdex_f FROM Metric`,
    `WHERE entity.guid IN (${options.guids.map(literal).join(', ')}) AND ${UNSCOPED_ROWS}`,
    `FACET entity.guid LIMIT MAX`,
    `SINCE ${literal(options.since)} UNTIL ${literal(options.until)}`,
  ].join(' ');
}
