import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoalescingCache } from '../../src/cache/coalescing-cache.ts';
import { CallerCache } from '../../src/caller/caller-cache.ts';
import { SingleFlight } from '../../src/cache/single-flight.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { MetricNamesMapping, TargetWithin } from '../../src/routes/mapping.ts';
import { EntityKinds } from '../../src/routes/entity-ref.ts';
import { createTargetResolver } from '../../src/routes/timeslice-target.ts';
import type { RouteDeps, RouteRequest } from '../../src/routes/types.ts';
import type { UpstreamCall } from '../../src/upstream/client.ts';
import { loadConfig } from '../../src/ops/config.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { userTagsOf } from '../../sandbox/tagging.ts';
import { writeFailure } from '../../src/routes/operations.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { V2Error } from '../../src/v2/errors.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream, type FakeRequest } from '../support/fake-upstream.ts';
import { NOTE_TAG_KEY, WidgetTitles } from '../support/fixture-mappings/widgets/widgets.ts';
import { FIXTURE_OPERATIONS, WIDGET } from '../support/fixture-routes.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../support/harness.ts';
import { serveOnLoopback } from '../support/http.ts';
import { eventually, openRequest, seriesSum, startLatencyProxy } from '../support/lifecycle.ts';

/**
 * The life of a request upstream: one deadline (REQUEST_DEADLINE_MS) for every NerdGraph call a
 * request makes, and no upstream work for a client that left, unless another client shares it.
 */

/** Generous: the timing assertions are about the deadline, not about speed. */
const MARGIN_MS = 2_000;

/** Answers unless the gateway already hung up. */
function answerIfOpen(res: ServerResponse, body: unknown): void {
  if (!res.destroyed && !res.socket?.destroyed) json(res, 200, body);
}

