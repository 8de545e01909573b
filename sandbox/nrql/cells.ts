/**
 * Where rows are summed (nrql/engine.ts): Stats (timeslice sums, mergeable across buckets),
 * Accumulator (one attribute aggregate's running values), Cell (one facet value, filter
 * context and bucket) and Group (one facet value's cells).
 */
import type { TimesliceRow } from '../timeslices.ts';
import { attributeOf, isScalar } from './conditions.ts';
import { eventAttribute, type DeploymentEvent } from './events.ts';
import type { Plan } from './plan.ts';
import { TIMESLICE_FIELDS, type TimesliceField } from './query.ts';
import type { Series } from './scope.ts';
export const FIELD_INDEX = Object.fromEntries(TIMESLICE_FIELDS.map((field, index) => [field, index])) as Record<TimesliceField, number>;

/** Running sums over rows: enough for every aggregate, and mergeable across buckets. */
export class Stats {
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
export class Accumulator {
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
export type Subject = Series | DeploymentEvent;

export function readAttribute(subject: Subject, attribute: string): unknown {
  return 'metric' in subject ? attributeOf(subject, attribute) : eventAttribute(subject, attribute);
}

/** The rows of one facet value, filter context and bucket. */
export class Cell {
  readonly stats: Stats;
  /** Some row falls here (known even on the presence-only path, where stats stay empty). */
  present = false;
  /** Series (or events) with rows here, each once; only kept for uniques(). */
  readonly series: Subject[] = [];
  /** One per plan.attributeAggregates entry. */
  readonly attributes: Accumulator[];

  private readonly plan: Plan;

  constructor(plan: Plan) {
    this.plan = plan;
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
export class Group {
  private readonly cells: Array<Array<Cell | undefined>>;
  private readonly totals = new Map<number, Cell>();
  private readonly empty: Cell;

  readonly key: FacetKey;
  private readonly plan: Plan;
  private readonly buckets: number;

  constructor(
    key: FacetKey,
    plan: Plan,
    buckets: number,
  ) {
    this.key = key;
    this.plan = plan;
    this.buckets = buckets;
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
export type FacetKey = string | number | null | Array<string | number>;
/** Groups by their facet (several attributes' values keyed by their JSON). */
export type Groups = Map<string | number | null, Group>;
