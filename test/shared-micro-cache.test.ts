import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type GatewayMetrics } from '../src/ops/metrics.ts';
import { localState, openSharedState, type OpenedState } from '../src/state/open.ts';
import { SharedReadLayer, type SharedRead, type Sized } from '../src/upstream/micro-cache.ts';
import { createNerdGraphClient } from '../src/upstream/client.ts';
import type { OperationDocuments } from '../src/upstream/documents.ts';
import { UpstreamError } from '../src/upstream/errors.ts';
import { json, startFakeUpstream } from './support/fake-upstream.ts';
import { redisAvailable, startRedis, type TestRedis } from './support/redis.ts';

/**
 * The micro-cache's layer across replicas, finer than the two-process test can show: two
 * "replicas" here are two shared states (two Redis connections) with the same secret. What
 * one replica read answers the other; failures are never stored; a holder that fails or dies
 * does not leave the others waiting; a write makes every earlier entry unservable; nothing
 * key-shaped is ever stored.
 */
const hasRedis = redisAvailable();
const SECRET = 'micro-cache-test-secret-0123456789abcdef';
const KEY = 'NRAK-MICROSHAREDTESTKEY0001';

async function opened(redis: TestRedis): Promise<OpenedState> {
  const state = openSharedState({ redisUrl: redis.url, secret: SECRET, timeoutMs: 2_000, probeMs: 50 }, createMetrics());
  for (let i = 0; i < 200 && state.state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(state.state.status().state).toBe('shared');
  return state;
}

function layerOn(shared: OpenedState, metrics: GatewayMetrics, lockTtlMs = 2_000): SharedReadLayer {
  return new SharedReadLayer({ state: shared.state, keyOf: shared.keyOf, ttlMs: 5_000, lockTtlMs, metrics, pollMs: 5 });
}

const lookups = async (metrics: GatewayMetrics, result: string): Promise<number> =>
  (await metrics.cacheLookups.get()).values.filter((v) => v.labels.cache === 'micro-shared' && v.labels.result === result).reduce((n, v) => n + v.value, 0);

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const never = new AbortController().signal;

describe.skipIf(!hasRedis)('the micro-cache across replicas (SharedReadLayer on Redis)', () => {
  let redis: TestRedis;
  let one: OpenedState;
  let two: OpenedState;
  let unique = 0;
  const readOf = (operation = 'ReadSomething'): SharedRead => ({
    identity: one.identityOf(KEY),
    operation,
    variables: JSON.stringify({ n: ++unique }),
    apiKey: KEY,
  });

  beforeAll(async () => {
    redis = await startRedis();
    [one, two] = await Promise.all([opened(redis), opened(redis)]);
  });
  afterAll(async () => {
    await one?.state.close();
    await two?.state.close();
    await redis?.stop();
  });

  it('answers a read once for both replicas: the other waits for the holder, then reads from Redis', async () => {
    const metrics = [createMetrics(), createMetrics()] as const;
    const layers = [layerOn(one, metrics[0]), layerOn(two, metrics[1])];
    const read = readOf();
    let sent = 0;
    const send = async (): Promise<Sized<{ n: number }>> => {
      sent++;
      await delay(100);
      return { data: { n: sent }, bytes: 7 };
    };
    const answers = await Promise.all([layers[0]?.read(read, send, never), layers[1]?.read(read, send, never)]);
    expect(sent).toBe(1);
    expect(answers.map((a) => a?.data)).toEqual([{ n: 1 }, { n: 1 }]);
    // And a later read on either is a hit, still without sending.
    expect((await layers[1]?.read(read, send, never))?.data).toEqual({ n: 1 });
    expect(sent).toBe(1);
    const counted = async (result: string): Promise<number> => (await lookups(metrics[0], result)) + (await lookups(metrics[1], result));
    expect({ miss: await counted('miss'), coalesced: await counted('coalesced'), hit: await counted('hit') }).toEqual({ miss: 1, coalesced: 1, hit: 1 });
  });

  it('never stores a failed answer, and a waiter whose holder failed sends itself at once', async () => {
    const layers = [layerOn(one, createMetrics()), layerOn(two, createMetrics())];
    const read = readOf();
    let sent = 0;
    const failing = async (): Promise<Sized<object>> => {
      sent++;
      await delay(50);
      throw new UpstreamError('upstream_failure', 'NerdGraph failed');
    };
    const outcomes = await Promise.allSettled([layers[0]?.read(read, failing, never), layers[1]?.read(read, failing, never)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    // Both sent: the holder's failure is not the waiter's answer, nor kept for anyone.
    expect(sent).toBe(2);
    const fine = async (): Promise<Sized<object>> => {
      sent++;
      return { data: { fine: true }, bytes: 13 };
    };
    expect((await layers[0]?.read(read, fine, never))?.data).toEqual({ fine: true });
    expect(sent).toBe(3);
  });

  it('does not leave waiters on a holder that died: they send once its lock lapses', async () => {
    const layer = layerOn(two, createMetrics());
    const read = readOf();
    // A replica took the lock and died: nothing will ever be stored, the lock lapses in 150 ms.
    await one.state.set(one.keyOf('micro-lock', '', read.identity, read.operation, read.variables), 'dead-replica', 150, { onlyIfAbsent: true });
    let sent = 0;
    const started = Date.now();
    const answer = await layer.read(read, async () => ({ data: { sent: ++sent }, bytes: 10 }), never);
    expect(answer.data).toEqual({ sent: 1 });
    // It waited for the lock rather than sending at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('stops serving every entry read before a write through any replica, and tells every replica', async () => {
    const layers = [layerOn(one, createMetrics()), layerOn(two, createMetrics())];
    let told = 0;
    const stop = layers[1]?.onWrite(() => told++);
    const read = readOf();
    let sent = 0;
    const send = async (): Promise<Sized<{ sent: number }>> => ({ data: { sent: ++sent }, bytes: 10 });
    expect((await layers[0]?.read(read, send, never))?.data).toEqual({ sent: 1 });
    expect((await layers[1]?.read(read, send, never))?.data).toEqual({ sent: 1 });
    await layers[0]?.written();
    // The entry is still in Redis, but of the generation before the write: not served.
    expect((await layers[1]?.read(read, send, never))?.data).toEqual({ sent: 2 });
    expect((await layers[0]?.read(read, send, never))?.data).toEqual({ sent: 2 });
    for (let i = 0; i < 100 && told === 0; i++) await delay(5);
    expect(told).toBeGreaterThanOrEqual(1);
    stop?.();
  });

  it('keeps answers quoting a key out of Redis, and no Redis key or value holds a key', async () => {
    const layer = layerOn(one, createMetrics());
    const read = readOf();
    let sent = 0;
    const quoting = async (): Promise<Sized<object>> => ({ data: { note: `key ${KEY}`, other: 'NRII-SOMEINGESTKEY', n: ++sent }, bytes: 60 });
    await layer.read(read, quoting, never);
    await layer.read(read, quoting, never);
    expect(sent).toBe(2);
    const inspect = redis.inspect();
    const keys = await inspect.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).toMatch(/^v2b:[a-z-]+:[A-Za-z0-9_-]{32}$/);
      const type = await inspect.type(key);
      const value = type === 'string' ? await inspect.get(key) : JSON.stringify(await inspect.hgetall(key));
      expect(value ?? '').not.toMatch(/NR(AK|AA|II|JS|IQ|SP|AL)-/i);
    }
  });
});

describe.skipIf(!hasRedis)('the NerdGraph client with a shared micro-cache', () => {
  const documents: OperationDocuments = new Map([
    ['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }],
    ['ChangeSomething', { name: 'ChangeSomething', kind: 'mutation', text: 'mutation ChangeSomething { changeSomething { id } }' }],
  ]);
  let redis: TestRedis;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let version = 0;
  const calls = { read: 0, write: 0 };

  beforeAll(async () => {
    redis = await startRedis();
    upstream = await startFakeUpstream((request, res) => {
      if (request.query.startsWith('mutation')) {
        calls.write++;
        version++;
        json(res, 200, { data: { changeSomething: { id: version } } });
        return;
      }
      calls.read++;
      json(res, 200, { data: { actor: { user: { id: version } } } });
    });
  });
  afterAll(async () => {
    await upstream?.close();
    await redis?.stop();
  });

  const clientOn = (shared: OpenedState, metrics = createMetrics()) =>
    createNerdGraphClient({
      url: upstream.url,
      documents,
      metrics,
      timeoutMs: 2_000,
      retries: 0,
      microCache: { ttlMs: 60_000, maxBytes: 1_000_000, identityOf: shared.identityOf, shared },
    });

  it('serves one replica from what another read, and a write through either empties both', async () => {
    const [one, two] = await Promise.all([opened(redis), opened(redis)]);
    try {
      const a = clientOn(one);
      const b = clientOn(two);
      const read = (client: typeof a) => client.call<{ actor: { user: { id: number } } }>({ operation: 'ReadSomething', variables: {}, apiKey: KEY });
      const before = calls.read;
      expect((await read(a)).actor.user.id).toBe(version);
      expect((await read(b)).actor.user.id).toBe(version);
      expect(calls.read - before).toBe(1);
      await a.call({ operation: 'ChangeSomething', variables: {}, apiKey: KEY });
      // B's own in-process cache held the old answer too: the write reached it.
      expect((await read(b)).actor.user.id).toBe(version);
      expect((await read(a)).actor.user.id).toBe(version);
      expect(calls.read - before).toBe(2);
      // B's readWindow generation moved too (metric data keeps whole answers by it).
      expect(b.readWindow?.()?.generation).toBeGreaterThan(0);
    } finally {
      await one.state.close();
      await two.state.close();
    }
  });

  it('answers every read while Redis is killed and after it is back, never an error of its own', async () => {
    const one = await opened(redis);
    try {
      const client = clientOn(one);
      const read = (n: number) => client.call<{ actor: { user: { id: number } } }>({ operation: 'ReadSomething', variables: { n }, apiKey: KEY });
      expect((await read(1)).actor.user.id).toBe(version);
      await redis.kill();
      // From NerdGraph (the replica degraded to its memory), not a failure.
      for (let n = 2; n < 6; n++) expect((await read(n)).actor.user.id).toBe(version);
      await client.call({ operation: 'ChangeSomething', variables: {}, apiKey: KEY });
      expect((await read(1)).actor.user.id).toBe(version);
      await redis.restart();
      for (let i = 0; i < 200 && one.state.status().state !== 'shared'; i++) await delay(10);
      expect(one.state.status().state).toBe('shared');
      expect((await read(7)).actor.user.id).toBe(version);
    } finally {
      await one.state.close();
    }
  });

  it('keeps to this process without Redis (no shared layer, no micro-shared lookups)', async () => {
    const metrics = createMetrics();
    const client = clientOn(localState(), metrics);
    await client.call({ operation: 'ReadSomething', variables: { alone: true }, apiKey: KEY });
    expect(await lookups(metrics, 'miss')).toBe(0);
  });
});
