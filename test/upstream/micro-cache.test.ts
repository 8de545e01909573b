import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.ts';
import { ReadMicroCache } from '../../src/upstream/micro-cache.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import type { OperationDocuments } from '../../src/upstream/documents.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { collectGarbage } from '../support/collect-garbage.ts';
import { json, startFakeUpstream } from '../support/fake-upstream.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../support/harness.ts';

/**
 * MICRO_CACHE_MS: identical NerdGraph reads inside the window are answered once, per caller;
 * a write through the gateway is never followed by a read of the state before it; answers are
 * frozen, so a route that changed a shared answer would fail here (500) instead of corrupting
 * the next caller's answer.
 */
describe('the read micro-cache, through the gateway', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let cached: TestGateway;
  let plain: TestGateway;
  let appId: number;
  let liveId: number;

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 20 });
    // A window far longer than the test: expiry is lru-cache's, tested there.
    // The production deadline (10 s): with 5.5 s or less the name look-up is left out, and an
    // answer without it is never kept (nrql-timeout.ts).
    cached = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, microCacheMs: 600_000, timeoutMs: 10_000 });
    plain = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, timeoutMs: 10_000 });
    const apps = sandbox.sandbox.data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
    appId = (apps[0] as { id: number }).id;
    liveId = (apps.find((a) => a.reporting) as { id: number }).id;
  });
  afterAll(async () => {
    await sandbox.close();
  });

  const get = async (gateway: TestGateway, path: string, key = DEMO_KEY, headers: Record<string, string> = {}) => {
    const response = await gateway.app.request(path, { headers: { 'X-Api-Key': key, ...headers } });
    return { status: response.status, body: await response.text(), link: response.headers.get('link') };
  };

  it('answers identical reads once, and each caller from its own reads', async () => {
    const path = `/v2/applications/${appId}.json`;
    // The app's end-user apdex score, read with the first show and kept a minute, is the same for every read below.
    await get(cached, path);
    const before = await cached.upstreamCount('ApplicationByGuid');
    const answers = await Promise.all([1, 2, 3].map(() => get(cached, path)));
    for (let i = 0; i < 5; i++) answers.push(await get(cached, path));
    expect(new Set(answers.map((a) => `${a.status} ${a.body}`)).size).toBe(1);
    expect(answers[0]?.status).toBe(200);
    expect((await cached.upstreamCount('ApplicationByGuid')) - before).toBe(1);
    // Another key reading the same thing is not answered from the first key's reads.
    expect((await get(cached, path, MULTI_KEY, { 'X-Account-Id': String(PRIMARY_ACCOUNT) })).body).toBe(answers[0]?.body);
    expect((await cached.upstreamCount('ApplicationByGuid')) - before).toBe(2);
  });

  it('never answers a read after a write with the state before it', async () => {
    const path = `/v2/applications/${appId}.json`;
    await get(cached, path);
    const put = await cached.app.request(path, {
      method: 'PUT',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ application: { name: 'renamed-under-micro-cache' } }),
    });
    expect(put.status).toBe(200);
    const after = JSON.parse((await get(cached, path)).body) as { application: { name: string } };
    expect(after.application.name).toBe('renamed-under-micro-cache');
  });

  it('answers a repeated metric data request whole inside the window, and never across a write', async () => {
    const hits = async (): Promise<number> =>
      (await cached.metrics.cacheLookups.get()).values.filter((v) => v.labels.cache === 'metric-responses' && v.labels.result === 'hit').reduce((sum, v) => sum + v.value, 0);
    const path = `/v2/applications/${liveId}/metrics/data.json?names[]=HttpDispatcher&values[]=call_count&from=2026-11-22T11:00:00Z&to=2026-11-22T11:10:00Z`;
    const before = await hits();
    const first = await get(cached, path);
    const again = [await get(cached, path), await get(cached, path)];
    expect(first.status).toBe(200);
    expect(again.map((a) => a.body)).toEqual([first.body, first.body]);
    expect((await hits()) - before).toBe(2);
    // Another format or another caller is another answer.
    await get(cached, path.replace('data.json', 'data.xml'));
    await get(cached, path, MULTI_KEY, { 'X-Account-Id': String(PRIMARY_ACCOUNT) });
    expect((await hits()) - before).toBe(2);
    // A write through the gateway: the next request is computed again.
    const deployed = await cached.app.request(`/v2/applications/${liveId}/deployments.json`, {
      method: 'POST',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'micro-cache-write' } }),
    });
    expect(deployed.status).toBe(201);
    expect((await get(cached, path)).body).toBe(first.body);
    expect((await hits()) - before).toBe(2);
  });

  it('gives every read route the same answer as without it, twice (shared answers are never changed)', async () => {
    const window = 'from=2026-11-22T11:00:00Z&to=2026-11-22T11:30:00Z';
    const paths = [
      '/v2/applications.json',
      '/v2/applications.xml?filter[name]=a',
      `/v2/applications/${liveId}.json`,
      `/v2/applications/${liveId}/hosts.json`,
      `/v2/applications/${liveId}/instances.json`,
      `/v2/applications/${liveId}/metrics.json`,
      `/v2/applications/${liveId}/metrics/data.json?names[]=HttpDispatcher&names[]=Apdex&${window}`,
      `/v2/applications/${liveId}/metrics/data.xml?names[]=HttpDispatcher&summarize=true&${window}`,
      '/v2/key_transactions.json',
      '/v2/mobile_applications.json',
      '/v2/browser_applications.json',
    ];
    for (const path of paths) {
      const reference = await get(plain, path);
      expect(reference.status, path).toBe(200);
      for (let round = 0; round < 2; round++) {
        const answer = await get(cached, path);
        expect({ path, status: answer.status, link: answer.link }).toEqual({ path, status: 200, link: reference.link });
        expect(answer.body, path).toBe(reference.body);
      }
    }
  });
});

