/**
 * The general NRQL subset ("What to build" 2): account-wide queries, count(*) and
 * aggregates of plain attributes, percentile, latest, relative SINCE/UNTIL, aggregates over
 * deployment events and several event types in FROM; strictAttributeTypes and rollupSnapping.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSandboxData } from '../data.ts';
import type { SandboxApp, SandboxData } from '../model.ts';
import { NRQL_MESSAGES, NrqlError, runNrql, type NrqlOutcome } from '../nrql/engine.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, findMetric, rowsOf } from '../timeslices.ts';
import { deploymentsOf } from '../writes.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const PRIMARY = 1000001;
const V = 'newrelic.timeslice.value';
const data = generateSandboxData({ seed: 7, apmApps: 20, now: FIXED });
const primaryApps = data.apps.filter((app) => app.accountId === PRIMARY);
const app = primaryApps.find((candidate) => candidate.reporting && candidate.hosts.some((host) => host.instances.length > 0)) as SandboxApp;

function run(nrql: string, over: SandboxData = data): NrqlOutcome {
  return runNrql(nrql, { data: over, accountIds: [PRIMARY], now: FIXED });
}

function only(nrql: string, over?: SandboxData): Record<string, unknown> {
  const { results } = run(nrql, over);
  expect(results).toHaveLength(1);
  return results[0] as Record<string, unknown>;
}

/** The same world with some behaviours changed (the data is shared, so restore it after). */
function withBehaviours<T>(changes: Partial<SandboxData['behaviours']>, body: () => T): T {
  const saved = data.behaviours;
  data.behaviours = { ...saved, ...changes };
  try {
    return body();
  } finally {
    data.behaviours = saved;
  }
}

const rowsIn = (owner: SandboxApp, name: string, since: number, until: number) => {
  const metric = findMetric(owner, data, name);
  return metric ? rowsOf(owner, metric, since, until, FIXED) : [];
};

describe('account-wide Metric queries', () => {
  it('counts every visible app’s rows with count(*), no appId needed, over a relative window', () => {
    const expected = primaryApps.reduce((total, owner) => total + rowsIn(owner, 'HttpDispatcher', FIXED - HOUR_MS, FIXED).length, 0);
    expect(expected).toBeGreaterThan(0);
    const outcome = run(`SELECT count(*) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher' SINCE 1 hour ago`);
    expect(outcome.results).toEqual([{ count: expected }]);
    expect(outcome.metadata.timeWindow).toEqual({ begin: FIXED - HOUR_MS, end: FIXED, since: '1 HOUR AGO', until: 'NOW', compareWith: null });
  });

  it('facets by any attribute and lists uniques across apps', () => {
    const reporting = primaryApps.filter((owner) => rowsIn(owner, 'HttpDispatcher', FIXED - HOUR_MS, FIXED).length > 0);
    const faceted = run(`SELECT count(*) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher' FACET appName SINCE 60 minutes ago LIMIT MAX`).results;
    expect(faceted.map((row) => row.appName).sort()).toEqual(reporting.map((owner) => owner.name).sort());
    const names = only(`SELECT uniques(appName) AS names FROM Metric WHERE metricTimesliceName = 'HttpDispatcher' SINCE 1 hour ago`).names;
    expect(names).toEqual(reporting.map((owner) => owner.name).sort());
  });

  it('still refuses a timeslice value read that names no application (the documented NRQL error)', () => {
    expect(() => run(`SELECT average(${V}) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher' SINCE 1 hour ago`)).toThrowError(
      new NrqlError(NRQL_MESSAGES.noApplication),
    );
  });
});

