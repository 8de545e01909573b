import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateSandboxData } from '../data.ts';
import { hostRowsOf, instanceRowsOf, instanceSharesOf, instanceWeights } from '../instance-split.ts';
import type { SandboxApp } from '../model.ts';
import { NRQL_MESSAGES, NrqlError, runNrql, type NrqlOutcome } from '../nrql/engine.ts';
import { MINUTE_MS, findMetric, rowsOf, type SandboxMetric, type TimesliceRow } from '../timeslices.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const data = generateSandboxData({ seed: 7, apmApps: 20, now: FIXED });
const PRIMARY = 1000001;
const V = 'newrelic.timeslice.value';
const S = Date.UTC(2026, 10, 22, 9, 0);
const U = Date.UTC(2026, 10, 22, 10, 0);
const TEN = `SINCE ${FIXED - 10 * MINUTE_MS} UNTIL ${FIXED}`;

const visible = data.apps.filter((candidate) => candidate.accountId === PRIMARY);
/** A primary-account app with several hosts, one of them with several instances. */
const app = visible.find(
  (candidate) => candidate.reporting && candidate.hosts.length > 1 && candidate.hosts.some((host) => host.instances.length > 1),
) as SandboxApp;
const metric = findMetric(app, data, 'HttpDispatcher') as SandboxMetric;

function run(nrql: string): NrqlOutcome {
  return runNrql(nrql, { data, accountIds: [PRIMARY], now: FIXED });
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
const close = (actual: number, expected: number): void => {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
};

describe('instance weights', () => {
  it('are positive and sum to 1 for any instance id list', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 2 ** 31 }), { minLength: 1, maxLength: 50 }), (ids) => {
        const weights = instanceWeights(ids);
        expect(weights).toHaveLength(ids.length);
        for (const weight of weights) expect(weight).toBeGreaterThan(0);
        expect(Math.abs(sum(weights) - 1)).toBeLessThan(1e-12);
      }),
    );
  });

  it('gives a lone instance everything', () => {
    expect(instanceWeights([42])).toEqual([1]);
  });

  it('cover every instance of every host of the app, current or not', () => {
    expect(app).toBeDefined();
    const ids = app.hosts.flatMap((host) => host.instances.map((instance) => instance.id));
    expect(instanceSharesOf(app).map((share) => share.instance.id)).toEqual(ids);
  });
});

describe('instance and host rows', () => {
  const appRows = rowsOf(app, metric, S, U, FIXED);
  const perInstance = instanceSharesOf(app).map((share) => instanceRowsOf(app, share.instance.id, metric, S, U, FIXED));

  it('sum back to the app row, slice by slice (min and max unchanged)', () => {
    expect(appRows.length).toBeGreaterThan(0);
    appRows.forEach((row, index) => {
      const slices = perInstance.map((rows) => rows[index] as TimesliceRow);
      for (const field of ['count', 'total', 'totalExclusive', 'sumOfSquares'] as const) close(sum(slices.map((slice) => slice[field])), row[field]);
      for (const slice of slices) {
        expect(slice.start).toBe(row.start);
        expect(slice.min).toBe(row.min);
        expect(slice.max).toBe(row.max);
      }
    });
  });

  it('of a host are the sums of its instances', () => {
    const host = app.hosts.find((candidate) => candidate.instances.length > 1);
    if (!host) throw new Error('no multi-instance host');
    const hostRows = hostRowsOf(app, host.name, metric, S, U, FIXED);
    expect(hostRows).toHaveLength(appRows.length);
    const mine = host.instances.map((instance) => instanceRowsOf(app, instance.id, metric, S, U, FIXED));
    hostRows.forEach((row, index) => close(row.count, sum(mine.map((rows) => (rows[index] as TimesliceRow).count))));
  });

  it('are empty for an unknown host or instance', () => {
    expect(hostRowsOf(app, 'no-such-host', metric, S, U, FIXED)).toEqual([]);
    expect(instanceRowsOf(app, -1, metric, S, U, FIXED)).toEqual([]);
  });
});

