import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentHosts } from '../../../sandbox/hosts.ts';
import type { SandboxApp, SandboxData } from '../../../sandbox/model.ts';
import { runNrql } from '../../../sandbox/nrql/engine.ts';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../../sandbox/server.ts';
import { HOUR_MS, LIFECYCLE_NAMES, SEGMENT_NAMES, findMetric, rowsOf, scopesOf } from '../../../sandbox/timeslices.ts';
import { quoteLiteral } from '../../../src/upstream/query-literal.ts';
import { answerDifference, readAnswer } from '../../support/compare.ts';
import { httpSend, serveOnLoopback } from '../../support/http.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../support/harness.ts';
import { syntheticHostId } from '../../../mappings/common/app-instances.ts';

/**
 * Scoped timeslices (behaviour `scopedTimeslices`). Agents record a segment
 * metric both unscoped and scoped to its transaction, under the same metricTimesliceName ("Query
 * APM metric timeslice data with NRQL"; the Ruby agent's record_scoped_and_unscoped). A query by
 * name alone reads both and counts twice; REST v2 reported the unscoped values. The sandbox's
 * NerdGraph face has both; its legacy face answers from the unscoped rows, as v2 did; the
 * gateway must equal the legacy face for the sums (call_count, calls_per_minute,
 * total_call_time_per_minute), on the app, host and instance routes.
 */
const SEGMENTS = [SEGMENT_NAMES.datastore, SEGMENT_NAMES.external, LIFECYCLE_NAMES.recent] as const;
const SUMS = ['call_count', 'calls_per_minute', 'total_call_time_per_minute', 'average_response_time'];
const V = 'newrelic.timeslice.value';

function segmentApp(data: SandboxData): SandboxApp {
  const app = data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting && currentHosts(candidate).length > 0);
  if (!app) throw new Error('the sandbox world has no reporting app with hosts');
  return app;
}

function count(data: SandboxData, where: string, since: number): number {
  const outcome = runNrql(`SELECT count(${V}) AS c FROM Metric WHERE ${where} SINCE ${since} UNTIL ${FIXED_NOW}`, { data, accountIds: [PRIMARY_ACCOUNT], now: FIXED_NOW });
  return (outcome.results[0] as { c: number }).c;
}

describe('sandbox: scoped and unscoped rows of segment metrics', () => {
  const on = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW }).data;
  const off = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { scopedTimeslices: false } }).data;
  const app = segmentApp(on);
  const since = FIXED_NOW - HOUR_MS;

  it.each(SEGMENTS)('%s: scoped rows carry the name and a scope; by name alone they count twice', (name) => {
    const metric = findMetric(app, on, name);
    expect(metric).toBeDefined();
    const scopes = scopesOf(app, metric!, on);
    expect(scopes.length).toBeGreaterThan(0);
    const raw = rowsOf(app, metric!, since, FIXED_NOW, FIXED_NOW).reduce((sum, row) => sum + row.count, 0);
    expect(raw).toBeGreaterThan(0);
    const byName = `appId = ${app.id} AND metricTimesliceName = ${quoteLiteral(name)}`;
    expect(count(on, `${byName} AND scope IS NULL`, since)).toBe(raw);
    expect(count(on, byName, since)).toBeCloseTo(2 * raw, 6);
    expect(count(on, `${byName} AND scope IS NOT NULL`, since)).toBeCloseTo(raw, 6);
    // The documented breakdown of one transaction by its segments finds the metric under its scope.
    const first = scopes[0]!;
    const breakdown = runNrql(
      `SELECT count(${V}) AS c FROM Metric WHERE appId = ${app.id} AND scope = ${quoteLiteral(first.name)} FACET metricTimesliceName LIMIT MAX SINCE ${since} UNTIL ${FIXED_NOW}`,
      { data: on, accountIds: [PRIMARY_ACCOUNT], now: FIXED_NOW },
    ).results as Array<{ metricTimesliceName: string; c: number }>;
    expect(breakdown.find((row) => row.metricTimesliceName === name)?.c).toBeCloseTo(raw * first.weight, 6);
    // Switched off: one row per slice, as before.
    expect(count(off, byName, since)).toBe(raw);
  });

  it('keeps rollups (Datastore/all, External/<host>/all) and transaction metrics unscoped', () => {
    for (const name of ['Datastore/all', 'External/all', 'External/api.example.com/all', 'HttpDispatcher', 'Errors/all']) {
      const byName = `appId = ${app.id} AND metricTimesliceName = '${name}'`;
      expect(count(on, byName, since), name).toBe(count(on, `${byName} AND scope IS NULL`, since));
    }
  });
});

