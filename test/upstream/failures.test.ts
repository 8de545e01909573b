import { afterEach, describe, expect, it } from 'vitest';
import { entityGuid } from '../../src/v2/ids.ts';
import { DEMO_KEY, createTestGateway } from '../support/harness.ts';
import { PAGE_DETAIL_OPERATIONS, accountsAnswer, apmEntity, emptyPageDetails, json, startFakeUpstream } from '../support/fake-upstream.ts';

/** Upstream failures and timeouts come back as v2-shaped 502/503/504 (and 401/429), never a crash. */
const ACCOUNT = 1000001;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function gatewayOn(handler: Parameters<typeof startFakeUpstream>[0], options: { timeoutMs?: number; retries?: number } = {}) {
  const upstream = await startFakeUpstream(handler);
  closers.push(upstream.close);
  const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, ...options });
  return { upstream, gateway };
}

async function get(gateway: Awaited<ReturnType<typeof createTestGateway>>, path = '/v2/applications.json') {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  return { status: response.status, body: (await response.json()) as { error?: { title?: string } }, headers: response.headers };
}

/** Answers accounts normally and hands every other operation to `rest`. */
function afterAccounts(rest: Parameters<typeof startFakeUpstream>[0]): Parameters<typeof startFakeUpstream>[0] {
  return (req, res) => (req.operationName === 'AccessibleAccounts' ? json(res, 200, accountsAnswer([ACCOUNT])) : rest(req, res));
}

describe('upstream failures', () => {
  it('HTTP 500 with an HTML body -> 502 v2 error', async () => {
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => { res.writeHead(500, { 'content-type': 'text/html' }); res.end('<h1>oops</h1>'); }));
    const answer = await get(gateway);
    expect(answer.status).toBe(502);
    expect(answer.body.error?.title).toMatch(/NerdGraph/);
  });

  it('HTTP 503 -> 503, and reads are retried within the budget', async () => {
    const { gateway, upstream } = await gatewayOn(afterAccounts((_req, res) => json(res, 503, { errors: [{ message: 'unavailable' }] })), { retries: 2 });
    const answer = await get(gateway);
    expect(answer.status).toBe(503);
    expect(upstream.received.filter((r) => r.operationName === 'ApplicationsSearch')).toHaveLength(3);
  });

  it('a GraphQL TIMEOUT error class with HTTP 200 -> 504', async () => {
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => json(res, 200, { data: null, errors: [{ message: 'NRDB query duration exceeded the set timeout', extensions: { errorClass: 'TIMEOUT' } }] })));
    expect((await get(gateway)).status).toBe(504);
  });

  it('no answer before the deadline -> 504, and the upstream request is really aborted', async () => {
    const { gateway, upstream } = await gatewayOn(afterAccounts(() => undefined), { timeoutMs: 300 });
    const started = Date.now();
    const answer = await get(gateway);
    expect(answer.status).toBe(504);
    expect(answer.body.error?.title).toBe('NerdGraph did not answer in time');
    expect(Date.now() - started).toBeLessThan(3000);
    // The fake sees the socket close shortly after the deadline; poll rather than guess a delay.
    for (let i = 0; i < 100 && upstream.abortedCount() === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(upstream.abortedCount()).toBeGreaterThanOrEqual(1);
  });

  it('connection refused -> 503', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = await startFakeUpstream(() => undefined);
    await closed.close();
    const gateway = await createTestGateway({ nerdgraphUrl: closed.url });
    const answer = await get(gateway);
    expect(answer.status).toBe(503);
    expect(answer.body.error?.title).toBe('NerdGraph is unavailable');
  });

  it('a connection reset mid-answer -> 502', async () => {
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => void res.socket?.destroy()));
    expect((await get(gateway)).status).toBe(502);
  });

  it('TOO_MANY_REQUESTS -> 429 with Retry-After', async () => {
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => json(res, 429, { errors: [{ message: 'Too many requests' }] }, { 'retry-after': '7' })));
    const answer = await get(gateway);
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
  });

  it("NerdGraph's bad-key answer (HTTP 401 or 200 + BAD_API_KEY) -> 401 Invalid API key", async () => {
    const badKey = { errors: [{ message: 'Bad API Key or no API Key provided', extensions: { error_code: 'BAD_API_KEY' } }] };
    for (const status of [401, 200]) {
      const { gateway } = await gatewayOn((_req, res) => json(res, status, badKey));
      const answer = await get(gateway);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ error: { title: 'Invalid API key' } });
    }
  });

  it('an answer of the wrong shape -> 502, not a 500', async () => {
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => json(res, 200, { data: { actor: { entitySearch: { count: 'many', results: 7 } } } })));
    expect((await get(gateway)).status).toBe(502);
  });

  it('an entity of the wrong shape on show -> 502', async () => {
    const guid = entityGuid(ACCOUNT, 'APM', 'APPLICATION', 5);
    const { gateway } = await gatewayOn(afterAccounts((_req, res) => json(res, 200, { data: { actor: { entity: { guid, accountId: ACCOUNT, name: 42 } } } })));
    expect((await get(gateway, '/v2/applications/5.json')).status).toBe(502);
  });
});

describe('entities NerdGraph returns incomplete', () => {
  const entity = (id: number, overrides: Record<string, unknown> = {}) =>
    apmEntity(ACCOUNT, id, {
      apmSummary: { responseTimeAverage: 0.1, throughput: 10, errorRate: 0, apdexScore: 1, hostCount: 1, instanceCount: 1 },
      ...overrides,
    });

  it('leaves out one item v2 cannot show, keeps the page, and counts it', async () => {
    const { gateway } = await gatewayOn(afterAccounts((req, res) =>
      PAGE_DETAIL_OPERATIONS.has(req.operationName ?? '') ? json(res, 200, emptyPageDetails()) :
      json(res, 200, { data: { actor: { entitySearch: { count: 3, results: { nextCursor: null, entities: [entity(1), entity(2, { name: null, applicationId: null }), entity(3)] } } } } }),
    ));
    const answer = await get(gateway);
    expect(answer.status).toBe(200);
    expect((answer.body as unknown as { applications: Array<{ id: number }> }).applications.map((a) => a.id)).toEqual([1, 3]);
    expect(await (await gateway.app.request('/metrics')).text()).toContain('v2bridge_upstream_items_dropped_total{operation="ApplicationsSearch"} 1');
  });

  it('shows no summary block made only of nulls, and no real-user monitoring without browser values', async () => {
    const empty = { responseTimeAverage: null, throughput: null, errorRate: null, apdexScore: null, hostCount: null, instanceCount: null };
    const { gateway } = await gatewayOn(afterAccounts((req, res) =>
      PAGE_DETAIL_OPERATIONS.has(req.operationName ?? '') ? json(res, 200, emptyPageDetails()) :
      json(res, 200, { data: { actor: { entitySearch: { count: 1, results: { nextCursor: null, entities: [entity(1, { apmSummary: empty, apmBrowserSummary: { pageLoadTimeAverage: null, pageLoadThroughput: null } })] } } } } }),
    ));
    const app = ((await get(gateway)).body as unknown as { applications: Array<Record<string, unknown>> }).applications[0];
    expect(app).not.toHaveProperty('application_summary');
    expect(app).not.toHaveProperty('end_user_summary');
    expect(app).toMatchObject({ settings: { enable_real_user_monitoring: false } });
  });
});
