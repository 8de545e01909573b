import { nrqlLiteral, sinceUntil, TIMESLICE_VALUE, UNSCOPED_ROWS } from '../../src/mapping-api.ts';

/** The NRQL of the key transaction routes (list and show). */

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
    `WHERE entity.guid IN (${options.guids.map(nrqlLiteral).join(', ')}) AND ${UNSCOPED_ROWS}`,
    `FACET entity.guid LIMIT MAX`,
    sinceUntil(options.since, options.until),
  ].join(' ');
}
