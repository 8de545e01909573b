/**
 * Evaluation of select items over summed cells (nrql/engine.ts): arithmetic (null in, null
 * out; division by zero is null), timeslice aggregates (count = Σcount, average =
 * Σtotal/Σcount, ...), aggregates of plain attributes, percentile, rate, filter and uniques.
 */
import { FIELD_INDEX, type Accumulator, type Group, readAttribute, type Stats, type Subject } from './cells.ts';
import { isScalar } from './conditions.ts';
import type { Plan } from './plan.ts';
import type { AggregateFunction, AttributeFunction, NrqlExpression, TimesliceField } from './query.ts';
/**
 * What one select item evaluates to: a number, null (no data, or undefined arithmetic), uniques'
 * list, latest()'s value (a string too), or percentile()'s `{ "<percentile>": value }`.
 */
export type Value = number | string | null | Array<string | number> | Record<string, number | null>;
/** Numbers before strings; numbers by value, strings by UTF-16 code units; facet arrays element by element. */
export function compareValues(a: unknown, b: unknown): number {
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
interface Frame {
  plan: Plan;
  group: Group;
  bucket: number | 'all';
  /** Length of the time the cell covers: rate()'s denominator. */
  spanMs: number;
  context: number;
}

export function frameOf(plan: Plan, group: Group, bucket: number | 'all', spanMs: number): Frame {
  return { plan, group, bucket, spanMs, context: 0 };
}

export function evaluate(expression: NrqlExpression, frame: Frame): Value {
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
