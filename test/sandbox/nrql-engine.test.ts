import { describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import { generateSandboxData } from '../../sandbox/data.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { NRQL_MESSAGES, NrqlError, runNrql, type NrqlOutcome } from '../../sandbox/nrql/engine.ts';
import { NrqlSyntaxError } from '../../sandbox/nrql/parser.ts';
import {
  BULK_METRIC_COUNT,
  DAY_MS,
  HOUR_MS,
  LIFECYCLE_NAMES,
  MINUTE_MS,
  findMetric,
  hasRows,
  metricsOf,
  rowsOf,
  type TimesliceRow,
} from '../../sandbox/timeslices.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const data = generateSandboxData({ seed: 7, apmApps: 20, now: FIXED });
const PRIMARY = 1000001;
const SECONDARY = 1000002;
const primaryApps = data.apps.filter((app) => app.accountId === PRIMARY);
const secondaryApps = data.apps.filter((app) => app.accountId === SECONDARY);
/** A reporting app of the primary account (metrics up to now), with the ordinary catalog. */
const app = primaryApps.find((candidate) => candidate.reporting && metricsOf(candidate, data).length < 100) as SandboxApp;
/** The app of the primary account with 2,345 extra `Custom/Bulk/...` metrics. */
const bulk = primaryApps.find((candidate) => metricsOf(candidate, data).length > BULK_METRIC_COUNT) as SandboxApp;
const foreign = secondaryApps.find((candidate) => candidate.reporting) as SandboxApp;

const V = 'newrelic.timeslice.value';
/** A fixed hour of per-minute data, well inside the last 8 days. */
const S = Date.UTC(2026, 10, 22, 9, 0);
const U = Date.UTC(2026, 10, 22, 10, 0);

function run(nrql: string, accountIds: number[] = [PRIMARY]): NrqlOutcome {
  return runNrql(nrql, { data, accountIds, now: FIXED });
}

/** The single result row of a plain query. */
function only(nrql: string, accountIds?: number[]): Record<string, unknown> {
  const { results } = run(nrql, accountIds);
  expect(results).toHaveLength(1);
  return results[0] as Record<string, unknown>;
}

function rows(name: string, since: number, until: number, of: SandboxApp = app): TimesliceRow[] {
  const metric = findMetric(of, data, name);
  if (!metric) throw new Error(`no metric ${name}`);
  return rowsOf(of, metric, since, until, FIXED);
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

/** Reference timeslice statistics, computed the plain way from the rows. */
function reference(input: TimesliceRow[]) {
  const C = sum(input.map((row) => row.count));
  const T = sum(input.map((row) => row.total));
  const Q = sum(input.map((row) => row.sumOfSquares));
  return {
    count: C,
    sum: T,
    average: T / C,
    min: Math.min(...input.map((row) => row.min)),
    max: Math.max(...input.map((row) => row.max)),
    stddev: Math.sqrt(Math.max(0, Q / C - (T / C) ** 2)),
  };
}

function errorOf(nrql: string, accountIds?: number[]): Error {
  try {
    run(nrql, accountIds);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`no error for ${nrql}`);
}

const where = (names: string[]): string => `WHERE appId = ${app.id} AND metricTimesliceName IN (${names.map(quoteLiteral).join(', ')})`;
const window = `SINCE ${S} UNTIL ${U}`;

describe('aggregates over timeslices', () => {
  const http = rows('HttpDispatcher', S, U);
  const expected = reference(http);

  it('has the data these tests rely on', () => {
    expect(http).toHaveLength(60);
    expect(bulk).not.toBe(app);
    expect(foreign.accountId).toBe(SECONDARY);
  });

  it('gives count, sum, average, min, max and stddev with timeslice semantics', () => {
    const result = only(
      `SELECT count(${V}) AS c, sum(${V}) AS s, average(${V}) AS a, min(${V}) AS mn, max(${V}) AS mx, stddev(${V}) AS sd ` +
        `FROM Metric ${where(['HttpDispatcher'])} ${window}`,
    );
    expect(result.c).toBe(expected.count);
    expect(result.s).toBeCloseTo(expected.sum, 9);
    expect(result.a).toBeCloseTo(expected.average, 12);
    expect(result.mn).toBe(expected.min);
    expect(result.mx).toBe(expected.max);
    expect(result.sd).toBeCloseTo(expected.stddev, 12);
  });

  it('gives plain statistics of one field', () => {
    const totals = http.map((row) => row.totalExclusive);
    const mean = sum(totals) / totals.length;
    const result = only(
      `SELECT count(${V}['totalExclusive']) AS c, sum(${V}['totalExclusive']) AS s, average(${V}['totalExclusive']) AS a, ` +
        `min(${V}['totalExclusive']) AS mn, max(${V}['totalExclusive']) AS mx, stddev(${V}['totalExclusive']) AS sd, sum(${V}['count']) AS calls ` +
        `FROM Metric ${where(['HttpDispatcher'])} ${window}`,
    );
    expect(result.c).toBe(60);
    expect(result.s).toBeCloseTo(sum(totals), 9);
    expect(result.a).toBeCloseTo(mean, 12);
    expect(result.mn).toBe(Math.min(...totals));
    expect(result.mx).toBe(Math.max(...totals));
    expect(result.sd).toBeCloseTo(Math.sqrt(sum(totals.map((value) => (value - mean) ** 2)) / totals.length), 9);
    expect(result.calls).toBe(expected.count);
  });

  it('sums several metrics as one set of rows', () => {
    const both = [...http, ...rows('WebTransaction', S, U)];
    const result = only(`SELECT count(${V}) AS c, average(${V}) AS a FROM Metric ${where(['HttpDispatcher', 'WebTransaction'])} ${window}`);
    expect(result.c).toBe(reference(both).count);
    expect(result.a).toBeCloseTo(reference(both).average, 12);
  });

  it('answers no rows with 0 for count and sum and null for the rest', () => {
    // The retired metric stopped two days before the data was generated.
    expect(rows(LIFECYCLE_NAMES.retired, S, U)).toHaveLength(0);
    const result = only(
      `SELECT count(${V}) AS c, sum(${V}) AS s, average(${V}) AS a, min(${V}) AS mn, max(${V}) AS mx, stddev(${V}) AS sd, ` +
        `count(${V}['total']) AS fc, sum(${V}['total']) AS fs, average(${V}['total']) AS fa, stddev(${V}['total']) AS fsd ` +
        `FROM Metric ${where([LIFECYCLE_NAMES.retired])} ${window}`,
    );
    expect(result).toEqual({ c: 0, s: 0, a: null, mn: null, mx: null, sd: null, fc: 0, fs: 0, fa: null, fsd: null });
  });

  it('defaults to the hour before now', () => {
    const result = only(`SELECT count(${V}['count']) AS n, count(${V}) AS c FROM Metric ${where(['HttpDispatcher'])}`);
    const lastHour = rows('HttpDispatcher', FIXED - HOUR_MS, FIXED);
    // Rows exist only for completed minutes: 11:01 … 11:59.
    expect(lastHour).toHaveLength(59);
    expect(result).toEqual({ n: 59, c: reference(lastHour).count });
  });

  it('reads hourly rollups for data older than 8 days', () => {
    const since = Date.UTC(2026, 9, 1);
    const result = only(`SELECT count(${V}['count']) AS n, count(${V}) AS c FROM Metric ${where(['HttpDispatcher'])} SINCE ${since} UNTIL ${since + DAY_MS}`);
    expect(result.n).toBe(24);
    expect(result.c).toBe(reference(rows('HttpDispatcher', since, since + DAY_MS)).count);
  });
});

describe('rate, arithmetic and filter', () => {
  const http = reference(rows('HttpDispatcher', S, U));

  it('scales rate() to the whole window without TIMESERIES', () => {
    const result = only(`SELECT rate(count(${V}), 1 minute) AS cpm, rate(sum(${V}), 1 second) AS tps FROM Metric ${where(['HttpDispatcher'])} ${window}`);
    expect(result.cpm).toBeCloseTo((http.count * 60) / 3600, 9);
    expect(result.tps).toBeCloseTo(http.sum / 3600, 9);
  });

  it('computes arithmetic with precedence, unary minus, and null for null or division by zero', () => {
    const result = only(
      `SELECT sum(${V}) / count(${V}) * 1000 AS ms, 1 + 2 * 3 AS seven, (1 + 2) * 3 AS nine, -count(${V}) AS negative, ` +
        `count(${V}) / 0 AS byZero, average(${V}) - 1.5 AS shifted FROM Metric ${where(['HttpDispatcher'])} ${window}`,
    );
    expect(result.ms).toBeCloseTo(http.average * 1000, 9);
    expect(result).toMatchObject({ seven: 7, nine: 9, negative: -http.count, byZero: null });
    expect(result.shifted).toBeCloseTo(http.average - 1.5, 12);
    const empty = only(`SELECT average(${V}) * 2 AS a, sum(${V}) / count(${V}) AS b, count(${V}) + 1 AS c FROM Metric ${where([LIFECYCLE_NAMES.retired])} ${window}`);
    expect(empty).toEqual({ a: null, b: null, c: 1 });
  });

  it('narrows filter() to the rows that also meet its condition', () => {
    const web = reference(rows('WebTransaction', S, U));
    const result = only(
      `SELECT count(${V}) AS total, filter(count(${V}), WHERE metricTimesliceName = 'HttpDispatcher') AS http, ` +
        `filter(average(${V}) * 1000, WHERE metricTimesliceName = 'WebTransaction') AS webMs, ` +
        `rate(filter(count(${V}), WHERE metricTimesliceName = 'WebTransaction'), 1 minute) AS webCpm, ` +
        `filter(count(${V}), WHERE metricTimesliceName = 'Apdex') AS absent ` +
        `FROM Metric ${where(['HttpDispatcher', 'WebTransaction'])} ${window}`,
    );
    expect(result.total).toBe(http.count + web.count);
    expect(result.http).toBe(http.count);
    expect(result.webMs).toBeCloseTo(web.average * 1000, 9);
    expect(result.webCpm).toBeCloseTo(web.count / 60, 9);
    expect(result.absent).toBe(0);
  });

  it('applies the whole WHERE to every row: OR, NOT, NOT IN, IS NULL', () => {
    const names = ['HttpDispatcher', 'WebTransaction', 'Apdex'];
    const pick = (query: string): unknown => only(`SELECT count(${V}) AS c FROM Metric WHERE appId = ${app.id} AND ${query} ${window}`).c;
    const countOf = (...list: string[]): number => sum(list.map((name) => reference(rows(name, S, U)).count));
    expect(pick(`metricTimesliceName IN (${names.map(quoteLiteral).join(', ')}) AND metricTimesliceName != 'Apdex'`)).toBe(countOf('HttpDispatcher', 'WebTransaction'));
    expect(pick(`(metricTimesliceName = 'HttpDispatcher' OR metricTimesliceName = 'Apdex') AND NOT metricTimesliceName = 'Apdex'`)).toBe(countOf('HttpDispatcher'));
    expect(pick(`metricTimesliceName = 'Apdex' AND ${V} IS NOT NULL AND accountId = ${PRIMARY}`)).toBe(countOf('Apdex'));
    expect(pick(`metricTimesliceName = 'Apdex' AND ${V} IS NULL`)).toBe(0);
    expect(pick(`metricTimesliceName = 'Apdex' AND accountId NOT IN (${PRIMARY})`)).toBe(0);
    expect(pick(`appName = ${quoteLiteral(app.name)} AND metricTimesliceName = 'Apdex'`)).toBe(countOf('Apdex'));
    // strictAttributeTypes: appId is a number, and never equals a string literal.
    expect(pick(`appId = '${app.id}' AND metricTimesliceName = 'Apdex'`)).toBe(0);
  });

  it('finds apps by appName and entity.guid, quotes and backslashes included', () => {
    const quoted = primaryApps[2] as SandboxApp;
    expect(quoted.name).toContain("'");
    expect(quoted.name).toContain('\\');
    const since = quoted.lastReportingChangeAt - HOUR_MS;
    const expected = reference(rows('HttpDispatcher', since, quoted.lastReportingChangeAt, quoted)).count;
    expect(expected).toBeGreaterThan(0);
    for (const match of [`appName = ${quoteLiteral(quoted.name)}`, `entity.guid = ${quoteLiteral(quoted.guid)}`, `appId IN (1, ${quoted.id})`]) {
      const result = only(`SELECT count(${V}) AS c FROM Metric WHERE ${match} AND metricTimesliceName = 'HttpDispatcher' SINCE ${since} UNTIL ${quoted.lastReportingChangeAt}`);
      expect(result.c, match).toBe(expected);
    }
  });
});

describe('TIMESERIES', () => {
  it('anchors whole buckets at UNTIL, oldest first, with the rows of each bucket', () => {
    // 25 minutes in 10-minute buckets: two whole buckets, the start moved 5 minutes after SINCE.
    const since = U - 25 * MINUTE_MS;
    const { results, metadata } = run(`SELECT count(${V}) AS c, rate(count(${V}), 1 minute) AS cpm FROM Metric ${where(['HttpDispatcher'])} SINCE ${since} UNTIL ${U} TIMESERIES 10 minutes`);
    const begin = U - 20 * MINUTE_MS;
    expect(results.map((row) => [row.beginTimeSeconds, row.endTimeSeconds])).toEqual([
      [begin / 1000, begin / 1000 + 600],
      [begin / 1000 + 600, U / 1000],
    ]);
    results.forEach((row, index) => {
      const bucketRows = rows('HttpDispatcher', begin + index * 10 * MINUTE_MS, begin + (index + 1) * 10 * MINUTE_MS);
      expect(bucketRows).toHaveLength(10);
      expect(row.c).toBe(reference(bucketRows).count);
      expect(row.cpm).toBeCloseTo(reference(bucketRows).count / 10, 9);
    });
    expect(metadata.timeWindow).toMatchObject({ begin, end: U });
  });

  it('keeps empty buckets, with 0 and null', () => {
    // The retired metric stopped at this hour: the first two buckets hold rows, the last two none.
    const stop = (findMetric(app, data, LIFECYCLE_NAMES.retired) as { until: number }).until;
    const { results } = run(`SELECT count(${V}) AS c, average(${V}) AS a FROM Metric ${where([LIFECYCLE_NAMES.retired])} SINCE ${stop - 2 * HOUR_MS} UNTIL ${stop + 2 * HOUR_MS} TIMESERIES 1 hour`);
    expect(results).toHaveLength(4);
    expect(results.map((row) => row.beginTimeSeconds)).toEqual([0, 1, 2, 3].map((hour) => (stop - 2 * HOUR_MS + hour * HOUR_MS) / 1000));
    const firstHour = reference(rows(LIFECYCLE_NAMES.retired, stop - 2 * HOUR_MS, stop - HOUR_MS));
    expect(results[0]?.c).toBe(firstHour.count);
    expect(results[0]?.a).toBeCloseTo(firstHour.average, 12);
    expect(results.slice(2)).toEqual([
      { beginTimeSeconds: stop / 1000, endTimeSeconds: stop / 1000 + 3600, c: 0, a: null },
      { beginTimeSeconds: stop / 1000 + 3600, endTimeSeconds: stop / 1000 + 7200, c: 0, a: null },
    ]);
  });

  it('puts an hourly rollup in the bucket holding its start', () => {
    const since = Date.UTC(2026, 9, 1);
    const { results } = run(`SELECT count(${V}['count']) AS n FROM Metric ${where(['HttpDispatcher'])} SINCE ${since} UNTIL ${since + 2 * HOUR_MS} TIMESERIES 30 minutes`);
    expect(results.map((row) => row.n)).toEqual([1, 0, 1, 0]);
  });

  it('allows at most 366 buckets', () => {
    expect(run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} SINCE ${U - 366 * MINUTE_MS} UNTIL ${U} TIMESERIES 1 minute`).results).toHaveLength(366);
    // A partial 367th bucket is trimmed, not counted.
    expect(run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} SINCE ${U - 366 * MINUTE_MS - 1} UNTIL ${U} TIMESERIES 1 minute`).results).toHaveLength(366);
    const error = errorOf(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} SINCE ${U - 367 * MINUTE_MS} UNTIL ${U} TIMESERIES 1 minute`);
    expect(error).toBeInstanceOf(NrqlError);
    expect(error.message).toBe('TIMESERIES supports a maximum of 366 buckets');
  });

  it('answers a year of five metrics quickly, in one pass', () => {
    const names = ['HttpDispatcher', 'WebTransaction', 'Apdex', 'Errors/all', 'Memory/Physical'];
    const since = U - 365 * DAY_MS;
    const started = performance.now();
    const { results } = run(`SELECT count(${V}) AS c FROM Metric ${where(names)} SINCE ${since} UNTIL ${U} TIMESERIES 1 day`);
    const elapsed = performance.now() - started;
    expect(results).toHaveLength(365);
    const all = names.flatMap((name) => rows(name, since, U));
    expect(all.length).toBeGreaterThan(90_000);
    expect(sum(results.map((row) => row.c as number))).toBe(reference(all).count);
    expect(elapsed).toBeLessThan(2000);
  });
});

describe('FACET', () => {
  const names = ['HttpDispatcher', 'WebTransaction', 'Apdex', 'Errors/all', 'Memory/Physical', 'CPU/User Time'];
  // Memory and CPU counts are hosts × minutes, so they tie: the facet name breaks the tie.
  const counts = names
    .map((name) => ({ name, count: reference(rows(name, S, U)).count }))
    .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1));

  it('orders facets by the first item, descending, ties by facet, and keeps LIMIT of them', () => {
    // LIMIT cuts between the two tied facets: only the one that sorts first by name is kept.
    const tie = counts.findIndex((entry, index) => index > 0 && entry.count === counts[index - 1]?.count);
    expect(tie).toBeGreaterThan(0);
    const { results, metadata } = run(`SELECT count(${V}) AS c, average(${V}) AS a FROM Metric ${where(names)} FACET metricTimesliceName ${window} LIMIT ${tie}`);
    expect(results.map((row) => [row.facet, row.metricTimesliceName, row.c])).toEqual(counts.slice(0, tie).map(({ name, count }) => [name, name, count]));
    expect(results[0]?.a).toBeCloseTo(reference(rows(counts[0]?.name as string, S, U)).average, 12);
    expect(metadata.facets).toEqual(['metricTimesliceName']);
    expect(Object.keys(results[0] as object)).toEqual(['facet', 'metricTimesliceName', 'c', 'a']);
  });

  it('breaks ties by facet ascending and defaults to 10 facets', () => {
    const { results } = run(`SELECT 1 AS one FROM Metric WHERE appId = ${app.id} FACET metricTimesliceName ${window}`);
    const withRows = metricsOf(app, data)
      .filter((metric) => hasRows(metric, S, U, FIXED))
      .map((metric) => metric.name)
      .sort();
    expect(withRows.length).toBeGreaterThan(10);
    expect(results.map((row) => row.facet)).toEqual(withRows.slice(0, 10));
  });

  it('leaves out rows without the faceted attribute', () => {
    expect(run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} FACET processorArch ${window}`).results).toEqual([]);
  });

  it('lists only facets with rows', () => {
    const { results } = run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher', LIFECYCLE_NAMES.retired])} FACET metricTimesliceName ${window}`);
    expect(results.map((row) => row.facet)).toEqual(['HttpDispatcher']);
  });

  it('facets by app across accounts the query may read', () => {
    const { results } = run(`SELECT count(${V}) AS c FROM Metric WHERE appId IN (${app.id}, ${foreign.id}) AND metricTimesliceName = 'HttpDispatcher' FACET appId ${window}`, [PRIMARY, SECONDARY]);
    const expected = [app, foreign]
      .map((one) => ({ facet: one.id, appId: one.id, c: reference(rows('HttpDispatcher', S, U, one)).count }))
      .sort((a, b) => b.c - a.c);
    expect(results).toEqual(expected);
  });

  it('with TIMESERIES: chooses facets over the whole window, then one row per bucket, facet by facet', () => {
    const { results } = run(`SELECT count(${V}) AS c FROM Metric ${where(names)} FACET metricTimesliceName ${window} TIMESERIES 30 minutes LIMIT 2`);
    const expected = counts.slice(0, 2).flatMap(({ name }) =>
      [0, 1].map((half) => {
        const begin = S + half * 30 * MINUTE_MS;
        return { beginTimeSeconds: begin / 1000, endTimeSeconds: begin / 1000 + 1800, facet: name, metricTimesliceName: name, c: reference(rows(name, begin, begin + 30 * MINUTE_MS)).count };
      }),
    );
    expect(results).toEqual(expected);
  });
});

