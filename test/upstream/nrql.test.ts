import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METRIC_FAMILIES } from '../../mappings/common/metric-values.ts';
import {
  expandFormula,
  isWindowRelative,
  metricNamesQuery,
  timesliceDataQuery,
} from '../../src/upstream/nrql.ts';
import { hasControlCharacters } from '../../src/upstream/query-literal.ts';
import { parseNrql, type NrqlCondition, type NrqlQuery } from '../../sandbox/nrql/parser.ts';
import { appInstancesQuery, currentWindow, facetedSummaryQuery, hostIndexQuery } from '../../mappings/common/topology-queries.ts';
import { keyTransactionSumsQuery } from '../../mappings/key-transactions/key-transaction-queries.ts';

/**
 * The NRQL the gateway sends, read back by the sandbox's independent NRQL parser: whatever
 * metric names a client sends, the query holds exactly those names as literals and nothing
 * else about it changes (no injection through quotes, backslashes, keywords or unicode).
 */
const scope = [{ attribute: 'appId', value: 200000123 }];
const build = (names: string[]): string =>
  timesliceDataQuery({
    scope,
    names,
    items: [{ alias: 'v0', expression: 'count({v})' }, { alias: 'v1', expression: 'rate(count({v}), 1 minute)' }],
    since: 1_795_345_200_000,
    until: 1_795_347_000_000,
    timeseriesMs: 60_000,
  });

/** The names of the `metricTimesliceName IN (...)` condition, and the query with them blanked. */
function splitNames(query: NrqlQuery): { names: unknown[]; rest: NrqlQuery } {
  let names: unknown[] = [];
  const blank = (condition: NrqlCondition | null): NrqlCondition | null => {
    if (condition === null) return null;
    if (condition.type === 'and') return { ...condition, left: blank(condition.left) as NrqlCondition, right: blank(condition.right) as NrqlCondition };
    if (condition.type === 'in' && condition.attribute === 'metricTimesliceName') {
      names = condition.values;
      return { ...condition, values: condition.values.map(() => 'BLANK') };
    }
    return condition;
  };
  const rest = { ...query, where: blank(query.where) };
  return { names, rest };
}

const metricName = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom("'", "\\'", '\\', "x') OR appId IN (1", ' SINCE 1 WEEK AGO', "' FACET appName --", 'Ω名前🚀', '`a`', '"q"', ''),
  )
  .filter((name) => !hasControlCharacters(name));

describe('the metric-data NRQL holds exactly the names asked for (property)', () => {
  it('for arbitrary names', () => {
    const reference = splitNames(parseNrql(build(['a', 'b', 'c'])));
    fc.assert(
      fc.property(fc.array(metricName, { minLength: 3, maxLength: 3 }), (names) => {
        const parsed = splitNames(parseNrql(build(names)));
        expect(parsed.names).toEqual(names);
        expect(parsed.rest).toEqual(reference.rest);
      }),
      { numRuns: 1500 },
    );
  });
});

