import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/budget/budgets.ts';
import { nrqlProfileOf } from '../../src/budget/nrql-cost.ts';
import { runWithRequestDue } from '../../src/upstream/request-due.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { writeFailure } from '../../src/routes/operations.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { localState } from '../../src/state/open.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { loadDocuments } from '../../src/upstream/documents.ts';
import { OverBudget, toV2Error } from '../../src/upstream/errors.ts';
import { V2Error } from '../../src/v2/errors.ts';
import { listenOnLoopback } from '../support/http.ts';
import { startUpstreamMeter, type UpstreamMeter } from '../support/upstream-meter.ts';

/**
 * NerdGraph's budgets in one gateway process (shared state in memory): a call over a budget
 * waits its turn within the request's deadline, else is answered v2's 429 with Retry-After and
 * never sent. The upstream meter counts what NerdGraph would have seen.
 */
const KEY = 'NRAK-SANDBOX-DEMO';
const FROZEN = Date.UTC(2026, 10, 22, 12, 0, 30);
const headers = { 'x-api-key': KEY };

let sandbox: RunningSandbox;
let appIds: number[] = [];

/** A relay that holds every call until `open()`: what is in flight stays in flight, with no timing. */
async function startGate(target: string) {
  let release: () => void = () => undefined;
  let opened = Promise.resolve();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        await opened;
        const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': String(req.headers['api-key'] ?? '') }, body: Buffer.concat(chunks) });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(await upstream.text());
      })().catch(() => req.socket.destroy());
    });
  });
  const relay = await listenOnLoopback(server);
  return {
    url: `${relay.origin}/graphql`,
    close: relay.close,
    hold: () => {
      opened = new Promise((resolve) => (release = resolve));
    },
    open: () => release(),
  };
}

beforeAll(async () => {
  sandbox = await createSandbox({ seed: 42, apmApps: 20, now: () => FROZEN }).listen(0, '127.0.0.1');
  const list = (await (await fetch(`${sandbox.url}/v2/applications.json`, { headers })).json()) as { applications: { id: number }[] };
  appIds = list.applications.map((app) => app.id);
  expect(appIds.length).toBeGreaterThan(3);
});
afterAll(async () => {
  await sandbox.close();
});

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of opened.splice(0)) await thing.close();
});

async function gatewayOn(nerdgraphUrl: string, env: Record<string, string>, logs?: string[]): Promise<BuiltGateway> {
  const quiet = new Writable({ write: (chunk: Buffer, _encoding, done) => (logs?.push(...chunk.toString().split('\n').filter(Boolean)), done()) });
  const config = loadConfig({
    NERDGRAPH_URL: nerdgraphUrl,
    LEGACY_REST_URL: sandbox.url,
    MICRO_CACHE_MS: '0',
    UPSTREAM_RETRIES: '0',
    ...env,
  });
  const gateway = await buildGateway(config, { logger: createLogger(logs === undefined ? 'silent' : 'info', quiet), now: () => FROZEN });
  opened.push(gateway);
  return gateway;
}

async function meterOn(delayMs = 0): Promise<UpstreamMeter> {
  const meter = await startUpstreamMeter(`${sandbox.url}/graphql`, { delayMs });
  opened.push(meter);
  return meter;
}

const get = async (gateway: BuiltGateway, path: string): Promise<Response> => gateway.app.request(path, { headers });

/** The `degraded` notes of the request log lines, in order. */
const degradedIn = (logs: readonly string[]): string[] => logs.flatMap((line) => (JSON.parse(line) as { degraded?: string }).degraded ?? []);