describe('a client that disconnects', () => {
  // Answers held back, per key, until the test releases them (or the gateway hangs up).
  const held: Array<{ key: string; res: ServerResponse }> = [];
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let gateway: TestGateway;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;
  const received = (operation: string, key?: string): FakeRequest[] =>
    upstream.received.filter((r) => r.operationName === operation && (key === undefined || r.headers['api-key'] === key));

  function release(key: string): void {
    for (const entry of held.filter((h) => h.key === key)) {
      answerIfOpen(entry.res, accountsAnswer([PRIMARY_ACCOUNT]));
    }
  }

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, res) => {
      const key = String(request.headers['api-key']);
      if (request.operationName === 'AccessibleAccounts') {
        if (key === DEMO_KEY) return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
        return void held.push({ key, res });
      }
      if (request.operationName === FIXTURE_OPERATIONS.widget && key === 'NRAK-LIFECYCLE-SHARED') {
        const id = Number(/APPLICATION\|(\d+)/.exec(Buffer.from(String(request.variables.guid), 'base64').toString())?.[1]);
        return json(res, 200, { data: { actor: { entity: apmEntity(PRIMARY_ACCOUNT, id) } } });
      }
      // Anything else never answers: only the gateway can end it.
    });
    // Retries on: an aborted call must not be tried again. The deadline is far away.
    gateway = await createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures', retries: 2, timeoutMs: 60_000 });
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(async () => {
    await served.close();
    await upstream.close();
  });

  it('aborts the upstream calls of 200 abandoned requests, and none is answered or retried', async () => {
    // Accounts first (a malformed id is a 404 after the account is resolved): then one call per request.
    const warm = openRequest(`${served.url}/v2/fixture_widgets/x.json`, { 'X-Api-Key': DEMO_KEY });
    expect((await warm.answer).status).toBe(404);
    const hitsBefore = await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'hit' });
    const requests = Array.from({ length: 200 }, (_, i) => openRequest(`${served.url}/v2/fixture_widgets/${1000 + i}.json`, { 'X-Api-Key': DEMO_KEY }));
    // Every request is inside the gateway (its account resolved) and calls are reaching NerdGraph.
    await eventually(
      async () => (await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'hit' })) - hitsBefore === 200 && received(FIXTURE_OPERATIONS.widget).length > 0,
      '200 requests in flight',
    );
    for (const { req } of requests) req.destroy();

    await eventually(async () => (await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'client_closed' })) === 200, '200 cancellations counted');
    await eventually(() => upstream.abortedCount() === received(FIXTURE_OPERATIONS.widget).length, 'every call NerdGraph received was hung up');
    const calls = await seriesSum(gateway, 'v2bridge_upstream_requests_total', { operation: FIXTURE_OPERATIONS.widget });
    const cancelled = await seriesSum(gateway, 'v2bridge_upstream_requests_total', { operation: FIXTURE_OPERATIONS.widget, outcome: 'cancelled' });
    // Each call made was cancelled (none ok, none timed out, none retried); one per request at most.
    expect(cancelled).toBe(calls);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(200);
    expect(received(FIXTURE_OPERATIONS.widget).length).toBeLessThanOrEqual(calls);
    // The access metrics say the clients left (nginx's 499), not that NerdGraph failed.
    expect(await seriesSum(gateway, 'v2bridge_http_requests_total', { route: WIDGET, status: '499' })).toBe(200);
    expect(await seriesSum(gateway, 'v2bridge_http_requests_total', { status: '504' })).toBe(0);
  });

  it('aborts a call 200 requests shared once all of them left, and sends none of their follow-up calls', async () => {
    const key = 'NRAK-LIFECYCLE-GONE';
    const coalescedBefore = await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'coalesced' });
    const closedBefore = await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'client_closed' });
    const abortedBefore = upstream.abortedCount();
    const requests = Array.from({ length: 200 }, (_, i) => openRequest(`${served.url}/v2/fixture_widgets/${2000 + i}.json`, { 'X-Api-Key': key }));
    await eventually(
      async () => (await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'coalesced' })) - coalescedBefore === 199,
      '200 requests waiting on one accounts call',
    );
    expect(received('AccessibleAccounts', key)).toHaveLength(1);
    for (const { req } of requests) req.destroy();
    await eventually(async () => (await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'client_closed' })) - closedBefore === 200, 'all 200 gone');
    await eventually(() => upstream.abortedCount() === abortedBefore + 1, 'the shared call hung up');
    // Were it still open, this answer would let 200 show calls follow; nothing may follow.
    release(key);
    expect(await seriesSum(gateway, 'v2bridge_upstream_requests_total', { operation: 'AccessibleAccounts', outcome: 'cancelled' })).toBe(1);
    expect(received(FIXTURE_OPERATIONS.widget, key)).toHaveLength(0);
  });

  it('keeps a shared call going while one of its requests still waits', async () => {
    const key = 'NRAK-LIFECYCLE-SHARED';
    const closedBefore = await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'client_closed' });
    const coalescedBefore = await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'coalesced' });
    const abortedBefore = upstream.abortedCount();
    const leaving = openRequest(`${served.url}/v2/fixture_widgets/3001.json`, { 'X-Api-Key': key });
    await eventually(() => received('AccessibleAccounts', key).length === 1, 'the accounts call sent');
    const staying = openRequest(`${served.url}/v2/fixture_widgets/3002.json`, { 'X-Api-Key': key });
    await eventually(
      async () => (await seriesSum(gateway, 'v2bridge_cache_lookups_total', { cache: 'accounts', result: 'coalesced' })) > coalescedBefore,
      'the second request joined the call',
    );
    leaving.req.destroy();
    await eventually(async () => (await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'client_closed' })) > closedBefore, 'the first request gone');
    expect(upstream.abortedCount()).toBe(abortedBefore);

    release(key);
    const answer = await staying.answer;
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { widget: { id: number } }).widget.id).toBe(3002);
    expect(received('AccessibleAccounts', key)).toHaveLength(1);
    // Only the request still there made its follow-up call.
    expect(received(FIXTURE_OPERATIONS.widget, key)).toHaveLength(1);
  });
});

