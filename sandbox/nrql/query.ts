/**
 * A parsed NRQL query (parser.ts builds it, engine.ts runs it): the AST of the subset the
 * sandbox's NerdGraph face understands, and its bounds. Sources: "NRQL syntax, clauses and
 * functions" (docs.newrelic.com/docs/nrql/nrql-syntax-clauses-functions), "Set a query's time
 * range" (docs.newrelic.com/docs/nrql/using-nrql/query-time-range).
 */
export type AggregateFunction = 'count' | 'sum' | 'average' | 'min' | 'max' | 'stddev' | 'latest';
/** Functions over a plain attribute (not the timeslice value); count with attribute null is count(*). */
export type AttributeFunction = AggregateFunction | 'percentile';
export type TimesliceField = 'count' | 'total' | 'totalExclusive' | 'min' | 'max' | 'sumOfSquares';
export type DurationUnit = 'second' | 'minute' | 'hour' | 'day' | 'week';

export interface NrqlDuration {
  amount: number;
  unit: DurationUnit;
  milliseconds: number;
}

export type NrqlLiteral = string | number;

/**
 * SINCE/UNTIL: epoch ms (a number); relative to the query's clock (`n units AGO`, NOW:
 * `agoMs`); a quoted DateTime string (`atMs`, absolute); or a day reference (`today`,
 * `yesterday`: midnight UTC `daysAgo` days before the clock's day).
 */
export type NrqlTime =
  | number
  | { agoMs: number; text: string }
  | { atMs: number; text: string }
  | { daysAgo: number; text: string };

/**
 * TIMESERIES: a fixed bucket (`n unit`), or AUTO / MAX, whose bucket the engine picks from the
 * window ("NRQL syntax, clauses and functions", TIMESERIES). A bare `TIMESERIES` is AUTO.
 */
export type NrqlTimeseries = NrqlDuration | 'AUTO' | 'MAX';

export type NrqlCondition =
  | { type: 'compare'; attribute: string; operator: '=' | '!='; value: NrqlLiteral }
  | { type: 'in'; attribute: string; negated: boolean; values: NrqlLiteral[] }
  | { type: 'isNull'; attribute: string; negated: boolean }
  | { type: 'like'; attribute: string; negated: boolean; pattern: string }
  | { type: 'and'; left: NrqlCondition; right: NrqlCondition }
  | { type: 'or'; left: NrqlCondition; right: NrqlCondition }
  | { type: 'not'; operand: NrqlCondition };

export type NrqlExpression =
  | { type: 'number'; value: number }
  | { type: 'negate'; operand: NrqlExpression }
  | { type: 'arithmetic'; operator: '+' | '-' | '*' | '/'; left: NrqlExpression; right: NrqlExpression }
  /** field null: the timeslice value as a whole (count = Σcount, average = Σtotal/Σcount, …). */
  | { type: 'aggregate'; function: AggregateFunction; field: TimesliceField | null }
  /** An aggregate of a plain attribute's values (null: `count(*)`); `percentiles` only for percentile(). */
  | { type: 'attributeAggregate'; function: AttributeFunction; attribute: string | null; percentiles: number[] }
  | { type: 'rate'; of: NrqlExpression; per: NrqlDuration }
  | { type: 'filter'; of: NrqlExpression; where: NrqlCondition }
  | { type: 'uniques'; attribute: string; limit: number }
  /** A raw attribute column (only ever a whole select item): one value per event. */
  | { type: 'attribute'; attribute: string }
  /** `SELECT *` (only ever the whole select list): every attribute of each event. */
  | { type: 'wildcard' };

export interface NrqlSelectItem {
  expression: NrqlExpression;
  alias: string | null;
}

export interface NrqlQuery {
  select: NrqlSelectItem[];
  /** The event types after FROM, as written (at least one). */
  from: string[];
  where: NrqlCondition | null;
  /** The FACET attributes in order (`FACET appName, host`); empty without FACET. */
  facets: string[];
  /** Epoch ms or relative time, or null for the default. */
  since: NrqlTime | null;
  until: NrqlTime | null;
  timeseries: NrqlTimeseries | null;
  /** Facet limit (aggregates) or event limit (raw columns), or null for the default. */
  limit: number | null;
}

/** True when the select list reads raw event attributes (columns or `*`) rather than aggregates. */
export function isRawSelect(query: NrqlQuery): boolean {
  return query.select.some((item) => isRawExpression(item.expression));
}

export function isRawExpression(expression: NrqlExpression): boolean {
  return expression.type === 'attribute' || expression.type === 'wildcard';
}

/** The one attribute aggregates read; its fields are the six a timeslice carries. */
export const TIMESLICE_VALUE = 'newrelic.timeslice.value';
export const TIMESLICE_FIELDS: readonly TimesliceField[] = ['count', 'total', 'totalExclusive', 'min', 'max', 'sumOfSquares'];
export const MAX_LIMIT = 5000;
export const DEFAULT_UNIQUES_LIMIT = 1000;
export const MAX_UNIQUES_LIMIT = 10_000;
