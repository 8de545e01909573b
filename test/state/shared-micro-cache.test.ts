import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { localState, openSharedState, type OpenedState } from '../../src/state/open.ts';
import type { Sized } from '../../src/upstream/micro-cache.ts';
import { SharedReadLayer, type SharedRead } from '../../src/upstream/shared-read-layer.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import type { OperationDocuments } from '../../src/upstream/documents.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { json, startFakeUpstream } from '../support/fake-upstream.ts';
import { redisAvailable, startRedis, type TestRedis, valuesOf } from '../support/redis.ts';

/**
 * The micro-cache's layer across replicas, finer than the two-process test can show: two
 * "replicas" here are two shared states (two Redis connections) with the same secret. What
 * one replica read answers the other; failures are never stored; a holder that fails or dies
 * leaves the others neither waiting past their deadline nor all sending at once; a write makes
 * every earlier entry unservable, even to a replica that never hears of it or cannot reach
 * Redis; nothing key-shaped is ever stored.
 */
const hasRedis = redisAvailable();
const SECRET = 'micro-cache-test-secret-0123456789abcdef';
const KEY = 'NRAK-MICROSHAREDTESTKEY0001';
const MAX_SHARED_BYTES = 4 * 1024 * 1024;

async function opened(url: string, timeoutMs = 2_000): Promise<OpenedState> {
  const state = openSharedState({ redisUrl: url, secret: SECRET, timeoutMs, probeMs: 50 }, createMetrics());
  await untilShared(state);
  return state;
}

async function untilShared(state: OpenedState): Promise<void> {
  for (let i = 0; i < 300 && state.state.status().state !== 'shared'; i++) await delay(10);
  expect(state.state.status().state).toBe('shared');
}

function layerOn(shared: OpenedState, metrics: GatewayMetrics = createMetrics()): SharedReadLayer {
  return new SharedReadLayer({ state: shared.state, keyOf: shared.keyOf, ttlMs: 5_000, metrics });
}

const lookups = async (metrics: GatewayMetrics, result: string, cache = 'micro-shared'): Promise<number> =>
  (await metrics.cacheLookups.get()).values.filter((v) => v.labels.cache === cache && v.labels.result === result).reduce((n, v) => n + v.value, 0);

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const never = new AbortController().signal;


/**
 * A TCP hop between one replica and Redis that can be cut (every connection dropped, new ones
 * refused) and mended: that replica alone loses Redis, the others keep it.
 */