describe('one deadline per request (REQUEST_DEADLINE_MS)', () => {
  it('answers v2 504 at the deadline however slow NerdGraph is, retries included', async () => {
    // NerdGraph never answers (a minute is "never" here); the client's own per-call bound is further still.
    const upstream = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
    });
    const deadlineMs = 400;
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures', retries: 3, timeoutMs: 60_000, deadlineMs });
    try {
      const started = performance.now();
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'X-Api-Key': DEMO_KEY } });
      const elapsed = performance.now() - started;
      expect(response.status).toBe(504);
      expect(await response.json()).toEqual({ error: { title: 'NerdGraph did not answer in time' } });
      expect(elapsed).toBeLessThan(deadlineMs + MARGIN_MS);
      expect(await seriesSum(gateway, 'v2bridge_requests_cancelled_total', { reason: 'deadline' })).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it('covers all of a request\'s calls together: two calls each within the deadline, together past it, are cut', async () => {
    const upstream = await startFakeUpstream((request, res) => {
      const answer = request.operationName === 'AccessibleAccounts' ? accountsAnswer([PRIMARY_ACCOUNT]) : { data: { actor: { entity: apmEntity(PRIMARY_ACCOUNT, 1) } } };
      setTimeout(() => answerIfOpen(res, answer), 400);
    });
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures', timeoutMs: 60_000, deadlineMs: 600 });
    try {
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'X-Api-Key': DEMO_KEY } });
      expect(response.status).toBe(504);
      expect(upstream.received.map((r) => r.operationName)).toEqual(['AccessibleAccounts', FIXTURE_OPERATIONS.widget]);
    } finally {
      await upstream.close();
    }
  });
});

