import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../../sandbox/model.ts';
import { bulkMetricsApp } from '../../../sandbox/timeslices.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../support/harness.ts';

/**
 * Metric routes against the sandbox: the cost contract (exactly one upstream request per
 * metric-data call, read from the gateway's own /metrics), hostile metric names answered as
 * not found without changing the query, and client mistakes never answered with a 5xx.
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let app: SandboxApp;
const headers = { 'X-Api-Key': DEMO_KEY };

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 30 });
  gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT && a.reporting) as SandboxApp;
});
afterAll(() => sandbox.close());

/** v2bridge_upstream_requests_total for one operation, as /metrics shows it. */
async function upstreamFromMetrics(operation: string): Promise<number> {
  const text = await (await gateway.app.request('/metrics')).text();
  let sum = 0;
  for (const match of text.matchAll(/^v2bridge_upstream_requests_total\{([^}]*)\}\s+(\S+)$/gm)) {
    if ((match[1] ?? '').includes(`operation="${operation}"`)) sum += Number(match[2]);
  }
  return sum;
}

interface MetricData {
  metric_data: { metrics_found: string[]; metrics_not_found: string[]; metrics: Array<{ name: string; timeslices: Array<{ values: Record<string, number> }> }> };
}

const dataPath = (query: string): string => `/v2/applications/${app.id}/metrics/data.json?${query}`;

describe('metric data costs exactly one upstream request per call', () => {
  it.each([
    ['one name, default range', 'names[]=HttpDispatcher'],
    ['eight names of five families, every value', 'names[]=HttpDispatcher&names[]=Apdex&names[]=Errors/all&names[]=Memory/Physical&names[]=CPU/User+Time&names[]=WebTransaction&names[]=External/all&names[]=No/Such'],
    ['values filter, summarized, a day', 'names[]=HttpDispatcher&names[]=Apdex&values[]=call_count&values[]=score&summarize=true&from=2026-11-21T12:00:00Z'],
    ['a year in 3-day slices', 'names[]=HttpDispatcher&from=2025-11-22T12:00:00Z'],
    ['names that are never sent', 'names[]=bad%00name'],
  ])('%s', async (_label, query) => {
    const before = await upstreamFromMetrics('ApplicationMetricData');
    const response = await gateway.app.request(dataPath(query), { headers });
    expect(response.status).toBe(200);
    expect((await upstreamFromMetrics('ApplicationMetricData')) - before).toBe(1);
  });

  it('also for a POST form body and for XML', async () => {
    const before = await upstreamFromMetrics('ApplicationMetricData');
    const post = await gateway.app.request(`/v2/applications/${app.id}/metrics/data.xml`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'names[]=HttpDispatcher&names[]=Apdex&period=120',
    });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain('<metrics_found type="array">');
    expect((await upstreamFromMetrics('ApplicationMetricData')) - before).toBe(1);
  });

  it('and walking all pages of a names listing costs one request in all', async () => {
    const bulk = bulkMetricsApp(sandbox.sandbox.data) as SandboxApp;
    const before = await upstreamFromMetrics('ApplicationMetricNames');
    const pages = await Promise.all([1, 2, 3].map((page) => gateway.app.request(`/v2/applications/${bulk.id}/metrics.json?page=${page}`, { headers })));
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    const counts = await Promise.all(pages.map(async (p) => ((await p.json()) as { metrics: unknown[] }).metrics.length));
    expect(counts[0]).toBe(1000);
    expect(counts[1]).toBe(1000);
    expect(counts[2]).toBeGreaterThan(300);
    expect((await upstreamFromMetrics('ApplicationMetricNames')) - before).toBe(1);
  });
});

describe('values asked for by name', () => {
  it('computes average_call_time for a call metric although metrics.json does not list it', async () => {
    const body = (await (await gateway.app.request(dataPath('names[]=HttpDispatcher&values[]=average_call_time&values[]=call_count&summarize=true'), { headers })).json()) as MetricData;
    const values = body.metric_data.metrics[0]?.timeslices[0]?.values ?? {};
    expect(Object.keys(values)).toEqual(['average_call_time', 'call_count']);
    expect(values.average_call_time).toBeGreaterThan(0);
  });
});

describe('hostile metric names', () => {
  const HOSTILE = [
    "x') OR appId IN (1",
    "HttpDispatcher' OR metricTimesliceName = 'Apdex",
    "HttpDispatcher')  FACET appName SINCE 1 YEAR AGO --",
    'HttpDispatcher\\',
    "\\' OR 1=1 OR '",
    'HttpDispatcher%',
    'HttpDispatcher\u0000',
    'HttpDispatcher\n',
    'HttpDispatcher" OR "1"="1',
    "'; DROP TABLE Metric; --",
    'SINCE 1 WEEK AGO',
    'x'.repeat(5000),
  ];

  it.each(HOSTILE.map((name) => [JSON.stringify(name).slice(0, 60), name]))('%s is not found, and the real name beside it is unchanged', async (_label, name) => {
    const range = 'from=2026-11-22T11:00:00Z&to=2026-11-22T11:30:00Z&values[]=call_count';
    const alone = (await (await gateway.app.request(dataPath(`${range}&names[]=HttpDispatcher`), { headers })).json()) as MetricData;
    const response = await gateway.app.request(dataPath(`${range}&names[]=HttpDispatcher&names[]=${encodeURIComponent(name)}`), { headers });
    expect(response.status).toBe(200);
    const body = (await response.json()) as MetricData;
    expect(body.metric_data.metrics_not_found).toEqual([name]);
    expect(body.metric_data.metrics_found).toEqual(['HttpDispatcher']);
    expect(body.metric_data.metrics).toEqual(alone.metric_data.metrics);
  });
});

describe('malformed metric parameters never produce a 5xx', () => {
  const queries = [
    'names[]=HttpDispatcher&from=%ZZ',
    'names[]=HttpDispatcher&from=2026-11-22T10:00:00Z&to=',
    'names[]=HttpDispatcher&period=1e9',
    'names[]=HttpDispatcher&period=999999999999',
    'names[]=HttpDispatcher&summarize=true&period=abc',
    'names[]=HttpDispatcher&from=9999-12-31T23:59:59Z',
    'names[]=HttpDispatcher&to=0001-01-01T00:00:00Z',
    'names[][]=HttpDispatcher',
    'names[]=%E0%A4%A',
    'values[]=%00&names[]=Apdex',
    `names[]=${'%F0%9F%9A%80'.repeat(300)}`,
    'page=-1&names[]=Apdex',
    'names[]=HttpDispatcher&values[]=toString',
    'names[]=HttpDispatcher&values[]=__proto__&values[]=constructor&values[]=hasOwnProperty',
    'names[]=HttpDispatcher&to=9999-12-31T23:59:59-23:59',
  ];
  it.each(queries)('%s', async (query) => {
    const response = await gateway.app.request(dataPath(query), { headers });
    expect(response.status).toBeLessThan(500);
    const names = await gateway.app.request(`/v2/applications/${app.id}/metrics.json?${query.replace('names', 'name')}`, { headers });
    expect(names.status).toBeLessThan(500);
  });
});
