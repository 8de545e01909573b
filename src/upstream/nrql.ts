import { boundedMemo } from '../v2/bounded-memo.ts';
import { nrqlLiteral as literal, type NrqlValue } from './query-literal.ts';

/**
 * The generic NRQL machinery: the metric data and metric names queries every metric route
 * sends (as GraphQL variables of static documents), and the checked pieces route-specific
 * queries are built from (in the packages' *-queries.ts modules). User strings enter only through
 * query-literal.ts; attribute names, aliases and expressions come from the mapping tables and
 * are checked against a conservative shape so that a table typo fails loudly instead of
 * producing a different query.
 */
export const TIMESLICE_VALUE = 'newrelic.timeslice.value';
/** NRQL's ceiling for `uniques(attr, limit)`. */
export const MAX_UNIQUES = 10_000;

export type { NrqlValue } from './query-literal.ts';

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
  /** An expression template from mappings/common/metric-values.ts ({v}, {W} placeholders). */
  expression: string;
}

const ATTRIBUTE = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const ALIAS = /^[a-z][a-z0-9_]*$/;
// Function names, the timeslice value, field indexes, numbers, operators, parentheses, commas.
const EXPRESSION = /^(?:[a-z]+\(|newrelic\.timeslice\.value(?:\['[A-Za-z]+'\])?|\d+(?:\.\d+)?|[-+*/(), ]|1 (?:minute|second))+$/;

/** An attribute name from a mapping table, checked (a typo fails loudly). */
export function nrqlAttribute(name: string): string {
  if (!ATTRIBUTE.test(name)) throw new Error(`not an NRQL attribute name: ${name}`);
  return name;
}
const attribute = nrqlAttribute;

/** An alias from a mapping table, checked. */
export function nrqlAlias(name: string): string {
  if (!ALIAS.test(name)) throw new Error(`not an NRQL alias: ${name}`);
  return name;
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

/** The WHERE conditions of timeslice rows: the scope, the metric names (if any), unscoped rows only. */
export function timesliceWhere(scope: readonly NrqlEquality[], names: readonly string[] | undefined): string {
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
  return expandedFormula(`${windowSeconds}\n${template}`);
}

/**
 * Templates are the mappings' own formulas, windows a few lengths: a small memo saves the replace
 * and the check on every value of every request. Keyed `<window seconds>\n<template>`.
 */
const expandedFormula = boundedMemo(4_096, (key: string): string => {
  const cut = key.indexOf('\n');
  const expression = key.slice(cut + 1).replaceAll('{v}', TIMESLICE_VALUE).replaceAll('{W}', key.slice(0, cut));
  if (!EXPRESSION.test(expression)) throw new Error(`not a supported NRQL expression: ${expression}`);
  return expression;
});

/** `expression AS alias` of a select item over a window of `windowSeconds`, both checked. */
export function selectAs(item: SelectItem, windowSeconds: number): string {
  return `${expandFormula(item.expression, windowSeconds)} AS ${nrqlAlias(item.alias)}`;
}

/** `SINCE <since> UNTIL <until>`, epoch ms. */
export const sinceUntil = (since: number, until: number): string => `SINCE ${literal(since)} UNTIL ${literal(until)}`;

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
  const select = options.items.map((item) => selectAs(item, windowSeconds));
  const clauses = [
    `SELECT ${select.join(', ')} FROM Metric`,
    `WHERE ${timesliceWhere(options.scope, options.names)}`,
    `FACET metricTimesliceName LIMIT MAX`,
    sinceUntil(options.since, options.until),
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
    `WHERE ${timesliceWhere(options.scope, options.names)} AND ${TIMESLICE_VALUE} IS NOT NULL`,
    sinceUntil(options.since, options.until),
  ].join(' ');
}