describe('aggregates of plain attributes', () => {
  const S = Date.UTC(2026, 10, 22, 9, 0);
  const U = Date.UTC(2026, 10, 22, 10, 0);
  const scope = `WHERE appId = ${app.id} AND metricTimesliceName = 'HttpDispatcher' SINCE ${S} UNTIL ${U}`;
  const rows = rowsIn(app, 'HttpDispatcher', S, U);

  it('reads timestamp, latest and percentile over the rows', () => {
    const starts = rows.map((row) => row.start);
    expect(only(`SELECT count(*), min(timestamp), max(timestamp), latest(timestamp), latest(appName), percentile(timestamp, 0, 50, 100) FROM Metric ${scope}`)).toEqual({
      count: rows.length,
      'min.timestamp': starts[0],
      'max.timestamp': starts[starts.length - 1],
      'latest.timestamp': starts[starts.length - 1],
      'latest.appName': app.name,
      'percentile.timestamp': { '0': starts[0], '50': starts[Math.ceil(starts.length / 2) - 1], '100': starts[starts.length - 1] },
    });
  });

  it('answers latest of the timeslice value as the newest row’s average', () => {
    const newest = rows[rows.length - 1];
    expect(newest).toBeDefined();
    expect(only(`SELECT latest(${V}) AS v, latest(${V}['count']) AS c FROM Metric ${scope}`)).toEqual({ v: newest!.total / newest!.count, c: newest!.count });
  });

  it('counts attributes with values only, and sums nothing as 0', () => {
    expect(only(`SELECT count(appName) AS named, count(duration) AS timed, sum(duration) AS total, average(duration) AS mean FROM Metric ${scope}`)).toEqual({
      named: rows.length,
      timed: 0,
      total: 0,
      mean: null,
    });
  });
});

describe('deployment events', () => {
  const deployed = primaryApps.find((owner) => deploymentsOf(data, owner).length >= 2) as SandboxApp;
  const since = FIXED - 400 * DAY_MS;

  it('aggregates them like any events: count(*), latest, uniques, FACET', () => {
    const events = deploymentsOf(data, deployed).filter((deployment) => deployment.timestamp >= since && deployment.timestamp < FIXED);
    expect(only(`SELECT count(*), latest(version), uniques(version) AS versions FROM Deployment, ChangeTrackingEvent WHERE appId = ${deployed.id} SINCE 400 days ago`)).toEqual({
      count: events.length,
      'latest.version': events[0]?.revision,
      versions: [...new Set(events.map((event) => event.revision))].sort(),
    });
    const perApp = run(`SELECT count(*) FROM Deployment FACET appId SINCE 400 days ago LIMIT MAX`).results;
    const expected = primaryApps
      .map((owner) => [owner.id, deploymentsOf(data, owner).filter((d) => d.eventType === 'Deployment' && d.timestamp >= since && d.timestamp < FIXED).length] as const)
      .filter(([, count]) => count > 0);
    expect(perApp.map((row) => [row.appId, row.count]).sort()).toEqual(expected.map(([id, count]) => [id, count]).sort());
  });

  it('reads several event types in one FROM', () => {
    const metricRows = rowsIn(deployed, 'HttpDispatcher', since, FIXED).length;
    const events = deploymentsOf(data, deployed).filter((d) => d.timestamp >= since && d.timestamp < FIXED).length;
    const both = only(`SELECT count(*) FROM Metric, Deployment, ChangeTrackingEvent WHERE appId = ${deployed.id} AND (metricTimesliceName = 'HttpDispatcher' OR metricTimesliceName IS NULL) SINCE ${since} UNTIL ${FIXED}`, withoutSnapping());
    expect(both).toEqual({ count: metricRows + events });
  });
});

function withoutSnapping(): SandboxData {
  return { ...data, behaviours: { ...data.behaviours, rollupSnapping: false } };
}

describe('strictAttributeTypes', () => {
  const instance = app.hosts.flatMap((host) => host.instances)[0]!;
  const count = (test: string): unknown =>
    only(`SELECT count(*) AS c FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'HttpDispatcher' AND ${test} SINCE 10 minutes ago`).c;

  it('never equals a number and a string: appId is a number, realAgentId a string', () => {
    const all = count('appId IS NOT NULL');
    expect(all).toBeGreaterThan(0);
    expect([count(`appId = ${app.id}`), count(`appId = '${app.id}'`), count(`appId IN ('${app.id}')`)]).toEqual([all, 0, 0]);
    const one = count(`realAgentId = '${instance.id}'`);
    expect(one).toBeGreaterThan(0);
    expect([count(`realAgentId = ${instance.id}`), count(`realAgentId IN (${instance.id}, '${instance.id}')`)]).toEqual([0, one]);
  });

  it('compares as text with the behaviour off', () => {
    withBehaviours({ strictAttributeTypes: false }, () => {
      expect(count(`appId = '${app.id}'`)).toBe(count(`appId = ${app.id}`));
      expect(count(`realAgentId = ${instance.id}`)).toBe(count(`realAgentId = '${instance.id}'`));
    });
  });
});