async function startCuttableHop(redisPort: number): Promise<{ url: string; cut(): void; mend(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(redisPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    mend() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `state` with its subscriptions muted: this replica never hears a write's announcement. */
function deaf(shared: OpenedState): OpenedState {
  const state = new Proxy(shared.state, {
    get(target, property) {
      if (property === 'subscribe') return () => () => undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...shared, state };
}

describe.skipIf(!hasRedis)('the micro-cache across replicas (SharedReadLayer on Redis)', () => {
  let redis: TestRedis;
  let one: OpenedState;
  let two: OpenedState;
  let unique = 0;
  const readOf = async (layer: SharedReadLayer, overrides: Partial<SharedRead> = {}): Promise<SharedRead> => ({
    identity: one.identityOf(KEY),
    operation: 'ReadSomething',
    document: 'document-hash-1',
    variables: JSON.stringify({ n: ++unique }),
    apiKey: KEY,
    generation: (await layer.freshGeneration()) as string,
    dueAt: performance.now() + 10_000,
    ...overrides,
  });

  beforeAll(async () => {
    redis = await startRedis();
    [one, two] = await Promise.all([opened(redis.url), opened(redis.url)]);
  });
  afterAll(async () => {
    await one?.state.close();
    await two?.state.close();
    await redis?.stop();
  });

  it('answers a read once for both replicas: the other waits for the holder, then reads from Redis', async () => {
    const metrics = [createMetrics(), createMetrics()] as const;
    const layers = [layerOn(one, metrics[0]), layerOn(two, metrics[1])] as const;
    const read = await readOf(layers[0]);
    let sent = 0;
    const send = async (): Promise<Sized<{ n: number }>> => {
      sent++;
      await delay(100);
      return { data: { n: sent }, bytes: 7 };
    };
    const answers = await Promise.all([layers[0].read(read, send, never), layers[1].read(read, send, never)]);
    expect(sent).toBe(1);
    expect(answers.map((a) => a.data)).toEqual([{ n: 1 }, { n: 1 }]);
    // And a later read on either is a hit, still without sending.
    expect((await layers[1].read(read, send, never)).data).toEqual({ n: 1 });
    expect(sent).toBe(1);
    const counted = async (result: string): Promise<number> => (await lookups(metrics[0], result)) + (await lookups(metrics[1], result));
    expect({ miss: await counted('miss'), coalesced: await counted('coalesced'), hit: await counted('hit') }).toEqual({ miss: 1, coalesced: 1, hit: 1 });
  });

  it('never stores a failed answer; when the holder fails, one waiter takes its place and the others wait for it (no burst)', async () => {
    const layers = [one, two, one, two, one].map((shared) => layerOn(shared));
    const read = await readOf(layers[0] as SharedReadLayer);
    let sent = 0;
    const send = async (): Promise<Sized<object>> => {
      const n = ++sent;
      await delay(80);
      if (n === 1) throw new UpstreamError('upstream_failure', 'NerdGraph failed');
      return { data: { fine: n }, bytes: 10 };
    };
    // The holder first, then four waiters on both replicas.
    const holder = (layers[0] as SharedReadLayer).read(read, send, never);
    await delay(20);
    const outcomes = await Promise.allSettled([holder, ...layers.slice(1).map((layer) => layer.read(read, send, never))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    // The failure was not the waiters' answer nor kept; one of them sent again, once, for all.
    expect(sent).toBe(2);
    expect(outcomes.slice(1).map((o) => (o.status === 'fulfilled' ? o.value.data : undefined))).toEqual(Array(4).fill({ fine: 2 }));
  });

  it('never shares an answer missing an optional field (partial): the other replica sends its own read', async () => {
    const layers = [layerOn(one), layerOn(two)] as const;
    const read = await readOf(layers[0]);
    let sent = 0;
    const send = async (): Promise<Sized<object>> => ({ data: { known: null, n: ++sent }, bytes: 20, partial: true });
    expect((await layers[0].read(read, send, never)).data).toEqual({ known: null, n: 1 });
    expect((await layers[1].read(read, send, never)).data).toEqual({ known: null, n: 2 });
    expect(sent).toBe(2);
  });

  it('answers a waiter in its deadline although the lock holder died without answering', async () => {
    const layer = layerOn(two);
    const read = await readOf(layer, { dueAt: performance.now() + 600 });
    // A replica took the lock for longer than the waiter's whole deadline, and died.
    const lockKey = one.keyOf('micro-lock', read.generation, read.document, read.identity, read.operation, read.variables);
    expect(await one.state.set(lockKey, 'dead-replica', 30_000, { onlyIfAbsent: true })).toBe(true);
    let sent = 0;
    // The waiter's own deadline fires at its due time; its call takes 50 ms and is abandoned
    // when the deadline fires (as the client's is): it must have sent well before.
    const deadline = AbortSignal.timeout(600);
    const send = async (): Promise<Sized<object>> => {
      await delay(50);
      if (deadline.aborted) throw new UpstreamError('timeout', 'deadline reached before NerdGraph answered');
      return { data: { sent: ++sent }, bytes: 10 };
    };
    const answer = await layer.read(read, send, deadline);
    expect(answer.data).toEqual({ sent: 1 });
  });

  it('stops serving every entry read before a write through any replica, and tells every replica', async () => {
    const layers = [layerOn(one), layerOn(two)] as const;
    let told = 0;
    const stop = layers[1].onWrite(() => told++);
    const read = await readOf(layers[0]);
    let sent = 0;
    const send = async (): Promise<Sized<{ sent: number }>> => ({ data: { sent: ++sent }, bytes: 10 });
    expect((await layers[0].read(read, send, never)).data).toEqual({ sent: 1 });
    expect((await layers[1].read(read, send, never)).data).toEqual({ sent: 1 });
    expect(await layers[0].written()).toBe(true);
    // The entry is still in Redis, but under the generation before the write: not found.
    const after = { ...read, generation: (await layers[1].freshGeneration()) as string };
    expect(after.generation).not.toBe(read.generation);
    expect((await layers[1].read(after, send, never)).data).toEqual({ sent: 2 });
    expect((await layers[0].read(after, send, never)).data).toEqual({ sent: 2 });
    for (let i = 0; i < 100 && told === 0; i++) await delay(5);
    expect(told).toBeGreaterThanOrEqual(1);
    stop();
  });

  it('never lets a holder of an older generation overwrite what was read after a write', async () => {
    const layers = [layerOn(one), layerOn(two)] as const;
    const read = await readOf(layers[0]);
    let release = (): void => undefined;
    const old = layers[0].read(read, () => new Promise<Sized<object>>((resolve) => (release = () => resolve({ data: { state: 'before' }, bytes: 20 }))), never);
    await layers[1].written();
    const after = { ...read, generation: (await layers[1].freshGeneration()) as string };
    expect((await layers[1].read(after, async () => ({ data: { state: 'after' }, bytes: 20 }), never)).data).toEqual({ state: 'after' });
    release();
    await old;
    expect((await layers[0].read(after, async () => ({ data: { state: 'sent again' }, bytes: 20 }), never)).data).toEqual({ state: 'after' });
  });

  it('keeps the answers to two versions of a document apart, and treats an oversized stored value as a miss', async () => {
    const layer = layerOn(one);
    const read = await readOf(layer);
    let sent = 0;
    const send = async (): Promise<Sized<object>> => ({ data: { sent: ++sent }, bytes: 10 });
    expect((await layer.read(read, send, never)).data).toEqual({ sent: 1 });
    // A rolling deploy: the same operation, another document.
    expect((await layer.read({ ...read, document: 'document-hash-2' }, send, never)).data).toEqual({ sent: 2 });
    // A value beyond the size bound under an entry's name (valid JSON all the same): not served.
    const huge = { ...read, variables: JSON.stringify({ huge: true }) };
    const entryKey = one.keyOf('micro', huge.generation, huge.document, huge.identity, huge.operation, huge.variables);
    await redis.inspect().set(entryKey, JSON.stringify({ padding: 'x'.repeat(MAX_SHARED_BYTES) }), 'PX', 5_000);
    expect((await layer.read(huge, send, never)).data).toEqual({ sent: 3 });
  });

  it('keeps answers quoting a key out of Redis, and no Redis key or value of any type holds a key', async () => {
    const layer = layerOn(one);
    const read = await readOf(layer);
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
      for (const value of await valuesOf(inspect, key)) expect(value).not.toMatch(/NR(AK|AA|II|JS|IQ|SP|AL)-/i);
    }
  });
});

describe.skipIf(!hasRedis)('the NerdGraph client with a shared micro-cache', () => {
  const documents: OperationDocuments = new Map([
    ['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }],
    ['ChangeSomething', { name: 'ChangeSomething', kind: 'mutation', text: 'mutation ChangeSomething { changeSomething { id } }' }],
    ['BrowserApplicationDetails', { name: 'BrowserApplicationDetails', kind: 'query', text: 'query BrowserApplicationDetails { actor { user { id } } }' }],
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
  type Client = ReturnType<typeof clientOn>;
  const read = async (client: Client, variables: Record<string, unknown> = {}): Promise<number> =>
    (await client.call<{ actor: { user: { id: number } } }>({ operation: 'ReadSomething', variables, apiKey: KEY })).actor.user.id;
  const write = (client: Client): Promise<unknown> => client.call({ operation: 'ChangeSomething', variables: {}, apiKey: KEY });

  it('serves one replica from what another read, and a write through either empties both', async () => {
    const [one, two] = await Promise.all([opened(redis.url), opened(redis.url)]);
    try {
      const a = clientOn(one);
      const b = clientOn(two);
      const before = calls.read;
      expect(await read(a)).toBe(version);
      expect(await read(b)).toBe(version);
      expect(calls.read - before).toBe(1);
      await write(a);
      // B's own in-process cache held the old answer too: the write reached it.
      expect(await read(b)).toBe(version);
      expect(await read(a)).toBe(version);
      expect(calls.read - before).toBe(2);
      // B's readWindow generation moved too (metric data keeps whole answers by it).
      expect(b.readWindow?.()?.generation).toBeGreaterThan(0);
    } finally {
      await one.state.close();
      await two.state.close();
    }
  });

  it('a replica that never hears the announcement still never serves the state before a write (the generation read alone)', async () => {
    const [one, two] = await Promise.all([opened(redis.url), opened(redis.url)]);
    try {
      const a = clientOn(one);
      const b = clientOn(deaf(two));
      for (let round = 0; round < 3; round++) {
        // B holds the current state in its in-process cache.
        expect(await read(b, { deaf: true })).toBe(version);
        expect(await read(b, { deaf: true })).toBe(version);
        await write(a);
        expect(await read(b, { deaf: true })).toBe(version);
      }
    } finally {
      await one.state.close();
      await two.state.close();
    }
  });

  it('a replica cut off from Redis trusts no cache: it reads a write another replica answered', async () => {
    const hop = await startCuttableHop(redis.port);
    const [one, two] = await Promise.all([opened(redis.url), opened(hop.url, 300)]);
    try {
      const metrics = createMetrics();
      const a = clientOn(one);
      const b = clientOn(two, metrics);
      expect(await read(b, { cut: 'reader' })).toBe(version);
      hop.cut();
      // B degrades on its next shared-state read and answers from NerdGraph.
      expect(await read(b, { cut: 'reader' })).toBe(version);
      expect(two.state.status().state).toBe('degraded');
      expect(await read(b, { cut: 'reader' })).toBe(version);
      await write(a);
      expect(await read(b, { cut: 'reader' })).toBe(version);
      expect(await lookups(metrics, 'bypassed', 'micro')).toBeGreaterThanOrEqual(2);
    } finally {
      hop.mend();
      await one.state.close();
      await two.state.close();
      await hop.close();
    }
  });

  it('a write through a replica that lost Redis is answered only once Redis has its generation, if Redis comes back in time', async () => {
    const hop = await startCuttableHop(redis.port);
    const [one, two] = await Promise.all([opened(hop.url, 300), opened(redis.url)]);
    try {
      const a = clientOn(one);
      const b = clientOn(two);
      expect(await read(b, { cut: 'writer' })).toBe(version);
      expect(await read(a, { cut: 'writer' })).toBe(version);
      hop.cut();
      const writing = write(a);
      // A's generation SET fails, A degrades; Redis comes back for A while the write waits.
      for (let i = 0; i < 300 && one.state.status().state !== 'degraded'; i++) await delay(5);
      expect(one.state.status().state).toBe('degraded');
      hop.mend();
      await writing;
      expect(await read(b, { cut: 'writer' })).toBe(version);
      expect(one.state.status().state).toBe('shared');
    } finally {
      hop.mend();
      await one.state.close();
      await two.state.close();
      await hop.close();
    }
  });

  it('answers every read while Redis is killed and after it is back, never an error of its own', async () => {
    const one = await opened(redis.url);
    try {
      const client = clientOn(one);
      expect(await read(client, { n: 1 })).toBe(version);
      await redis.kill();
      // From NerdGraph (the replica degraded to its memory), not a failure.
      for (let n = 2; n < 6; n++) expect(await read(client, { n })).toBe(version);
      await write(client);
      expect(await read(client, { n: 1 })).toBe(version);
      await redis.restart();
      await untilShared(one);
      expect(await read(client, { n: 7 })).toBe(version);
    } finally {
      await one.state.close();
    }
  });

  it('keeps browser application details (their jsConfig holds a license key) out of Redis', async () => {
    const one = await opened(redis.url);
    try {
      const metrics = createMetrics();
      const client = clientOn(one, metrics);
      await client.call({ operation: 'BrowserApplicationDetails', variables: { browser: true }, apiKey: KEY });
      await client.call({ operation: 'ReadSomething', variables: { browser: false }, apiKey: KEY });
      // Only the second read went through the shared layer.
      expect(await lookups(metrics, 'miss')).toBe(1);
    } finally {
      await one.state.close();
    }
  });

  it('keeps to this process without Redis (no shared layer, no micro-shared lookups)', async () => {
    const metrics = createMetrics();
    const client = clientOn(localState(), metrics);
    await read(client, { alone: true });
    expect(await lookups(metrics, 'miss')).toBe(0);
  });
});
