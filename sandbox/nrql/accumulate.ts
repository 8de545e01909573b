/**
 * The single pass over rows (nrql/engine.ts): each series (or deployment event) finds its
 * facet group and the filter() contexts it meets, and its rows are summed into their buckets;
 * without aggregates only presence per bucket is marked, and no row is generated.
 */
import { instanceRow, splitRow } from '../instance-split.ts';
import { hasRows, rowAt, rowStarts } from '../timeslices.ts';
import { Group, readAttribute, type FacetKey, type Groups, type Subject } from './cells.ts';
import { holds, attributeOf, isScalar } from './conditions.ts';
import { eventAttribute, type DeploymentEvent } from './events.ts';
import type { Plan } from './plan.ts';
import type { NrqlQuery } from './query.ts';
import { NRQL_MESSAGES, NrqlError, type Series } from './scope.ts';
import type { TimeWindow } from './time-window.ts';
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

export function accumulate(series: Series[], groups: Groups, query: NrqlQuery, plan: Plan, window: TimeWindow, now: number, budget: { rows: number }): void {
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
export function accumulateEvents(events: DeploymentEvent[], groups: Groups, query: NrqlQuery, plan: Plan, window: TimeWindow): void {
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