describe('rollupSnapping', () => {
  // The docs' example: SINCE '2023-12-20T00:04Z' UNTIL '2023-12-22T00:03Z' (47 h 59 min) resolves
  // to 5-minute aggregations, beginTime 2023-12-20T00:00Z, endTime 2023-12-22T00:00Z.
  const until = Date.UTC(2026, 10, 22, 0, 3);
  const since = until - 47 * HOUR_MS - 59 * MINUTE_MS;
  const query = `SELECT count(${V}) AS c FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'HttpDispatcher' SINCE ${since} UNTIL ${until}`;
  const snappedSince = Date.UTC(2026, 10, 20, 0, 0);
  const snappedUntil = Date.UTC(2026, 10, 22, 0, 0);
  const countOf = (from: number, to: number) => rowsIn(app, 'HttpDispatcher', from, to).reduce((total, row) => total + row.count, 0);

  it('snaps a 47h59m window to 5-minute boundaries, reads that window and reports it', () => {
    const outcome = run(query);
    expect(outcome.metadata.timeWindow).toMatchObject({ begin: snappedSince, end: snappedUntil, since: String(since), until: String(until) });
    expect(outcome.results).toEqual([{ c: countOf(snappedSince, snappedUntil) }]);
    expect(countOf(snappedSince, snappedUntil)).not.toBe(countOf(since, until));
  });

  it('keeps the window as asked with the behaviour off, and for windows of a day or less', () => {
    withBehaviours({ rollupSnapping: false }, () => {
      const outcome = run(query);
      expect(outcome.metadata.timeWindow).toMatchObject({ begin: since, end: until });
      expect(outcome.results).toEqual([{ c: countOf(since, until) }]);
    });
    const day = run(`SELECT count(${V}) FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'Apdex' SINCE ${until - DAY_MS + 60_000} UNTIL ${until}`);
    expect(day.metadata.timeWindow).toMatchObject({ begin: until - DAY_MS + 60_000, end: until });
  });

  it('snaps windows past 8 days to hours, and never event queries', () => {
    const long = run(`SELECT count(${V}) FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'Apdex' SINCE ${FIXED - 10 * DAY_MS} UNTIL ${FIXED}`);
    expect(long.metadata.timeWindow).toMatchObject({ begin: Date.UTC(2026, 10, 12, 12, 0), end: Date.UTC(2026, 10, 22, 12, 0) });
    const events = run(`SELECT count(*) FROM Deployment SINCE ${since} UNTIL ${until}`);
    expect(events.metadata.timeWindow).toMatchObject({ begin: since, end: until });
  });
});

describe('account-wide answers agree with per-app answers (property)', () => {
  const names = ['HttpDispatcher', 'Apdex', 'Errors/all', 'External/all', 'Memory/Physical'];
  it('count(*) over the account equals the sum of its FACET appId rows plus the rows without appId, for any names and window', () => {
    fc.assert(
      fc.property(fc.subarray(names, { minLength: 1 }), fc.integer({ min: 1, max: 90 }), fc.integer({ min: 0, max: 600 }), (picked, minutes, endAgo) => {
        const window = `SINCE ${endAgo + minutes} minutes ago UNTIL ${endAgo} minutes ago`;
        const where = `WHERE metricTimesliceName IN (${picked.map((name) => `'${name}'`).join(', ')})`;
        const total = only(`SELECT count(*) AS c FROM Metric ${where} ${window}`).c as number;
        const perApp = run(`SELECT count(*) AS c FROM Metric ${where} FACET appId LIMIT MAX ${window}`).results;
        // Mobile rows (External/all) carry no appId: they belong to no appId facet.
        const mobileRows = only(`SELECT count(*) AS c FROM Metric ${where} AND appId IS NULL ${window}`).c as number;
        expect(perApp.reduce((sum, row) => sum + (row.c as number), 0) + mobileRows).toBe(total);
        // A string literal never names a numeric appId.
        const someId = perApp[0]?.appId;
        if (someId !== undefined) expect(only(`SELECT count(*) AS c FROM Metric ${where} AND appId = '${String(someId)}' ${window}`).c).toBe(0);
      }),
      { numRuns: 25 },
    );
  });
});
