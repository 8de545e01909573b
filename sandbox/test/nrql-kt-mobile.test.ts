import { describe, expect, it } from 'vitest';
import { generateSandboxData } from '../data.ts';
import type { SandboxApp, SandboxKeyTransaction, SandboxMobileApp } from '../model.ts';
import { runNrql, type NrqlOutcome } from '../nrql/engine.ts';
import { HOUR_MS, MINUTE_MS, findMetric, keyTransactionApdexName, metricsOf, rowsOf, type SandboxMetric } from '../timeslices.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const PRIMARY = 1000001;
const V = 'newrelic.timeslice.value';
const TEN = `SINCE ${FIXED - 10 * MINUTE_MS} UNTIL ${FIXED}`;

/** Generated data plus key transactions and mobile apps built here (not data.ts's generator). */
const data = generateSandboxData({ seed: 5, apmApps: 12, now: FIXED });
const [ktApp, otherApp] = data.apps.filter((app) => app.accountId === PRIMARY && app.reporting) as [SandboxApp, SandboxApp];

function keyTransaction(id: number, app: SandboxApp, slug: string): SandboxKeyTransaction {
  return {
    accountId: app.accountId,
    id,
    guid: `kt-guid-${id}`,
    name: `KT ${slug}`,
    appId: app.id,
    metricName: `WebTransaction/Uri/kt/${slug}`,
    transactionName: `get /kt/${slug}`,
    apdexTarget: 0.5,
    browserApdexTarget: null,
    reporting: true,
    alertSeverity: 'NOT_ALERTING',
    lastReportingChangeAt: FIXED - 30 * 86_400_000,
  };
}

function mobileApp(id: number, reporting: boolean, lastReportingChangeAt: number): SandboxMobileApp {
  return {
    accountId: PRIMARY,
    id,
    guid: `mobile-guid-${id}`,
    name: `Mobile ${id}`,
    reporting,
    alertSeverity: 'NOT_CONFIGURED',
    lastReportingChangeAt,
    applicationToken: `token-${id}`,
    summary: null,
  };
}

// Before any catalog or lookup is built: both read these arrays once. The generator's own key
// transactions and mobile apps are dropped, so these tests control every one of them.
data.keyTransactions.length = 0;
data.mobileApps.length = 0;
data.keyTransactions.push(keyTransaction(9001, ktApp, 'checkout'), keyTransaction(9002, ktApp, 'login'));
const stoppedAt = Date.UTC(2026, 10, 20, 6, 0);
const live = mobileApp(7001, true, FIXED - 86_400_000);
const stopped = mobileApp(7002, false, stoppedAt);
data.mobileApps.push(live, stopped);

function run(nrql: string): NrqlOutcome {
  return runNrql(nrql, { data, accountIds: [PRIMARY], now: FIXED });
}

describe('key transaction metrics', () => {
  it('names the apdex metric after the transaction without its first segment', () => {
    expect(keyTransactionApdexName('WebTransaction/Uri/kt/slug')).toBe('Apdex/Uri/kt/slug');
  });

  it("are in the KT's app catalog only, with a call and an apdex metric", () => {
    for (const kt of data.keyTransactions) {
      expect(findMetric(ktApp, data, kt.metricName)?.kind).toBe('call');
      expect(findMetric(ktApp, data, keyTransactionApdexName(kt.metricName))?.kind).toBe('apdex');
      expect(findMetric(otherApp, data, kt.metricName)).toBeUndefined();
      expect(findMetric(otherApp, data, keyTransactionApdexName(kt.metricName))).toBeUndefined();
    }
  });

  it('have rows for the KT app and none for another app', () => {
    const kt = data.keyTransactions[0] as SandboxKeyTransaction;
    const query = (app: SandboxApp): Record<string, unknown> =>
      run(`SELECT count(${V}) AS calls, filter(max(${V}), WHERE metricTimesliceName = '${keyTransactionApdexName(kt.metricName)}') AS threshold FROM Metric WHERE appId = ${app.id} AND metricTimesliceName IN ('${kt.metricName}', '${keyTransactionApdexName(kt.metricName)}') ${TEN}`)
        .results[0] as Record<string, unknown>;
    const mine = query(ktApp);
    expect(mine.calls).toBeGreaterThan(0);
    expect(mine.threshold).toBe(ktApp.apdexTarget);
    expect(query(otherApp)).toEqual({ calls: 0, threshold: null });
  });
});