async function counter(gateway: BuiltGateway, budget: string, result: string): Promise<number> {
  const metric = (await gateway.metrics.registry.getSingleMetric('v2bridge_budget_decisions_total')?.get())?.values ?? [];
  return metric.filter((v) => v.labels.budget === budget && v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
}

describe('concurrency per key', () => {
  it('keeps at most NERDGRAPH_CONCURRENCY_PER_KEY calls in flight, and queues the rest to a 200', async () => {
    const meter = await meterOn(100);
    const gateway = await gatewayOn(meter.url, { NERDGRAPH_CONCURRENCY_PER_KEY: '2', REQUEST_DEADLINE_MS: '20000' });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => get(gateway, `/v2/applications/${appIds[i % appIds.length]}.json`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(meter.peakInFlight(KEY)).toBe(2);
    expect(await counter(gateway, 'concurrency', 'queued')).toBeGreaterThan(0);
    expect(await counter(gateway, 'concurrency', 'refused')).toBe(0);
    expect(await gateway.metrics.registry.getSingleMetric('v2bridge_nerdgraph_in_flight')?.get()).toMatchObject({ values: [{ value: 0 }] });
  });

  // With the micro-cache on, the queued call is a shared load that a waiter's deadline would overtake (a 504): it leaves first.
  it.each(['0', '1000'])('answers 429 with Retry-After, never a 5xx, to calls that cannot be admitted before the deadline, and never sends them (MICRO_CACHE_MS=%s)', async (microCacheMs) => {
    const gate = await startGate(`${sandbox.url}/graphql`);
    opened.push(gate);
    const meter = await startUpstreamMeter(gate.url);
    opened.push(meter);
    const gateway = await gatewayOn(meter.url, { NERDGRAPH_CONCURRENCY_PER_KEY: '2', REQUEST_DEADLINE_MS: '1500', MICRO_CACHE_MS: microCacheMs });
    // The key's accounts are looked up once, before the burst.
    expect((await get(gateway, `/v2/applications/${appIds[0]}.json`)).status).toBe(200);
    meter.resetCounts();
    gate.hold();
    const statuses: number[] = [];
    const answers = Array.from({ length: 10 }, (_, i) =>
      // Not the warm-up's app: with the micro-cache on, that read would be answered from it, unadmitted.
      get(gateway, `/v2/applications/${appIds[(i + 1) % appIds.length]}.json`).then(async (answer) => {
        statuses.push(answer.status);
        // Two calls hold the key's slots until the eight others have been answered.
        if (statuses.length === 8) gate.open();
        return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body: await answer.text() };
      }),
    );
    const done = await Promise.all(answers);
    const refused = done.filter((answer) => answer.status === 429);
    expect(done.filter((answer) => answer.status === 200)).toHaveLength(2);
    expect(refused).toHaveLength(8);
    for (const answer of refused) {
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(answer.body)).toEqual({ error: { title: "NerdGraph's limit of 2 concurrent requests for this API key is in use; nothing was sent, retry later" } });
    }
    // Only the two admitted calls reached NerdGraph.
    expect(meter.calls('ApplicationByGuid')).toBe(2);
    expect(meter.peakInFlight(KEY)).toBe(2);
    expect(await counter(gateway, 'concurrency', 'refused')).toBe(8);
  });
});