describe('the formula table', () => {
  const formulas = METRIC_FAMILIES.flatMap((family) => Object.entries(family.formulas).map(([value, formula]) => [`${family.id}.${value}`, formula] as const));

  it.each(formulas)('%s expands to NRQL the parser reads as one aggregate expression', (_label, formula) => {
    const query = parseNrql(`SELECT ${expandFormula(formula, 60)} AS v0 FROM Metric WHERE appId = 1`);
    expect(query.select).toHaveLength(1);
    expect(JSON.stringify(query.select[0]?.expression)).toMatch(/"aggregate"/);
  });

  it('substitutes the timeslice width where a formula depends on it', () => {
    const percent = METRIC_FAMILIES.find((family) => family.id === 'cpu-time')?.formulas.percent as string;
    expect(expandFormula(percent, 1800)).toBe('100 * sum(newrelic.timeslice.value) / 1800');
  });

  it('refuses a template that is not a plain aggregate expression (a table typo fails loudly)', () => {
    expect(() => expandFormula("count({v}) FROM Transaction WHERE x = 'y'", 60)).toThrow(/not a supported NRQL expression/);
    expect(() => expandFormula('latest({v})', 60)).not.toThrow(); // the shape check is lexical
  });

  it('builds a names query the parser reads', () => {
    const query = parseNrql(metricNamesQuery({ scope, since: 1, until: 2 }));
    expect(query.select[0]?.expression).toEqual({ type: 'uniques', attribute: 'metricTimesliceName', limit: 10_000 });
  });

  it('builds the page-details query for 200 app ids the parser reads, faceted by appId with uniques at their ceiling', () => {
    const appIds = Array.from({ length: 200 }, (_, i) => 200_000_000 + i * 37);
    const window = currentWindow(Date.UTC(2026, 10, 22, 12, 0, 30));
    expect(window).toEqual({ since: Date.UTC(2026, 10, 22, 11, 50), until: Date.UTC(2026, 10, 22, 12, 0) });
    const query = parseNrql(appInstancesQuery({ appIds, ...window }));
    expect(query.facets).toEqual(['appId']);
    expect(query.limit).toBe(5000);
    expect(query.select.map((item) => item.expression)).toEqual([
      { type: 'uniques', attribute: 'host', limit: 10_000 },
      { type: 'uniques', attribute: 'realAgentId', limit: 10_000 },
    ]);
    const inList = JSON.stringify(query.where).match(/2000\d{5}/g) ?? [];
    expect(new Set(inList.map(Number))).toEqual(new Set(appIds));
  });

  it('refuses app ids that are not safe integers, and an empty page', () => {
    expect(() => appInstancesQuery({ appIds: [1.5], since: 0, until: 60_000 })).toThrow();
    expect(() => appInstancesQuery({ appIds: [], since: 0, until: 60_000 })).toThrow();
  });

  it('builds a host-index query with no client text in it', () => {
    const query = hostIndexQuery({ since: 0, until: 600_000 });
    expect(query).toBe(
      "SELECT uniques(host, 10000) AS hosts FROM Metric WHERE host LIKE '%' AND metricTimesliceName IN ('HttpDispatcher', 'OtherTransaction/all') FACET appId LIMIT MAX SINCE 0 UNTIL 600000",
    );
    expect(parseNrql(query).facets).toEqual(['appId']);
  });

  it('reads only unscoped rows wherever it sums or lists timeslices (scope IS NULL, a top-level conjunct)', () => {
    const unscoped = { type: 'isNull', attribute: 'scope', negated: false };
    const conjuncts = (condition: NrqlCondition | null): NrqlCondition[] =>
      condition === null ? [] : condition.type === 'and' ? [...conjuncts(condition.left), ...conjuncts(condition.right)] : [condition];
    const queries = [
      build(['Datastore/statement/MySQL/users/select']),
      metricNamesQuery({ scope, since: 0, until: 600_000 }),
      facetedSummaryQuery({ scope, facet: 'host', items: [{ alias: 'calls', metrics: ['HttpDispatcher'], expression: 'count({v})' }], since: 0, until: 600_000 }),
      keyTransactionSumsQuery({ guids: ['MXxBUE18VFJBTlNBQ1RJT058MQ'], since: 0, until: 600_000 }),
    ];
    for (const text of queries) expect(conjuncts(parseNrql(text).where), text).toContainEqual(unscoped);
  });
});

describe('window-relative formulas', () => {
  it('are the per-minute values and the percentages of the window: those divide by {W}', () => {
    const relative = METRIC_FAMILIES.flatMap((family) => Object.entries(family.formulas).filter(([, formula]) => isWindowRelative(formula)).map(([value]) => `${family.id}.${value}`));
    expect(relative.sort()).toEqual(
      [
        'call.calls_per_minute', 'call.requests_per_minute', 'call.total_call_time_per_minute', 'cpu-time.percent', 'end-user.calls_per_minute',
        'end-user.fe_time_percentage', 'end-user.network_time_percentage', 'end-user.requests_per_minute', 'errors.errors_per_minute',
        'gc.calls_per_minute', 'gc.total_call_time_per_minute', 'gc.utilization',
      ].sort(),
    );
  });
});
