/**
 * App-level NRQL queries whose answers must not change when the engine learns instances,
 * hosts and mobile apps. test/fixtures/sandbox-app-level.json holds their answers as the
 * engine gave them before that change (regenerate with the command in that test only when
 * an app-level answer is meant to change).
 */
import { generateSandboxData } from '../../sandbox/data.ts';
import type { SandboxData } from '../../sandbox/model.ts';

export const APP_LEVEL_NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
export const APP_LEVEL_ACCOUNTS = [1000001, 1000002];

export function appLevelData(): SandboxData {
  const data = generateSandboxData({ seed: 11, apmApps: 12, now: APP_LEVEL_NOW });
  // Key transactions add metrics to their apps' catalogs, which is not what these answers pin.
  data.keyTransactions.length = 0;
  // The recorded answers predate rollup snapping (the 10-day query would snap to hours).
  data.behaviours = { ...data.behaviours, rollupSnapping: false };
  return data;
}

export function appLevelQueries(data: SandboxData): string[] {
  const V = 'newrelic.timeslice.value';
  const since = APP_LEVEL_NOW - 6 * 3_600_000;
  const window = `SINCE ${since} UNTIL ${APP_LEVEL_NOW}`;
  const apps = data.apps.slice(0, 4);
  const ids = apps.map((app) => app.id).join(', ');
  const first = apps[0];
  if (!first) throw new Error('no apps');
  return [
    `SELECT count(${V}), average(${V}), min(${V}), max(${V}), stddev(${V}), sum(${V}['totalExclusive']) FROM Metric WHERE appId = ${first.id} AND metricTimesliceName = 'HttpDispatcher' ${window}`,
    `SELECT average(${V}) FROM Metric WHERE appId IN (${ids}) AND metricTimesliceName IN ('HttpDispatcher', 'Apdex') FACET appId ${window} TIMESERIES 30 minutes`,
    `SELECT uniques(metricTimesliceName) FROM Metric WHERE appId = ${first.id} ${window}`,
    `SELECT filter(count(${V}), WHERE metricTimesliceName = 'Errors/all') / filter(count(${V}), WHERE metricTimesliceName = 'HttpDispatcher') AS ratio FROM Metric WHERE appId IN (${ids}) FACET appName ${window}`,
    `SELECT rate(count(${V}), 1 minute) FROM Metric WHERE entity.guid = '${first.guid}' FACET metricTimesliceName LIMIT MAX SINCE ${APP_LEVEL_NOW - 10 * 86_400_000} UNTIL ${APP_LEVEL_NOW}`,
    `SELECT sum(${V}['count']), max(${V}['max']) FROM Metric WHERE appId IN (${ids}) AND metricTimesliceName = 'Memory/Physical' FACET appId ${window}`,
  ];
}