describe('uniques', () => {
  it('lists the sorted names of the metrics with rows', () => {
    const { results } = run(`SELECT uniques(metricTimesliceName) AS names FROM Metric WHERE appId = ${app.id} ${window}`);
    const expected = metricsOf(app, data)
      .filter((metric) => hasRows(metric, S, U, FIXED))
      .map((metric) => metric.name)
      .sort();
    expect(results).toEqual([{ names: expected }]);
    expect(expected).not.toContain(LIFECYCLE_NAMES.retired);
  });

  it('answers the bulk app’s 2,345 extra names over 7 days in milliseconds, up to the limit', () => {
    const until = FIXED;
    const since = until - 7 * DAY_MS;
    const started = performance.now();
    const all = only(`SELECT uniques(metricTimesliceName, 10000) AS names FROM Metric WHERE appId = ${bulk.id} SINCE ${since} UNTIL ${until}`).names as string[];
    expect(performance.now() - started).toBeLessThan(1000);
    const expected = metricsOf(bulk, data)
      .filter((metric) => hasRows(metric, since, until, FIXED))
      .map((metric) => metric.name)
      .sort();
    expect(all).toEqual(expected);
    expect(all.filter((name) => name.startsWith('Custom/Bulk/'))).toHaveLength(BULK_METRIC_COUNT);
    const limited = only(`SELECT uniques(metricTimesliceName) AS names FROM Metric WHERE appId = ${bulk.id} SINCE ${since} UNTIL ${until}`).names;
    expect(limited).toEqual(expected.slice(0, 1000));
  });

  it('works per bucket and next to aggregates', () => {
    const stop = (findMetric(app, data, LIFECYCLE_NAMES.retired) as { until: number }).until;
    const { results } = run(
      `SELECT uniques(metricTimesliceName) AS names, count(${V}['count']) AS n FROM Metric ${where(['HttpDispatcher', LIFECYCLE_NAMES.retired])} ` +
        `SINCE ${stop - HOUR_MS} UNTIL ${stop + HOUR_MS} TIMESERIES 1 hour`,
    );
    expect(results.map((row) => [row.names, row.n])).toEqual([
      [['HttpDispatcher', LIFECYCLE_NAMES.retired], 120],
      [['HttpDispatcher'], 60],
    ]);
    expect(only(`SELECT uniques(appId) AS ids FROM Metric WHERE appId IN (${app.id}, ${foreign.id}) ${window}`, [PRIMARY, SECONDARY]).ids).toEqual([app.id, foreign.id].sort((a, b) => a - b));
  });
});

