import { describe, expect, it } from 'vitest';
import { generateSandboxData } from '../data.ts';
import type { SandboxApp } from '../model.ts';
import { NRQL_MESSAGES, NrqlError, runNrql, type NrqlOutcome } from '../nrql/engine.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../timeslices.ts';

// TIMESERIES windows, DateTime strings, day references, TIMESERIES AUTO/MAX and several FACET
// attributes, as "Set a query's time range" and "NRQL syntax, clauses and functions" describe them.

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const data = generateSandboxData({ seed: 7, apmApps: 20, now: FIXED });
const PRIMARY = 1000001;
const reporting = data.apps.filter((app) => app.accountId === PRIMARY && app.reporting);
const [first, second] = reporting as [SandboxApp, SandboxApp];

function run(nrql: string): NrqlOutcome {
  return runNrql(nrql, { data, accountIds: [PRIMARY], now: FIXED });
}

function errorOf(nrql: string): Error {
  try {
    run(nrql);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`no error for ${nrql}`);
}

const seconds = (ms: number): number => ms / 1000;

describe('TIMESERIES windows: whole buckets ending at UNTIL', () => {
  it('moves the start forward so the first bucket is whole (the documented example)', () => {
    const { results, metadata } = run("FROM Foo SELECT count(*) TIMESERIES 5 minutes SINCE '2023-12-20T00:04:59Z' UNTIL '2023-12-21T00:03:12Z'");
    const begin = Date.UTC(2023, 11, 20, 0, 8, 12);
    const end = Date.UTC(2023, 11, 21, 0, 3, 12);
    expect(metadata.timeWindow).toMatchObject({ begin, end, since: '2023-12-20T00:04:59Z', until: '2023-12-21T00:03:12Z' });
    expect(results).toHaveLength((end - begin) / (5 * MINUTE_MS));
    expect(results[0]).toMatchObject({ beginTimeSeconds: seconds(begin), endTimeSeconds: seconds(begin + 5 * MINUTE_MS), count: 0 });
    expect(results.at(-1)).toMatchObject({ endTimeSeconds: seconds(end) });
  });

  it('answers the chart error when the window is shorter than one bucket', () => {
    for (const nrql of [
      'SELECT count(*) FROM Foo SINCE 30 minutes ago TIMESERIES 1 hour',
      `SELECT count(*) FROM Metric WHERE appId = ${first.id} SINCE ${FIXED - 59_999} UNTIL ${FIXED} TIMESERIES 1 minute`,
    ]) {
      const error = errorOf(nrql);
      expect(error).toBeInstanceOf(NrqlError);
      expect(error.message).toBe(NRQL_MESSAGES.stepTooLarge);
      expect(error.message).toBe('TIMESERIES step size is larger than the current time window');
    }
    // Exactly one bucket is fine.
    expect(run('SELECT count(*) FROM Foo SINCE 60 minutes ago TIMESERIES 1 hour').results).toHaveLength(1);
  });

  it('trims after rollup snapping: the snapped window, then whole buckets at its end', () => {
    // 47 h 59 min of Metric snaps to 5-minute boundaries (the documented example), then 11-minute buckets.
    const { metadata, results } = run(`SELECT count(*) FROM Metric WHERE appId = ${first.id} AND metricTimesliceName = 'HttpDispatcher' SINCE '2026-11-19T00:04Z' UNTIL '2026-11-21T00:03Z' TIMESERIES 11 minutes`);
    const end = Date.UTC(2026, 10, 21);
    const buckets = Math.floor((2 * DAY_MS) / (11 * MINUTE_MS));
    expect(results).toHaveLength(buckets);
    expect(metadata.timeWindow).toMatchObject({ begin: end - buckets * 11 * MINUTE_MS, end });
  });
});

describe('SINCE/UNTIL: DateTime strings and day references', () => {
  it('snaps the documented Metric example to 5-minute boundaries', () => {
    const { metadata } = run(`SELECT count(*) FROM Metric WHERE appId = ${first.id} SINCE '2023-12-20T00:04Z' UNTIL '2023-12-22T00:03Z'`);
    expect(metadata.timeWindow).toMatchObject({ begin: Date.UTC(2023, 11, 20), end: Date.UTC(2023, 11, 22) });
  });

  it('reads the same window however the instant is written', () => {
    const expected = Date.UTC(2026, 10, 22, 9, 30);
    for (const text of ['2026-11-22T09:30Z', '2026-11-22 09:30', '2026-11-22T09:30:00.000', '2026-11-22T03:30-0600', '2026-11-22T15:00+05:30']) {
      const { metadata, results } = run(`SELECT count(*) FROM Metric WHERE appId = ${first.id} SINCE '${text}' UNTIL ${expected + HOUR_MS}`);
      expect(metadata.timeWindow.begin).toBe(expected);
      expect(results).toEqual(run(`SELECT count(*) FROM Metric WHERE appId = ${first.id} SINCE ${expected} UNTIL ${expected + HOUR_MS}`).results);
    }
  });

  it('reads today and yesterday as midnight (UTC) of the clock’s day and the day before', () => {
    const today = Date.UTC(2026, 10, 22);
    expect(run('SELECT count(*) FROM Foo SINCE today').metadata.timeWindow).toMatchObject({ begin: today, end: FIXED, since: 'TODAY' });
    expect(run('SELECT count(*) FROM Foo SINCE yesterday UNTIL today').metadata.timeWindow).toMatchObject({ begin: today - DAY_MS, end: today, until: 'TODAY' });
  });
});