describe('a note (a read of the widget, then the mutation) under 2 s of NerdGraph latency per call', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let app: SandboxApp;
  let proxy: Awaited<ReturnType<typeof startLatencyProxy>>;
  const LATENCY_MS = 2_000;

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 10 });
    app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT) as SandboxApp;
    // Relays to the sandbox, each exchange LATENCY_MS late (the sandbox applies a write at once).
    proxy = await startLatencyProxy(sandbox.graphqlUrl, LATENCY_MS);
  });
  afterAll(async () => {
    await proxy.close();
    await sandbox.close();
  });

  const notesPath = () => `/v2/fixture_widgets/${app.id}/notes.json`;
  async function note(gateway: TestGateway, text: string) {
    const response = await gateway.app.request(notesPath(), {
      method: 'POST',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ note: { text } }),
    });
    return { status: response.status, body: (await response.json()) as { error?: { title: string } } };
  }
  /** Whether the sandbox holds the note (its tag value on the widget's application). */
  const records = (text: string): number => (userTagsOf(app)[NOTE_TAG_KEY] ?? []).filter((value) => value === text).length;
  const gatewayOnProxy = (deadlineMs: number) => createTestGateway({ nerdgraphUrl: proxy.url, routes: 'fixtures', retries: 2, timeoutMs: 60_000, deadlineMs });
  // The accounts read is a call too: made once, by a request of its own.
  async function warmedGateway(deadlineMs: number): Promise<TestGateway> {
    const gateway = await gatewayOnProxy(deadlineMs);
    expect((await gateway.app.request('/v2/fixture_widgets/x.json', { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(404);
    return gateway;
  }

  it('sends no mutation when the deadline passes before it, and says nothing was recorded', async () => {
    const gateway = await gatewayOnProxy(1_000);
    const answer = await note(gateway, 'lifecycle-early');
    expect(answer).toEqual({ status: 504, body: { error: { title: 'NerdGraph did not answer in time' } } });
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(0);
    expect(records('lifecycle-early')).toBe(0);
  });

  it('is recorded once when both calls fit in the deadline', async () => {
    const gateway = await warmedGateway(6_000);
    const answer = await note(gateway, 'lifecycle-fits');
    expect(answer.status).toBe(201);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(1);
    expect(records('lifecycle-fits')).toBe(1);
  });

  it('answers "outcome unknown" at the deadline once the mutation was sent, and never sends it twice', async () => {
    const deadlineMs = 3_000;
    const gateway = await warmedGateway(deadlineMs);
    const started = performance.now();
    const answer = await note(gateway, 'lifecycle-cut');
    const elapsed = performance.now() - started;
    expect(answer).toEqual({ status: 504, body: { error: { title: WidgetTitles.noteUnconfirmed } } });
    expect(elapsed).toBeLessThan(deadlineMs + MARGIN_MS);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(1);
    // The sandbox applied it at once; only its answer was late.
    expect(records('lifecycle-cut')).toBe(1);
  });

  it('keeps a mutation already sent when its client leaves, and records its real outcome', async () => {
    const gateway = await warmedGateway(10_000);
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const { req } = openRequest(`${served.url}${notesPath()}`, { 'X-Api-Key': DEMO_KEY }, { method: 'POST', body: { note: { text: 'lifecycle-left' } } });
      // The sandbox applies the write as soon as it arrives; its answer is 2 s late. Leave then.
      await eventually(() => records('lifecycle-left') === 1, 'the mutation reached NerdGraph');
      req.destroy();
      await eventually(async () => (await seriesSum(gateway, 'v2bridge_http_requests_total', { method: 'POST' })) === 1, 'the write was logged');
      expect(await seriesSum(gateway, 'v2bridge_http_requests_total', { method: 'POST', status: '201' })).toBe(1);
      expect(await seriesSum(gateway, 'v2bridge_upstream_requests_total', { operation: FIXTURE_OPERATIONS.widgetNote, outcome: 'ok' })).toBe(1);
      expect(records('lifecycle-left')).toBe(1);
    } finally {
      await served.close();
    }
  });
});

describe('shared calls (SingleFlight, CoalescingCache)', () => {
  const gone = (name: string): AbortController => {
    const controller = new AbortController();
    controller.abort(Object.assign(new Error(name), { name }));
    return controller;
  };

  it('a waiter whose signal fires stops waiting at once; the work stops only when every waiter left', async () => {
    const flights = new SingleFlight<string>();
    let workSignal: AbortSignal | undefined;
    let finish: (value: string) => void = () => undefined;
    const work = (signal: AbortSignal) => {
      workSignal = signal;
      return new Promise<string>((resolve) => (finish = resolve));
    };
    const a = new AbortController();
    const b = new AbortController();
    const first = flights.run('k', work, a.signal);
    const second = flights.run('k', work, b.signal);
    expect(second.joined).toBe(true);
    a.abort(Object.assign(new Error('left'), { name: 'AbortError' }));
    await expect(first.promise).rejects.toThrow('left');
    expect(workSignal?.aborted).toBe(false);
    b.abort(new Error('also left'));
    await expect(second.promise).rejects.toThrow('also left');
    expect(workSignal?.aborted).toBe(true);
    expect((workSignal?.reason as Error).name).toBe('AbortError');
    // Abandoned work is not joined: the next caller starts afresh.
    const third = flights.run('k', work, new AbortController().signal);
    expect(third.joined).toBe(false);
    finish('done');
    expect(await third.promise).toBe('done');
  });

  it('a caller already gone starts nothing', async () => {
    const flights = new SingleFlight<string>();
    let started = 0;
    const { promise } = flights.run('k', async () => String(++started), gone('TimeoutError').signal);
    await expect(promise).rejects.toThrow('TimeoutError');
    expect(started).toBe(0);
  });

  it('a load survives the request that started it while another waits, and is cached', async () => {
    const cache = new CoalescingCache<{ n: number }>('test', createMetrics(), { max: 10, ttlMs: 60_000 });
    let loads = 0;
    let finish: () => void = () => undefined;
    // Like an upstream call, the load stops when its (shared) signal fires.
    const load = async (signal: AbortSignal) => {
      loads++;
      await new Promise<void>((resolve, reject) => {
        finish = resolve;
        signal.addEventListener('abort', () => reject(new Error('load aborted')), { once: true });
      });
      return { value: { n: loads } };
    };
    const leaving = new AbortController();
    const first = cache.get('k', load, leaving.signal);
    const second = cache.get('k', load, new AbortController().signal);
    leaving.abort(new Error('left'));
    await expect(first).rejects.toThrow('left');
    finish();
    expect(await second).toEqual({ n: 1 });
    expect(await cache.get('k', load, new AbortController().signal)).toEqual({ n: 1 });
    expect(loads).toBe(1);
  });
});

describe('loads a mapping starts through ctx.cache', () => {
  it('read under the shared signal: the request that started one may leave while another waits', async () => {
    const calls: Array<{ signal: AbortSignal; answer: (value: unknown) => void }> = [];
    const deps = {
      nerdgraph: { call: ({ signal }: UpstreamCall) => new Promise((resolve) => calls.push({ signal: signal as AbortSignal, answer: resolve })) },
      metrics: createMetrics(),
      now: () => 0,
      mutations: new Set<string>(),
      callerCache: new CallerCache(createMetrics(), () => 0),
    } as unknown as RouteDeps; // only what a target resolver uses
    const within: TargetWithin = {
      notFoundTitle: 'No host',
      // A directory-like read, remembered per caller and account, as mappings/hosts-and-instances/app-targets.ts does.
      resolve: async (ctx) => {
        const { read } = await ctx.cache.load('directory', async () => ({ value: { read: await ctx.read('Probe', {}) }, ttlMs: 60_000 }));
        return { scope: [], key: String(read), holds: () => true };
      },
    };
    const mapping = {
      operation: 'Probe',
      target: { entity: EntityKinds.apmApplication, notFoundTitle: 'No app', attribute: 'appId', value: 'id', within },
    } as unknown as MetricNamesMapping;
    const resolve = createTargetResolver(deps);
    const requestOf = (signal: AbortSignal) => ({ caller: { apiKey: 'NRAK-X', identity: 'id' }, accountId: 1, pathParams: { id: '7' }, signal }) as unknown as RouteRequest;
    const leaving = new AbortController();
    const first = resolve(mapping, requestOf(leaving.signal));
    const second = resolve(mapping, requestOf(new AbortController().signal));
    await eventually(() => calls.length === 1, 'one read for both');
    leaving.abort(new Error('left'));
    await expect(first).rejects.toThrow('left');
    expect(calls[0]?.signal.aborted).toBe(false);
    calls[0]?.answer('directory');
    expect((await second).key).toBe('7/directory');
    expect(calls).toHaveLength(1);
  });
});

describe('a mutation cut short after it was sent', () => {
  it('is an unknown outcome for every reason it was cut, a client leaving included', () => {
    const mapping = { unconfirmedTitle: 'may have been recorded' };
    for (const errorClass of ['cancelled', 'timeout', 'unavailable', 'upstream_failure'] as const) {
      const answer = writeFailure(new UpstreamError(errorClass, 'cut', { sent: true }), mapping);
      expect(answer, errorClass).toBeInstanceOf(V2Error);
      expect((answer as V2Error).kind).toBe('write_unconfirmed');
      expect((answer as V2Error).title).toBe('may have been recorded');
    }
  });
});

describe('REQUEST_DEADLINE_MS', () => {
  it('defaults to 10 s; UPSTREAM_TIMEOUT_MS is its former name, still accepted; the new name wins', () => {
    expect(loadConfig({}).requestDeadlineMs).toBe(10_000);
    expect(loadConfig({ REQUEST_DEADLINE_MS: '2500' }).requestDeadlineMs).toBe(2_500);
    expect(loadConfig({ UPSTREAM_TIMEOUT_MS: '3000' }).requestDeadlineMs).toBe(3_000);
    expect(loadConfig({ UPSTREAM_TIMEOUT_MS: '3000', REQUEST_DEADLINE_MS: '2500' }).requestDeadlineMs).toBe(2_500);
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: '0' })).toThrow(/REQUEST_DEADLINE_MS/);
    expect(() => loadConfig({ UPSTREAM_TIMEOUT_MS: '-5' })).toThrow(/UPSTREAM_TIMEOUT_MS/);
  });
});