describe('ReadMicroCache', () => {
  const never = new AbortController().signal;
  const cacheOf = (maxBytes: number) => new ReadMicroCache({ ttlMs: 60_000, maxBytes, metrics: createMetrics() });

  it('keeps no answer larger than its whole byte bound, and freezes what it serves', async () => {
    const cache = cacheOf(100);
    let loads = 0;
    const load = async () => ({ data: { n: ++loads, nested: { list: [1] } }, bytes: 500 });
    await cache.read('big', load, never);
    const second = await cache.read<{ nested: { list: number[] } }>('big', load, never);
    expect(loads).toBe(2);
    expect(Object.isFrozen(second.nested.list)).toBe(true);
  });

  it('freezes every object and array of any parsed answer it keeps, however nested', async () => {
    const unfrozen = (value: unknown, path: string): string[] =>
      value === null || typeof value !== 'object' ? [] : [...(Object.isFrozen(value) ? [] : [path]), ...Object.entries(value).flatMap(([key, child]) => unfrozen(child, `${path}.${key}`))];
    await fc.assert(
      fc.asyncProperty(fc.json(), async (text) => {
        const cache = cacheOf(1_000_000);
        const parsed: unknown = JSON.parse(text);
        // An answer is an object (NerdGraph's { data }); its values are any JSON.
        const data = { data: parsed, list: [parsed, [parsed]] };
        await cache.read('k', async () => ({ data, bytes: text.length }), never);
        const kept = await cache.read('k', () => Promise.reject(new Error('not kept')), never);
        expect(unfrozen(kept, '$')).toEqual([]);
      }),
    );
  });

  it('does not store a read that was in flight across a write, nor let a later read join it', async () => {
    const cache = cacheOf(10_000);
    let release: () => void = () => undefined;
    let loads = 0;
    const slow = () =>
      new Promise<{ data: { n: number }; bytes: number }>((resolve) => {
        const n = ++loads;
        release = () => resolve({ data: { n }, bytes: 10 });
      });
    const first = cache.read('k', slow, never);
    cache.invalidate();
    const afterWrite = cache.read<{ n: number }>('k', async () => ({ data: { n: ++loads }, bytes: 10 }), never);
    release();
    expect(await first).toEqual({ n: 1 });
    expect(await afterWrite).toEqual({ n: 2 });
    expect(await cache.read<{ n: number }>('k', async () => ({ data: { n: ++loads }, bytes: 10 }), never)).toEqual({ n: 2 });
  });
});

describe('the micro-cache in the NerdGraph client', () => {
  const documents: OperationDocuments = new Map([
    ['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }],
  ]);
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let seen = 0;

  beforeAll(async () => {
    // The first call hangs for good (a black-holed connection); later ones answer at once.
    upstream = await startFakeUpstream((_request, res) => {
      if (++seen === 1) return;
      json(res, 200, { data: { actor: { user: { id: seen } } } });
    });
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('gives a shared call its own deadline, so callers that keep arriving are not held on a hung call', async () => {
    const metrics = createMetrics();
    const client = createNerdGraphClient({
      url: upstream.url,
      documents,
      metrics,
      timeoutMs: 200,
      retries: 0,
      microCache: { ttlMs: 200, maxBytes: 1_000_000, identityOf: (key) => `id-${key}` },
    });
    const outcomes: string[] = [];
    // A dashboard polling every 50 ms, each poll with a 400 ms deadline, for 1.5 s: the shared
    // call's own 200 ms deadline always fires before its first waiter would leave.
    for (let i = 0; i < 30; i++) {
      const signal = AbortSignal.timeout(400);
      void client.call({ operation: 'ReadSomething', variables: {}, apiKey: 'NRAK-POLL', signal }).then(
        () => outcomes.push('ok'),
        () => outcomes.push('failed'),
      );
      // A collection while the hung call waits (CI's did): its deadline must still fire.
      if (i === 1) collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(outcomes).toHaveLength(30);
    // Only the polls that joined the hung call in its first window fail; the rest are answered.
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThanOrEqual(20);
    const calls = await metrics.upstreamRequests.get();
    const timeouts = calls.values.filter((v) => v.labels.outcome === 'timeout').reduce((sum, v) => sum + v.value, 0);
    expect(timeouts).toBe(1);
  });

  it('answers a caller without a signal with the client\'s own timeout error', async () => {
    seen = 0;
    const client = createNerdGraphClient({
      url: upstream.url,
      documents,
      metrics: createMetrics(),
      timeoutMs: 200,
      retries: 0,
      microCache: { ttlMs: 1_000, maxBytes: 1_000_000, identityOf: (key) => `id-${key}` },
    });
    const error = await client.call({ operation: 'ReadSomething', variables: { n: 2 }, apiKey: 'NRAK-NOSIGNAL' }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).errorClass).toBe('timeout');
  });
});