describe('NRQL budgets', () => {
  const deployments = (id: number | undefined): string => `/v2/applications/${id}/deployments.json`;

  it('refuses the call past NRQL_PER_ACCOUNT_PER_MINUTE with 429 + Retry-After, unsent', async () => {
    const meter = await meterOn();
    const gateway = await gatewayOn(meter.url, { NRQL_PER_ACCOUNT_PER_MINUTE: '3' });
    for (const id of appIds.slice(0, 3)) expect((await get(gateway, deployments(id))).status).toBe(200);
    const over = await get(gateway, deployments(appIds[3]));
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(((await over.json()) as { error: { title: string } }).error.title).toMatch(/budget of 3 NRQL queries per minute for account \d+ is spent; nothing was sent/);
    expect(meter.calls('ApplicationDeployments')).toBe(3);
    // Reads without NRQL spend nothing of it.
    expect((await get(gateway, '/v2/browser_applications.json')).status).toBe(200);
    expect(await counter(gateway, 'nrql_account', 'refused')).toBe(1);
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(3);
  });

  it("never refuses an application read for its end-user apdex score: the score spends one NRQL per app a minute, and goes when the NRQL budget is spent", async () => {
    const meter = await meterOn();
    const gateway = await gatewayOn(meter.url, { NRQL_PER_ACCOUNT_PER_MINUTE: '2', MICRO_CACHE_MS: '0' });
    const show = async (id: number | undefined) => {
      const answer = await get(gateway, `/v2/applications/${id}.json`);
      return { status: answer.status, body: (await answer.json()) as { application: { id: number; end_user_summary?: { apdex_score: number | null } } } };
    };
    // The first show of each app scores it (1 NRQL); shows of it within the minute reuse that score.
    const first = await show(appIds[0]);
    expect(first.status).toBe(200);
    for (let i = 0; i < 3; i++) expect(await show(appIds[0])).toEqual(first);
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(1);
    expect((await show(appIds[1])).status).toBe(200);
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(2);
    // The budget is spent: a third app is still shown, with no score, and nothing over budget was sent.
    const unscored = await show(appIds[2]);
    expect(unscored.status).toBe(200);
    expect(unscored.body.application.id).toBe(appIds[2]);
    if (unscored.body.application.end_user_summary) expect(unscored.body.application.end_user_summary.apdex_score).toBeNull();
    expect(await counter(gateway, 'nrql_account', 'refused')).toBe(1);
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(2);
  });

  it('logs the show read without its end-user apdex score as degraded, once the NRQL budget is spent', async () => {
    const logs: string[] = [];
    const gateway = await gatewayOn(`${sandbox.url}/graphql`, { NRQL_PER_ACCOUNT_PER_MINUTE: '2', MICRO_CACHE_MS: '0' }, logs);
    for (const id of appIds.slice(0, 2)) expect((await get(gateway, `/v2/applications/${id}.json`)).status).toBe(200);
    expect(degradedIn(logs)).toEqual([]);
    expect((await get(gateway, `/v2/applications/${appIds[2]}.json`)).status).toBe(200);
    expect(degradedIn(logs)).toEqual([expect.stringMatching(/^ApplicationByGuid actor\.account\.endUser failed \(no result\): end_user_summary\.apdex_score is null \(the NRQL budget is spent: not asked\)$/)]);
  });

  it('never refuses an application list page for its end-user apdex scores: the page is read again without them, logged degraded; the links NRQL still counts', async () => {
    const logs: string[] = [];
    const meter = await meterOn();
    const gateway = await gatewayOn(meter.url, { NRQL_PER_ACCOUNT_PER_MINUTE: '2', MICRO_CACHE_MS: '0' }, logs);
    type Page = { applications: { id: number; end_user_summary?: { apdex_score: number | null } }[] };
    const whole = (await (await get(gateway, '/v2/applications.json?exclude_links=true')).json()) as Page;
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(1);
    expect((await get(gateway, `/v2/applications/${appIds[0]}.json`)).status).toBe(200);
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(2);
    logs.length = 0;
    // The budget is spent: the page is answered, every score null, and no NRQL was sent over budget.
    const answer = await get(gateway, '/v2/applications.json?exclude_links=true');
    expect(answer.status).toBe(200);
    const page = (await answer.json()) as Page;
    expect(page.applications.map((app) => app.id)).toEqual(whole.applications.map((app) => app.id));
    expect(whole.applications.some((app) => typeof app.end_user_summary?.apdex_score === 'number')).toBe(true);
    for (const app of page.applications) if (app.end_user_summary) expect(app.end_user_summary.apdex_score).toBeNull();
    expect(page).toEqual(JSON.parse(JSON.stringify(whole), (key, value: unknown) => (key === 'end_user_summary' && value !== null && typeof value === 'object' ? { ...value, apdex_score: null } : value)));
    expect(await counter(gateway, 'nrql_account', 'immediate')).toBe(2);
    expect(degradedIn(logs)).toEqual([expect.stringMatching(/^ApplicationsBrowserApdex actor\.account\.endUser failed \(no result\): end_user_summary\.apdex_score is null \(the NRQL budget is spent: not asked\)$/)]);
    // Not cached as whole: the next page read asks again.
    const sent = meter.calls('ApplicationsBrowserApdex');
    expect((await get(gateway, '/v2/applications.json?exclude_links=true')).status).toBe(200);
    expect(meter.calls('ApplicationsBrowserApdex')).toBe(sent + 1);
    // With links, the links NRQL is no optional part: the page is refused.
    const withLinks = await get(gateway, '/v2/applications.json');
    expect(withLinks.status).toBe(429);
    expect(Number(withLinks.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('refuses the same NRQL past IDENTICAL_QUERY_PER_MINUTE, while other queries still go', async () => {
    const meter = await meterOn();
    const gateway = await gatewayOn(meter.url, { IDENTICAL_QUERY_PER_MINUTE: '2' });
    expect((await get(gateway, deployments(appIds[0]))).status).toBe(200);
    expect((await get(gateway, deployments(appIds[0]))).status).toBe(200);
    const over = await get(gateway, deployments(appIds[0]));
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await over.json()) as { error: { title: string } }).error.title).toMatch(/already sent 2 times this minute with this API key/);
    expect(meter.calls('ApplicationDeployments')).toBe(2);
    expect((await get(gateway, deployments(appIds[1]))).status).toBe(200);
    expect(meter.calls('ApplicationDeployments')).toBe(3);
    expect(await counter(gateway, 'identical_query', 'refused')).toBe(1);
  });

  it('costs a document one per nrql field it selects', () => {
    const documents = loadDocuments();
    const cost = (name: string): number => nrqlProfileOf(documents.get(name) as { text: string }).queries;
    expect(cost('ApplicationMetricData')).toBe(2);
    expect(cost('ApplicationDeployments')).toBe(1);
    expect(cost('AlertNrqlConditions')).toBe(0);
    expect(nrqlProfileOf(documents.get('ApplicationMetricData') as { text: string }).nrqlVariables).toEqual(['data', 'known']);
  });
});

describe('the queue', () => {
  it("leaves before the request's deadline, known only to the request, so the 429 is answered before a 504 could be", async () => {
    const shared = localState();
    const metrics = createMetrics();
    const budget = createBudgets({ ...shared, limits: { concurrencyPerKey: 1, nrqlPerAccountPerMinute: 10, identicalQueryPerMinute: 10 }, metrics, callBoundMs: 10_000 });
    const held = await shared.state.acquireLease(shared.keyOf('concurrency', shared.identityOf(KEY)), 1, 10_000);
    expect(held).toBeDefined();
    // The call's own signal fires later than the request's deadline (as a shared load's does).
    const signal = AbortSignal.timeout(3_000);
    const due = performance.now() + 300;
    const outcome = await runWithRequestDue(
      () => due,
      () => budget.admit({ operation: 'ApplicationByGuid', variables: {}, apiKey: KEY }, { name: 'ApplicationByGuid', text: 'query ApplicationByGuid { actor { user { id } } }', kind: 'query' }, signal),
    ).then(
      () => 'admitted',
      (error: unknown) => (error instanceof OverBudget ? `refused, signal fired: ${signal.aborted}` : String(error)),
    );
    expect(outcome).toBe('refused, signal fired: false');
    await held?.release();
  });
});

describe('mutations', () => {
  it('are never sent when refused: the write answers 429, nothing was changed', async () => {
    const received: string[] = [];
    const upstream = await listenOnLoopback(
      createServer((req, res) => {
        received.push(String(req.url));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{}}');
      }),
    );
    opened.push(upstream);
    const shared = localState();
    const metrics = createMetrics();
    const budget = createBudgets({ ...shared, limits: { concurrencyPerKey: 1, nrqlPerAccountPerMinute: 10, identicalQueryPerMinute: 10 }, metrics, callBoundMs: 300 });
    const client = createNerdGraphClient({ url: `${upstream.origin}/graphql`, documents: loadDocuments(), metrics, timeoutMs: 300, retries: 2, budget });
    // Another call of the same key holds the only slot.
    const held = await shared.state.acquireLease(shared.keyOf('concurrency', shared.identityOf(KEY)), 1, 10_000);
    expect(held).toBeDefined();
    const error: unknown = await client
      .call({ operation: 'DeploymentCreate', variables: {}, apiKey: KEY, signal: AbortSignal.timeout(300) })
      .then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OverBudget);
    expect(received).toEqual([]);
    const answer = writeFailure(error, { unconfirmedTitle: 'unconfirmed' });
    expect(answer).toBeInstanceOf(V2Error);
    expect((answer as V2Error).status).toBe(429);
    expect(toV2Error(error as OverBudget).headers).toEqual({ 'retry-after': '1' });
    // The slot freed, the same write goes at once, exactly once.
    await held?.release();
    // The fake NerdGraph confirms with an (empty) result: the write succeeds, it is not merely sent.
    expect(await client.call({ operation: 'DeploymentCreate', variables: {}, apiKey: KEY, signal: AbortSignal.timeout(300) })).toEqual({});
    expect(received).toHaveLength(1);
  });
});