describe('gateway: metric data of segment metrics equals v2 (unscoped rows only)', () => {
  let sandbox: Sandbox;
  let running: RunningSandbox;
  let gateway: TestGateway;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;
  let app: SandboxApp;

  beforeAll(async () => {
    sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW });
    running = await sandbox.listen(0, '127.0.0.1');
    gateway = await createTestGateway({ nerdgraphUrl: `${running.url}/graphql` });
    served = await serveOnLoopback(gateway.app.fetch);
    app = segmentApp(sandbox.data);
  });
  afterAll(async () => {
    await served.close();
    await running.close();
  });

  const iso = (ms: number): string => encodeURIComponent(new Date(ms).toISOString().replace('.000Z', 'Z'));
  const query = (extra: string): string =>
    [...SEGMENTS.map((name) => `names[]=${encodeURIComponent(name)}`), ...SUMS.map((value) => `values[]=${value}`), extra].join('&');

  /** `gatewayPath`: the same request with the gateway's own ids (its host ids are derived, the sandbox's its own). */
  async function compare(path: string, gatewayPath = path): Promise<void> {
    const request = { method: 'GET' as const, headers: { 'X-Api-Key': DEMO_KEY } };
    const viaGateway = await readAnswer(await httpSend(`${served.url}${gatewayPath}`, request), served.url);
    const viaLegacy = await readAnswer(await httpSend(`${running.url}${path}`, request), running.url);
    expect(viaLegacy.status).toBe(200);
    expect(answerDifference(viaGateway, viaLegacy, 1e-9, (body) => body) ?? 'equal').toBe('equal');
  }

  it('on the app: summarized and per-minute, call_count and the per-minute sums equal the legacy face', async () => {
    await compare(`/v2/applications/${app.id}/metrics/data.json?${query(`from=${iso(FIXED_NOW - HOUR_MS)}&to=${iso(FIXED_NOW)}&summarize=true`)}`);
    await compare(`/v2/applications/${app.id}/metrics/data.json?${query(`from=${iso(FIXED_NOW - 2 * HOUR_MS)}&to=${iso(FIXED_NOW)}`)}`);
  });

  it('on a host and on an instance of the app', async () => {
    const host = currentHosts(app)[0]!;
    const instance = host.instances[0]!;
    const window = query(`from=${iso(FIXED_NOW - HOUR_MS)}&to=${iso(FIXED_NOW)}&summarize=true`);
    await compare(`/v2/applications/${app.id}/hosts/${host.id}/metrics/data.json?${window}`, `/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host.name)}/metrics/data.json?${window}`);
    await compare(`/v2/applications/${app.id}/instances/${instance.id}/metrics/data.json?${query(`from=${iso(FIXED_NOW - HOUR_MS)}&to=${iso(FIXED_NOW)}&summarize=true`)}`);
  });

  // Not a witness of the unscoped filter (uniques() keeps one name however many rows carry it):
  // it pins what a client sees, one name per segment metric.
  it('lists each segment metric once among the names', async () => {
    const response = await gateway.app.request(`/v2/applications/${app.id}/metrics.json?name=${encodeURIComponent('Datastore/statement/')}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { metrics: Array<{ name: string }> };
    expect(body.metrics.map((metric) => metric.name)).toEqual([SEGMENT_NAMES.datastore]);
  });
});