describe('mobile timeslices', () => {
  const sessions = findMetric(live, data, 'Session/Start') as SandboxMetric;
  const crashes = findMetric(live, data, 'Mobile/Crash/All') as SandboxMetric;

  it('have a small catalog of mobile names', () => {
    expect(metricsOf(live, data).map((metric) => metric.name)).toEqual(
      expect.arrayContaining(['Session/Start', 'Mobile/Crash/All', 'External/all']),
    );
  });

  it('are selected by entityGuid (the default mobileGuidAttribute), and give a crash rate below 100 %', () => {
    const row = run(
      `SELECT filter(count(${V}), WHERE metricTimesliceName = 'Mobile/Crash/All') / filter(count(${V}), WHERE metricTimesliceName = 'Session/Start') * 100 AS rate, filter(count(${V}), WHERE metricTimesliceName = 'Session/Start') AS launches FROM Metric WHERE entityGuid = '${live.guid}' ${TEN}`,
    ).results[0] as Record<string, number>;
    const window = [FIXED - 10 * MINUTE_MS, FIXED] as const;
    const launches = rowsOf(live, sessions, ...window, FIXED).reduce((total, one) => total + one.count, 0);
    const crashCount = rowsOf(live, crashes, ...window, FIXED).reduce((total, one) => total + one.count, 0);
    expect(launches).toBeGreaterThan(0);
    expect(row.launches).toBe(launches);
    expect(row.rate).toBeCloseTo((100 * crashCount) / launches, 12);
    expect(row.rate).toBeLessThan(100);
  });

  it('carry the GUID attribute(s) mobileGuidAttribute names, and only those', () => {
    const count = (attribute: string, spelling: 'entityGuid' | 'entity.guid' | 'both'): unknown => {
      const behaviours = data.behaviours;
      data.behaviours = { ...behaviours, mobileGuidAttribute: spelling };
      try {
        return run(`SELECT count(${V}) AS c FROM Metric WHERE ${attribute} = '${live.guid}' AND metricTimesliceName = 'Session/Start' ${TEN}`).results[0]?.c;
      } finally {
        data.behaviours = behaviours;
      }
    };
    const launches = rowsOf(live, sessions, FIXED - 10 * MINUTE_MS, FIXED, FIXED).reduce((total, one) => total + one.count, 0);
    expect([count('entityGuid', 'entityGuid'), count('entity.guid', 'entityGuid')]).toEqual([launches, 0]);
    expect([count('entityGuid', 'entity.guid'), count('entity.guid', 'entity.guid')]).toEqual([0, launches]);
    expect([count('entityGuid', 'both'), count('entity.guid', 'both')]).toEqual([launches, launches]);
    // Both spellings with OR find the rows whichever one they carry.
    const either = `SELECT count(${V}) AS c FROM Metric WHERE (entityGuid = '${live.guid}' OR entity.guid = '${live.guid}') AND metricTimesliceName = 'Session/Start' ${TEN}`;
    expect(run(either).results).toEqual([{ c: launches }]);
  });

  it('are not found by appId (UNCONFIRMED whether mobile timeslices carry it)', () => {
    // The WHERE names an app id, so the query runs; no APM app has it, and no mobile row matches.
    expect(data.apps.some((app) => app.id === live.id)).toBe(false);
    expect(run(`SELECT count(${V}) AS c FROM Metric WHERE appId = ${live.id} ${TEN}`).results).toEqual([{ c: 0 }]);
  });

  it('of a non-reporting app stop at lastReportingChangeAt', () => {
    const metric = findMetric(stopped, data, 'Session/Start') as SandboxMetric;
    expect(metric.until).toBeLessThanOrEqual(stoppedAt);
    expect(rowsOf(stopped, metric, stoppedAt, FIXED, FIXED)).toEqual([]);
    expect(rowsOf(stopped, metric, stoppedAt - 2 * HOUR_MS, stoppedAt, FIXED).length).toBeGreaterThan(0);
    const after = run(`SELECT count(${V}) AS c FROM Metric WHERE entityGuid = '${stopped.guid}' SINCE ${stoppedAt} UNTIL ${FIXED}`).results[0];
    expect(after).toEqual({ c: 0 });
  });

  it('stay invisible to other accounts', () => {
    const other = runNrql(`SELECT count(${V}) AS c FROM Metric WHERE entityGuid = '${live.guid}' ${TEN}`, { data, accountIds: [1000002], now: FIXED });
    expect(other.results).toEqual([{ c: 0 }]);
  });
});
