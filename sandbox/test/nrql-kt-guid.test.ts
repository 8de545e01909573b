import { describe, expect, it } from 'vitest';
import { generateSandboxData } from '../data.ts';
import type { SandboxKeyTransaction } from '../model.ts';
import { runNrql } from '../nrql/engine.ts';
import { MINUTE_MS, keyTransactionApdexName } from '../timeslices.ts';

/**
 * Key transactions' timeslices selected by the KT's own entity.guid (an UNCONFIRMED assumption
 * about NRDB, see the engine's header): exactly the parent app's rows of the KT's metric and
 * its Apdex metric, faceted per KT by `FACET entity.guid`.
 */
const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const PRIMARY = 1000001;
const SECONDARY = 1000002;
const V = 'newrelic.timeslice.value';
const TEN = `SINCE ${FIXED - 10 * MINUTE_MS} UNTIL ${FIXED}`;

const data = generateSandboxData({ seed: 11, apmApps: 30, now: FIXED });
const reportingKts = data.keyTransactions.filter((kt) => kt.accountId === PRIMARY && kt.reporting);
const [first, second] = reportingKts as [SandboxKeyTransaction, SandboxKeyTransaction];
const foreign = data.keyTransactions.find((kt) => kt.accountId === SECONDARY && kt.reporting) as SandboxKeyTransaction;

const run = (nrql: string, accountIds = [PRIMARY]) => runNrql(nrql, { data, accountIds, now: FIXED });
const SELECT = `SELECT count(${V}) AS c, sum(${V}) AS t, filter(count(${V}), WHERE metricTimesliceName LIKE 'Apdex/%') AS s FROM Metric`;

/** The same sums read through the parent app, by metric name. */
function byApp(kt: SandboxKeyTransaction): Record<string, unknown> {
  return run(`${SELECT} WHERE appId = ${kt.appId} AND metricTimesliceName IN ('${kt.metricName}', '${keyTransactionApdexName(kt.metricName)}') ${TEN}`).results[0]!;
}

describe('NRQL on a key transaction entity.guid', () => {
  it('has two reporting primary KTs and a secondary one to test with', () => {
    expect(first && second && foreign).toBeTruthy();
  });

  it("selects exactly the parent app's rows of the KT metric and its Apdex metric", () => {
    const row = run(`${SELECT} WHERE entity.guid = '${first.guid}' ${TEN}`).results[0]!;
    expect(row.c).toBeGreaterThan(0);
    expect(row.s).toBeGreaterThan(0);
    expect(row).toEqual(byApp(first));
  });

  it('FACET entity.guid gives one row per KT, keyed by the KT GUID', () => {
    const outcome = run(`${SELECT} WHERE entity.guid IN ('${first.guid}', '${second.guid}') FACET entity.guid LIMIT MAX ${TEN}`);
    const byGuid = new Map(outcome.results.map((row) => [row['entity.guid'], row]));
    expect([...byGuid.keys()].sort()).toEqual([first.guid, second.guid].sort());
    for (const kt of [first, second]) {
      const { facet, 'entity.guid': guid, ...values } = byGuid.get(kt.guid)!;
      expect(facet).toBe(guid);
      expect(values).toEqual(byApp(kt));
    }
  });

  it("leaves the app's own entity.guid rows unchanged (no KT series mixed in)", () => {
    const app = data.apps.find((a) => a.id === first.appId)!;
    const viaGuid = run(`SELECT count(${V}) AS c FROM Metric WHERE entity.guid = '${app.guid}' ${TEN}`).results[0];
    const viaId = run(`SELECT count(${V}) AS c FROM Metric WHERE appId = ${app.id} ${TEN}`).results[0];
    expect(viaGuid).toEqual(viaId);
  });

  it("is invisible to another account's scope", () => {
    expect(run(`SELECT count(${V}) AS c FROM Metric WHERE entity.guid = '${foreign.guid}' ${TEN}`).results).toEqual([{ c: 0 }]);
    const own = run(`SELECT count(${V}) AS c FROM Metric WHERE entity.guid = '${foreign.guid}' ${TEN}`, [SECONDARY]).results[0] as { c: number };
    expect(own.c).toBeGreaterThan(0);
  });

  it('an unknown GUID matches nothing', () => {
    expect(run(`SELECT count(${V}) AS c FROM Metric WHERE entity.guid = 'no-such-guid' ${TEN}`).results).toEqual([{ c: 0 }]);
  });
});
