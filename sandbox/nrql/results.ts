/**
 * Result rows (nrql/engine.ts): one row per facet (ranked by the first item, at most LIMIT),
 * or one per TIMESERIES bucket, with NerdGraph's default names for unaliased items
 * (`average.newrelic.timeslice.value`, `count`, `uniques.appName`) and, for several FACET
 * attributes, `facet` as the array of their values.
 */
import type { Group } from './cells.ts';
import { compareValues, evaluate, frameOf, type Value } from './evaluate.ts';
import type { Plan } from './plan.ts';
import { TIMESLICE_VALUE, type NrqlExpression, type NrqlQuery, type NrqlSelectItem } from './query.ts';
import type { TimeWindow } from './time-window.ts';

const DEFAULT_FACET_LIMIT = 10;
export function resultRows(query: NrqlQuery, plan: Plan, window: TimeWindow, groups: Group[]): Array<Record<string, unknown>> {
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
function itemValues(items: NrqlSelectItem[], plan: Plan, group: Group, bucket: number, bucketMs: number): Record<string, Value> {
  const frame = frameOf(plan, group, bucket, bucketMs);
  return Object.fromEntries(items.map((item) => [item.alias ?? defaultName(item.expression), evaluate(item.expression, frame)]));
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
