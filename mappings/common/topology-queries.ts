import { acceptedFormulasOf } from './metric-values.ts';
import { boundedMemo, MAX_UNIQUES, type NrqlEquality, nrqlAlias, nrqlAttribute, nrqlLiteral, type SelectItem, expandFormula, sinceUntil, timesliceWhere } from '../../src/mapping-api.ts';

/**
 * The NRQL of the host and instance routes (applications' hosts and instances, the
 * applications list's filter[host], key transactions' current window): who reports now, and
 * one faceted summary per host or instance.
 */

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
    `WHERE appId IN (${options.appIds.map(nrqlLiteral).join(', ')}) AND metricTimesliceName IN (${PRESENCE_METRICS.map(nrqlLiteral).join(', ')})`,
    `FACET appId LIMIT MAX`,
    sinceUntil(options.since, options.until),
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
    `WHERE host LIKE '%' AND metricTimesliceName IN (${PRESENCE_METRICS.map(nrqlLiteral).join(', ')})`,
    `FACET appId LIMIT MAX`,
    sinceUntil(options.since, options.until),
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
  const { select, allNames } = summaryParts(options.items, windowSeconds);
  return [
    `SELECT ${select} FROM Metric`,
    `WHERE ${timesliceWhere(options.scope, allNames)}`,
    `FACET ${nrqlAttribute(options.facet)} LIMIT MAX`,
    sinceUntil(options.since, options.until),
  ].join(' ');
}

/**
 * The SELECT list and metric names of a summary: the same for every request over one item list
 * (a frozen module constant: it is kept by the list's identity) and window length, so built once
 * per pair, not per request.
 */
const summaryPartsByItems = new WeakMap<readonly FilteredItem[], (windowSeconds: number) => SummaryParts>();
/** Window lengths kept per item list: the current window, and a few others. */
const MAX_WINDOWS_KEPT = 64;

interface SummaryParts {
  select: string;
  allNames: readonly string[];
}

function summaryParts(items: readonly FilteredItem[], windowSeconds: number): SummaryParts {
  let partsOf = summaryPartsByItems.get(items);
  if (partsOf === undefined) {
    partsOf = boundedMemo(MAX_WINDOWS_KEPT, (seconds: number): SummaryParts => {
      const select = items.map((item) => {
        const names = item.metrics.map(nrqlLiteral).join(', ');
        return `filter(${expandFormula(item.expression, seconds)}, WHERE metricTimesliceName IN (${names})) AS ${nrqlAlias(item.alias)}`;
      });
      return { select: select.join(', '), allNames: [...new Set(items.flatMap((item) => item.metrics))] };
    });
    summaryPartsByItems.set(items, partsOf);
  }
  return partsOf(windowSeconds);
}

/** endUserApdexQuery's one item, built once (summaryParts keys on the list). */
let endUserApdexItems: readonly FilteredItem[] | undefined;

function endUserApdexItemsOf(): readonly FilteredItem[] {
  if (endUserApdexItems === undefined) {
    const score = acceptedFormulasOf('EndUser/Apdex').score;
    if (score === undefined) throw new Error('no EndUser/Apdex score formula');
    endUserApdexItems = Object.freeze([Object.freeze({ alias: 'eu_apdex_score', metrics: Object.freeze(['EndUser/Apdex']), expression: score })]);
  }
  return endUserApdexItems;
}

/**
 * Each app's browser apdex score over the current window, one row per app (FACET appId): v2's
 * end_user_summary.apdex_score, the score of the app's EndUser/Apdex timeslices (S + T/2) / N
 * (rest-v2.md §2.2, docs/metric-data-rules.md), which the APM entity does not carry.
 */
export function endUserApdexQuery(options: { appIds: readonly number[]; since: number; until: number }): string {
  if (options.appIds.length === 0) throw new Error('endUserApdexQuery needs at least one app id');
  return facetedSummaryQuery({
    scope: [{ attribute: 'appId', value: options.appIds }],
    facet: 'appId',
    items: endUserApdexItemsOf(),
    since: options.since,
    until: options.until,
  });
}