describe('account scoping and errors', () => {
  it('does not see apps of accounts outside the scope', () => {
    const query = `SELECT count(${V}) AS c, uniques(metricTimesliceName) AS names FROM Metric WHERE appId = ${foreign.id} AND metricTimesliceName = 'HttpDispatcher' ${window}`;
    expect(only(query, [PRIMARY])).toEqual({ c: 0, names: [] });
    expect(only(query, [SECONDARY])).toEqual({ c: reference(rows('HttpDispatcher', S, U, foreign)).count, names: ['HttpDispatcher'] });
    expect(only(`SELECT count(${V}) AS c FROM Metric WHERE appName = ${quoteLiteral(foreign.name)} ${window}`, [PRIMARY]).c).toBe(0);
  });

  it('insists the WHERE names the app at its top level', () => {
    for (const query of [
      `SELECT count(${V}) FROM Metric`,
      `SELECT count(${V}) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher'`,
      `SELECT count(${V}) FROM Metric WHERE appId = ${app.id} OR metricTimesliceName = 'HttpDispatcher'`,
      `SELECT count(${V}) FROM Metric WHERE appId != ${app.id}`,
      `SELECT count(${V}) FROM Metric WHERE NOT appId = ${app.id}`,
    ]) {
      const error = errorOf(query);
      expect(error, query).toBeInstanceOf(NrqlError);
      expect(error.message).toBe('No application was matched (did you specify appId, appName or entity.guid?)');
    }
  });

  it('needs SINCE before UNTIL', () => {
    for (const query of [`SINCE ${U} UNTIL ${U}`, `SINCE ${U} UNTIL ${S}`, `SINCE ${FIXED + 1}`]) {
      expect(errorOf(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} ${query}`).message).toBe("Your query's start time must be before its end time");
    }
    expect(NRQL_MESSAGES.startAfterEnd).toBe("Your query's start time must be before its end time");
  });

  it('stops a query that would read more rows than its budget', () => {
    const query = `SELECT count(${V}) FROM Metric ${where(['HttpDispatcher', 'Apdex'])} ${window}`;
    expect(runNrql(query, { data, accountIds: [PRIMARY], now: FIXED, maxRows: 120 }).results).toHaveLength(1);
    expect(() => runNrql(query, { data, accountIds: [PRIMARY], now: FIXED, maxRows: 119 })).toThrowError(new NrqlError(NRQL_MESSAGES.tooManyRows));
  });

  it('passes syntax errors through', () => {
    expect(errorOf('SELECT nonsense FROM Metric')).toBeInstanceOf(NrqlSyntaxError);
  });

  it('answers an event type the sandbox does not have as empty, without an error', () => {
    const { results, metadata } = run(`SELECT count(${V}) AS c, average(${V}) AS a FROM Transaction`);
    expect(results).toEqual([{ c: 0, a: null }]);
    expect(metadata.eventTypes).toEqual(['Transaction']);
    expect(run(`SELECT count(${V}) FROM Transaction FACET appName`).results).toEqual([]);
  });

  it('describes the query in metadata', () => {
    expect(run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])}`).metadata).toEqual({
      eventTypes: ['Metric'],
      facets: [],
      messages: [],
      timeWindow: { begin: FIXED - HOUR_MS, end: FIXED, since: '60 MINUTES AGO', until: 'NOW', compareWith: null },
    });
    expect(run(`SELECT count(${V}) FROM Metric ${where(['HttpDispatcher'])} ${window}`).metadata.timeWindow).toEqual({ begin: S, end: U, since: String(S), until: String(U), compareWith: null });
  });

  it('names items without an alias', () => {
    expect(Object.keys(only(`SELECT count(${V}), average(${V}['total']), uniques(metricTimesliceName), rate(sum(${V}), 1 minute) FROM Metric ${where(['Apdex'])} ${window}`))).toEqual([
      'count.newrelic.timeslice.value',
      'average.newrelic.timeslice.value.total',
      'uniques.metricTimesliceName',
      'rate.sum.newrelic.timeslice.value',
    ]);
  });
});