describe('TIMESERIES AUTO and MAX', () => {
  const buckets = (nrql: string): { count: number; width: number } => {
    const { results } = run(nrql);
    const row = results[0] as { beginTimeSeconds: number; endTimeSeconds: number };
    return { count: results.length, width: (row.endTimeSeconds - row.beginTimeSeconds) * 1000 };
  };

  it('AUTO: a day in 30-minute buckets and a week in 6-hour buckets (the documented examples)', () => {
    expect(buckets('SELECT count(*) FROM Foo SINCE 1 day ago TIMESERIES AUTO')).toEqual({ count: 48, width: 30 * MINUTE_MS });
    expect(buckets('SELECT count(*) FROM Foo SINCE 1 week ago TIMESERIES AUTO')).toEqual({ count: 28, width: 6 * HOUR_MS });
  });

  it('a bare TIMESERIES is AUTO', () => {
    expect(buckets('SELECT count(*) FROM Foo SINCE 1 hour ago TIMESERIES')).toEqual({ count: 60, width: MINUTE_MS });
    expect(buckets('SELECT count(*) FROM Foo TIMESERIES SINCE 6 hours ago')).toEqual({ count: 24, width: 15 * MINUTE_MS });
  });

  it('MAX: one day in 4-minute buckets, and never more than 366 buckets nor an empty answer', () => {
    expect(buckets('SELECT count(*) FROM Foo SINCE 1 day ago TIMESERIES MAX')).toEqual({ count: 360, width: 4 * MINUTE_MS });
    for (const window of ['10 seconds', '1 hour', '3 days', '13 months', '1 year']) {
      for (const mode of ['MAX', 'AUTO']) {
        const { count } = buckets(`SELECT count(*) FROM Foo SINCE ${window} ago TIMESERIES ${mode}`);
        expect(count).toBeGreaterThanOrEqual(1);
        expect(count).toBeLessThanOrEqual(366);
      }
    }
  });
});

describe('FACET of several attributes', () => {
  it('answers facet as the array of values and each attribute by name, ranked by the first item', () => {
    const names = ['HttpDispatcher', 'Apdex'];
    const where = `WHERE appId IN (${first.id}, ${second.id}) AND metricTimesliceName IN ('HttpDispatcher', 'Apdex')`;
    const window = `SINCE ${Date.UTC(2026, 10, 22, 9)} UNTIL ${Date.UTC(2026, 10, 22, 10)}`;
    const { results, metadata } = run(`SELECT count(*) AS n FROM Metric ${where} FACET appName, metricTimesliceName ${window}`);
    expect(metadata.facets).toEqual(['appName', 'metricTimesliceName']);
    expect(results).toHaveLength(4);
    for (const row of results) {
      expect(row.facet).toEqual([row.appName, row.metricTimesliceName]);
      const alone = run(`SELECT count(*) AS n FROM Metric WHERE appName = '${String(row.appName)}' AND metricTimesliceName = '${String(row.metricTimesliceName)}' ${window}`);
      expect(row.n).toBe(alone.results[0]?.n);
    }
    expect(new Set(results.map((row) => JSON.stringify(row.facet)))).toEqual(
      new Set([first, second].flatMap((app) => names.map((name) => JSON.stringify([app.name, name])))),
    );
    const counts = results.map((row) => row.n as number);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('keeps each facet’s own series with TIMESERIES, and LIMIT counts facet combinations', () => {
    const { results } = run(`SELECT count(*) FROM Metric WHERE appId IN (${first.id}, ${second.id}) FACET appId, metricTimesliceName SINCE 30 minutes ago TIMESERIES 10 minutes LIMIT 3`);
    expect(new Set(results.map((row) => JSON.stringify(row.facet))).size).toBe(3);
    expect(results).toHaveLength(9);
    for (const row of results) expect(row.facet).toEqual([row.appId, row.metricTimesliceName]);
  });
});