describe('sandbox NRQL over instances', () => {
  const where = `WHERE appId = ${app.id} AND metricTimesliceName = 'HttpDispatcher'`;

  it('FACET host gives one row per host, with the sums of hostRowsOf', () => {
    const { results } = run(`SELECT count(${V}), sum(${V}) FROM Metric ${where} FACET host LIMIT MAX ${TEN}`);
    expect(results.map((row) => row.facet).sort()).toEqual(app.hosts.map((host) => host.name).sort());
    for (const row of results) {
      expect(row.host).toBe(row.facet);
      const rows = hostRowsOf(app, String(row.facet), metric, FIXED - 10 * MINUTE_MS, FIXED, FIXED);
      expect(rows.length).toBeGreaterThan(0);
      close(row[`count.${V}`] as number, sum(rows.map((one) => one.count)));
      close(row[`sum.${V}`] as number, sum(rows.map((one) => one.total)));
    }
    // And the hosts add up to the app.
    const whole = run(`SELECT count(${V}) FROM Metric ${where} ${TEN}`).results[0] as Record<string, number>;
    close(sum(results.map((row) => row[`count.${V}`] as number)), whole[`count.${V}`] as number);
  });

  it('FACET realAgentId and instanceName give one row per instance', () => {
    const shares = instanceSharesOf(app);
    const byId = run(`SELECT count(${V}) FROM Metric ${where} FACET realAgentId LIMIT MAX ${TEN}`).results;
    // realAgentId is stored as a string (its type is undocumented: sandbox README, NRQL attribute types).
    expect(byId.map((row) => row.realAgentId).sort()).toEqual(shares.map((share) => String(share.instance.id)).sort());
    expect(byId.every((row) => typeof row.facet === 'string' && row.facet === row.realAgentId)).toBe(true);
    const byName = run(`SELECT count(${V}) FROM Metric ${where} FACET instanceName LIMIT MAX ${TEN}`).results;
    expect(new Set(byName.map((row) => row.instanceName))).toEqual(new Set(shares.map((share) => share.instance.instanceName)));
  });

  it('selects an instance by realAgentId as a digit string (a number matches nothing: strictAttributeTypes)', () => {
    const share = instanceSharesOf(app)[1];
    if (!share) throw new Error('one instance only');
    const asNumber = run(`SELECT count(${V}) AS c FROM Metric ${where} AND realAgentId = ${share.instance.id} ${TEN}`).results;
    const asString = run(`SELECT count(${V}) AS c, max(${V}) FROM Metric ${where} AND realAgentId = '${share.instance.id}' ${TEN}`).results;
    const either = run(`SELECT count(${V}) AS c, max(${V}) FROM Metric ${where} AND realAgentId IN (${share.instance.id}, '${share.instance.id}') ${TEN}`).results;
    expect(asNumber).toEqual([{ c: 0 }]);
    expect(either).toEqual(asString);
    const rows = instanceRowsOf(app, share.instance.id, metric, FIXED - 10 * MINUTE_MS, FIXED, FIXED);
    close((asString[0] as Record<string, number>).c as number, sum(rows.map((row) => row.count)));
  });

  it('filters by host =, host IN and host LIKE, in WHERE and in filter()', () => {
    const [first, second] = app.hosts as [SandboxApp['hosts'][number], SandboxApp['hosts'][number]];
    const count = (nrql: string): number => (run(nrql).results[0] as Record<string, number>).c as number;
    const one = count(`SELECT count(${V}) AS c FROM Metric ${where} AND host = '${first.name}' ${TEN}`);
    close(one, sum(hostRowsOf(app, first.name, metric, FIXED - 10 * MINUTE_MS, FIXED, FIXED).map((row) => row.count)));
    const two = count(`SELECT count(${V}) AS c FROM Metric ${where} AND host IN ('${first.name}', '${second.name}') ${TEN}`);
    close(two, one + count(`SELECT count(${V}) AS c FROM Metric ${where} AND host = '${second.name}' ${TEN}`));
    close(count(`SELECT filter(count(${V}), WHERE host = '${first.name}') AS c FROM Metric ${where} ${TEN}`), one);
    close(count(`SELECT count(${V}) AS c FROM Metric ${where} AND host LIKE '${first.name.slice(0, 4)}%' AND host LIKE '%${first.name.slice(4)}' ${TEN}`), one);
    expect(count(`SELECT count(${V}) AS c FROM Metric ${where} AND host LIKE '${first.name.toUpperCase()}' ${TEN}`)).toBe(0);
  });

  it('matches LIKE patterns literally apart from %, and NOT LIKE as the complement', () => {
    const hosts = (condition: string): unknown =>
      (run(`SELECT uniques(host) AS h FROM Metric ${where} AND ${condition} ${TEN}`).results[0] as Record<string, unknown>).h;
    const all = app.hosts.map((host) => host.name).sort();
    const first = all[0] as string;
    expect(hosts(`host LIKE '%'`)).toEqual(all);
    expect(hosts(`host LIKE '${first}'`)).toEqual([first]);
    // '.', '-' and '_' are ordinary characters: a regular-expression or SQL '_' reading would match more.
    expect(hosts(`host LIKE '${first.replace(/[.-]/g, '_')}'`)).toEqual(first.includes('.') || first.includes('-') ? [] : [first]);
    expect(hosts(`host LIKE '${first.replace(/[.-]/g, '.')}'`)).toEqual(/[-]/.test(first) ? [] : [first]);
    expect(hosts(`host NOT LIKE '${first}'`)).toEqual(all.slice(1));
  });

  it('answers uniques(host) and uniques(realAgentId) per app with FACET appId', () => {
    const apps = visible.filter((candidate) => candidate.reporting).slice(0, 4);
    expect(apps.length).toBeGreaterThan(1);
    const { results } = run(
      `SELECT uniques(host), uniques(realAgentId), uniques(instanceName), uniques(appId) FROM Metric WHERE appId IN (${apps.map((one) => one.id).join(', ')}) AND metricTimesliceName = 'HttpDispatcher' FACET appId ${TEN}`,
    );
    expect(results.map((row) => row.appId).sort()).toEqual(apps.map((one) => one.id).sort());
    for (const row of results) {
      const of = apps.find((one) => one.id === row.appId) as SandboxApp;
      expect(row['uniques.host']).toEqual(of.hosts.map((host) => host.name).sort());
      const ids = of.hosts.flatMap((host) => host.instances.map((instance) => String(instance.id))).sort();
      expect(row['uniques.realAgentId']).toEqual(ids);
      expect(row['uniques.instanceName']).toHaveLength(new Set(of.hosts.flatMap((host) => host.instances.map((instance) => instance.instanceName))).size);
      expect(row['uniques.appId']).toEqual([of.id]);
    }
  });

  it('finds the apps of a host by LIKE without naming an app (v2 filter[host])', () => {
    const needle = 'web';
    const { results } = run(
      `SELECT uniques(appId) FROM Metric WHERE host LIKE '%${needle}%' AND metricTimesliceName = 'HttpDispatcher' ${TEN}`,
    );
    // Apps with a matching host and HttpDispatcher rows in the window (non-reporting apps stopped long ago).
    const window = [FIXED - 10 * MINUTE_MS, FIXED] as const;
    const expected = visible
      .filter((candidate) => candidate.hosts.some((host) => host.name.includes(needle)))
      .filter((candidate) => rowsOf(candidate, findMetric(candidate, data, 'HttpDispatcher') as SandboxMetric, ...window, FIXED).length > 0)
      .map((candidate) => candidate.id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect((results[0] as Record<string, unknown>)['uniques.appId']).toEqual(expected);
  });

  it('FACET realAgentId returns 10 facets by default and every instance with LIMIT MAX', () => {
    const reporting = visible.filter((candidate) => candidate.reporting);
    const ids = reporting.flatMap((candidate) => instanceSharesOf(candidate).map((share) => String(share.instance.id)));
    expect(ids.length).toBeGreaterThan(10);
    const query = `SELECT count(${V}) FROM Metric WHERE host LIKE '%' AND metricTimesliceName = 'HttpDispatcher' FACET realAgentId`;
    expect(run(`${query} ${TEN}`).results).toHaveLength(10);
    expect(run(`${query} LIMIT MAX ${TEN}`).results.map((row) => row.realAgentId).sort()).toEqual([...ids].sort());
  });

  it('keeps an app without instances whole, its instance attributes null', () => {
    const bare: SandboxApp = { ...app, hosts: [] };
    const shares = instanceSharesOf(bare);
    expect(shares).toEqual([]);
    const local = { ...data, apps: data.apps.map((candidate) => (candidate === app ? bare : candidate)) };
    const nrql = `SELECT count(${V}) AS c FROM Metric ${where}`;
    const scope = { data: local, accountIds: [PRIMARY], now: FIXED };
    const whole = runNrql(`${nrql} ${TEN}`, scope).results;
    expect((whole[0] as Record<string, number>).c).toBeGreaterThan(0);
    expect(runNrql(`${nrql} AND host IS NULL ${TEN}`, scope).results).toEqual(whole);
    expect(runNrql(`SELECT count(${V}) AS c FROM Metric ${where} FACET host ${TEN}`, scope).results).toEqual([]);
  });

  it('still refuses a timeslice read that names neither an app nor a metric (other reads are account-wide)', () => {
    expect(run(`SELECT uniques(appId) AS ids FROM Metric WHERE host LIKE '%web%' ${TEN}`).results[0]?.ids).toEqual(expect.any(Array));
    for (const query of [
      `SELECT count(${V}) FROM Metric WHERE host LIKE '%web%' ${TEN}`,
      `SELECT count(${V}) FROM Metric WHERE host = 'x' OR metricTimesliceName = 'HttpDispatcher' ${TEN}`,
      `SELECT count(${V}) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher' ${TEN}`,
    ]) {
      expect(() => run(query), query).toThrowError(new NrqlError(NRQL_MESSAGES.noApplication));
    }
  });

  it('keeps MAX_ROWS bounding host-scoped queries', () => {
    const query = `SELECT count(${V}) FROM Metric WHERE host LIKE '%' AND metricTimesliceName = 'HttpDispatcher' ${TEN}`;
    expect(() => runNrql(query, { data, accountIds: [PRIMARY], now: FIXED, maxRows: 50 })).toThrowError(new NrqlError(NRQL_MESSAGES.tooManyRows));
  });
});
