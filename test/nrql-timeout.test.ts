import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../sandbox/model.ts';
import { createSandbox } from '../sandbox/server.ts';
import { metricsOf } from '../sandbox/timeslices.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway } from './support/harness.ts';
import { startFakeUpstream, type FakeRequest } from './support/fake-upstream.ts';

/**
 * Issue 20, point 2, the gateway's side, against the sandbox's NRQL cost and TIMEOUT (on by
 * default; nrqlClockScale 1 here, so a simulated second is a real millisecond):
 * - every nrql field is given `timeout` from the request's remaining deadline, not NerdGraph's 5 s;
 * - the metric-data name look-up (a long uniques window) can never fail the data query;
 * - a query that used up its timeout is not retried past the request's deadline.
 */
const DAY_MS = 86_400_000;
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (closers.length) await closers.pop()?.();
});

/** The sandbox behind a recording front, so a test sees the variables each request carried. */
async function startFront() {
  const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { nrqlClockScale: 1 } });
  const upstream = await startFakeUpstream(async (request: FakeRequest, res) => {
    const answer = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key'] ?? '') },
      body: JSON.stringify({ query: request.query, variables: request.variables, operationName: request.operationName }),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(await answer.text());
  });
  closers.push(upstream.close);
  // A web app with a few dozen metric names (not the bulk one): its cost is its window's.
  const app = sandbox.data.apps.find((candidate) => {
    const names = candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting ? metricsOf(candidate, sandbox.data) : [];
    return names.length > 0 && names.length < 100 && names.some((metric) => metric.name === 'HttpDispatcher');
  }) as SandboxApp;
  return { upstream, app };
}

/** One sandbox for the file (read only); each test looks at the requests it caused. */
let front: ReturnType<typeof startFront> | undefined;
async function sandboxFront() {
  front ??= startFront();
  const { upstream, app } = await front;
  upstream.received.length = 0;
  return { upstream, app };
}

async function get(gateway: Awaited<ReturnType<typeof createTestGateway>>, path: string) {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('NRQL timeout: gateway against the sandbox', () => {
  it('gives every nrql field the time left before the deadline: a 600-day name listing (6 s simulated) finishes within a 20 s deadline', async () => {
    const { upstream, app } = await sandboxFront();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 20_000, config: { metricNamesLookbackMs: 600 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics.json`);
    expect(answer.status).toBe(200);
    expect((answer.body.metrics as unknown[]).length).toBeGreaterThan(0);
    const sent = upstream.received.find((r) => r.operationName === 'ApplicationMetricNames');
    // 20 s less what was spent before it and the round trip's margin: 19 s unless the machine
    // is very busy (NerdGraph's default, without it, is 5 s).
    expect(sent?.variables.timeout).toBeGreaterThanOrEqual(15);
    expect(sent?.variables.timeout).toBeLessThanOrEqual(19);
  });

  it('a slow name look-up (800-day uniques: 8 s simulated, past an 8 s deadline) no longer fails the fast data query: found = the names with data', async () => {
    const { upstream, app } = await sandboxFront();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 8_000, config: { metricNamesLookbackMs: 800 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics/data.json?names[]=HttpDispatcher&names[]=Custom/NeverReported&summarize=true`);
    expect(answer.status).toBe(200);
    const data = answer.body.metric_data as { metrics_found: string[]; metrics_not_found: string[] };
    expect(data.metrics_found).toEqual(['HttpDispatcher']);
    expect(data.metrics_not_found).toEqual(['Custom/NeverReported']);
    // Logged: the request's line says what it did without.
    const line = gateway.logs.map((text) => JSON.parse(text) as { route?: string; degraded?: string; level?: number }).find((entry) => entry.degraded !== undefined);
    expect(line?.degraded).toMatch(/metric name look-up failed \(timeout\)/);
  });

  it('does not retry a query that used up its timeout when the deadline leaves no longer one (one request, 504)', async () => {
    const { upstream, app } = await sandboxFront();
    // A 1,000-day listing costs 10 s simulated; an 8 s deadline gives the query 7 s at most.
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 8_000, retries: 2, config: { metricNamesLookbackMs: 1_000 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics.json`);
    expect(answer.status).toBe(504);
    expect((answer.body.error as { title: string }).title).toBe('NerdGraph did not answer in time');
    const sent = upstream.received.filter((r) => r.operationName === 'ApplicationMetricNames');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.variables.timeout).toBeLessThanOrEqual(7);
  });
});
