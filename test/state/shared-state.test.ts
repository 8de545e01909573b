import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.ts';
import { DegradingState } from '../../src/state/degrading-state.ts';
import { MemoryState } from '../../src/state/memory-state.ts';
import { RedisState } from '../../src/state/redis-state.ts';
import { createStateKeyer, type SharedState } from '../../src/state/shared-state.ts';
import { openSharedState } from '../../src/state/open.ts';
import { resolveOnce } from '../../src/state/redis-connector.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';

/**
 * The two backends of shared state keep the same promises (leases, budget windows, hashes,
 * locks, streams), and a replica whose Redis goes away keeps serving from memory, says so, and
 * goes back to Redis by itself.
 */
const hasRedis = redisAvailable();
let redis: TestRedis | undefined;
beforeAll(async () => {
  if (hasRedis) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const backends: [string, () => SharedState][] = [
  ['memory', () => new MemoryState()],
  ...(hasRedis ? ([['redis', () => new RedisState({ url: (redis as TestRedis).url, commandTimeoutMs: 1000 })]] as [string, () => SharedState][]) : []),
];

let unique = 0;
const fresh = (purpose: string): string => `test:${purpose}:${process.pid}:${++unique}`;

describe.each(backends)('shared state in %s', (_name, open) => {
  let state: SharedState;
  beforeAll(async () => {
    state = open();
    // Redis connects in the background: wait for the first answer.
    for (let i = 0; i < 50; i++) {
      try {
        await state.get('warm-up');
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });
  afterAll(async () => {
    await state.close();
  });

  it('hands out no more leases than the limit, and a released one is free again', async () => {
    const key = fresh('lease');
    const held = await Promise.all(Array.from({ length: 5 }, () => state.acquireLease(key, 3, 10_000)));
    expect(held.filter((lease) => lease !== undefined)).toHaveLength(3);
    expect(await state.leaseCount(key)).toBe(3);
    await held.find((lease) => lease !== undefined)?.release();
    expect(await state.leaseCount(key)).toBe(2);
    expect(await state.acquireLease(key, 3, 10_000)).toBeDefined();
  });

  it('expires a lease nobody released', async () => {
    const key = fresh('lease-ttl');
    expect(await state.acquireLease(key, 1, 30)).toBeDefined();
    expect(await state.acquireLease(key, 1, 30)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await state.acquireLease(key, 1, 30)).toBeDefined();
  });

  it('refuses a spend past the window budget and says how long until it resets', async () => {
    const key = fresh('spend');
    const spend = (cost: number) => state.spendAll([{ key, cost, limit: 3, windowMs: 60_000 }]);
    expect(await spend(2)).toEqual({ spent: true });
    expect(await spend(1)).toEqual({ spent: true });
    const refused = await spend(1);
    expect(refused).toMatchObject({ spent: false, refused: 0 });
    if (!refused.spent) expect(refused.retryAfterMs).toBeGreaterThan(50_000);
  });

  it('creates a window that ends with an earlier one of the same spend (expiresWith), however long its own', async () => {
    const account = fresh('account');
    const part = fresh('part');
    const spend = (partKey: string) =>
      state.spendAll([
        { key: account, cost: 1, limit: 100, windowMs: 1_000 },
        { key: partKey, cost: 1, limit: 1, windowMs: 60_000, expiresWith: 0 },
      ]);
    expect(await spend(part)).toEqual({ spent: true });
    // The part is spent: refused until it resets, with the account's window, not a minute from now.
    const refused = await spend(part);
    expect(refused.spent).toBe(false);
    if (refused.spent) return;
    expect(refused.refused).toBe(1);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1_000);
    // A part created later in the account's window ends with it too.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = fresh('late-part');
    expect(await spend(late)).toEqual({ spent: true });
    const lateRefused = await spend(late);
    if (lateRefused.spent) throw new Error('expected a refusal');
    expect(lateRefused.retryAfterMs).toBeLessThanOrEqual(700);
  });

  it('keeps a lock for its first holder only', async () => {
    const key = fresh('lock');
    expect(await state.set(key, 'a', 10_000, { onlyIfAbsent: true })).toBe(true);
    expect(await state.set(key, 'b', 10_000, { onlyIfAbsent: true })).toBe(false);
    expect(await state.get(key)).toBe('a');
    await state.delete(key);
    expect(await state.get(key)).toBeUndefined();
  });

  it('merges hash fields under one TTL', async () => {
    const key = fresh('hash');
    await state.hashSet(key, { count: '10', p2: 'cursor-2' }, 10_000);
    await state.hashSet(key, { p3: 'cursor-3' }, 10_000);
    expect(await state.hashGetAll(key)).toEqual({ count: '10', p2: 'cursor-2', p3: 'cursor-3' });
  });

  it('lets a hash expire with the TTL of its first write, not renewed by later ones', async () => {
    const key = fresh('hash-ttl');
    await state.hashSet(key, { p2: 'a' }, 80);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await state.hashSet(key, { p3: 'b' }, 80);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await state.hashGetAll(key)).toEqual({});
  });

  it('reads a stream after a given entry, oldest first', async () => {
    const stream = fresh('stream');
    for (const data of ['one', 'two', 'three']) await state.append(stream, data, 100);
    const all = await state.readAfter(stream, '0', 10);
    expect(all.map((entry) => entry.data)).toEqual(['one', 'two', 'three']);
    expect((await state.readAfter(stream, all[0]?.id ?? '0', 10)).map((entry) => entry.data)).toEqual(['two', 'three']);
  });
});

describe.skipIf(!hasRedis)('a replica whose Redis goes away', () => {
  it('serves from memory without an error, counts it, shows it, and goes back to Redis when it returns', async () => {
    const server = redis as TestRedis;
    const metrics = createMetrics();
    const state = new DegradingState(new RedisState({ url: server.url, commandTimeoutMs: 200 }), metrics, { probeMs: 50, timeoutMs: 200 });
    try {
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(state.status()).toEqual({ backend: 'redis', state: 'shared', fallbacks: 0 });
      const key = fresh('degrade');
      await state.set(key, 'in redis', 60_000);
      expect(await server.inspect().get(key)).toBe('in redis');

      await server.kill();
      // Every operation still answers, from memory.
      expect(await state.set(key, 'in memory', 60_000)).toBe(true);
      expect(await state.get(key)).toBe('in memory');
      expect(await state.acquireLease(fresh('lease'), 1, 1000)).toBeDefined();
      expect(state.status().state).toBe('degraded');
      expect(state.status().fallbacks).toBeGreaterThan(0);
      expect(await metrics.registry.getSingleMetricAsString('v2bridge_shared_state_degraded')).toMatch(/ 1$/m);

      await server.restart();
      for (let i = 0; i < 200 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(state.status().state).toBe('shared');
      await state.set(key, 'back in redis', 60_000);
      expect(await server.inspect().get(key)).toBe('back in redis');
      const transitions = await metrics.registry.getSingleMetricAsString('v2bridge_shared_state_transitions_total');
      expect(transitions).toMatch(/to="memory"} 1/);
      expect(transitions).toMatch(/to="redis"} 1/);
    } finally {
      await state.close();
    }
  });
});

describe.skipIf(!hasRedis)('a command Redis refuses', () => {
  it('is served from memory for that command only: the replica stays shared', async () => {
    const metrics = createMetrics();
    const state = new DegradingState(new RedisState({ url: (redis as TestRedis).url, commandTimeoutMs: 2000 }), metrics, { probeMs: 50, timeoutMs: 2000 });
    try {
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const key = fresh('foreign');
      // A value of another type under the name: HGETALL answers WRONGTYPE.
      await state.set(key, 'a string', 60_000);
      expect(await state.hashGetAll(key)).toEqual({});
      expect(state.status()).toMatchObject({ state: 'shared', fallbacks: 1 });
      expect(await state.get(key)).toBe('a string');
    } finally {
      await state.close();
    }
  });
});

describe.skipIf(!hasRedis)('a replica whose event loop was busy', () => {
  it('reads the answer that arrived meanwhile instead of calling Redis slow', async () => {
    const metrics = createMetrics();
    const state = new DegradingState(new RedisState({ url: (redis as TestRedis).url, commandTimeoutMs: 50 }), metrics, { probeMs: 50, timeoutMs: 50 });
    try {
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const key = fresh('busy');
      await state.set(key, 'answer', 60_000);
      const reading = state.get(key);
      // A synchronous task holds the loop six times the timeout: Redis answers meanwhile, the timer is late.
      const until = performance.now() + 300;
      while (performance.now() < until) {
        // busy
      }
      expect(await reading).toBe('answer');
      expect(state.status()).toMatchObject({ state: 'shared', fallbacks: 0 });
    } finally {
      await state.close();
    }
  });
});

describe.skipIf(!hasRedis)('a replica started while Redis is down', () => {
  it('subscribes once Redis comes up and hears the other replicas from then on', async () => {
    const server = await startRedis();
    await server.kill();
    const metrics = createMetrics();
    const state = new DegradingState(new RedisState({ url: server.url, commandTimeoutMs: 2000 }), metrics, { probeMs: 50, timeoutMs: 2000 });
    try {
      const heard: string[] = [];
      state.subscribe('test-channel', (message) => heard.push(message));
      // The connection attempts fail meanwhile: /readyz says why.
      for (let i = 0; i < 100 && state.status().lastError === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(state.status()).toMatchObject({ state: 'connecting', lastError: 'ECONNREFUSED' });
      await server.restart();
      for (let i = 0; i < 200 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(state.status().state).toBe('shared');
      for (let i = 0; i < 200 && heard.length === 0; i++) {
        await server.inspect().publish('test-channel', 'from another replica');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(heard[0]).toBe('from another replica');
    } finally {
      await state.close();
      await server.stop();
    }
  });
});

describe("Redis's host name", () => {
  it('is looked up once at a time, however many reconnects ask, and a hung lookup is waited for only so long', async () => {
    let started = 0;
    let finish!: (address: string) => void;
    const hung = (): Promise<string> => {
      started++;
      return new Promise((resolve) => (finish = resolve));
    };
    const attempts = Array.from({ length: 10 }, () => resolveOnce('redis.hung.test', 30, hung).catch((error: Error) => error.message));
    expect(await Promise.all(attempts)).toEqual(Array(10).fill('lookup of the Redis host timed out'));
    // Still hung: a later attempt joins it instead of taking another thread.
    expect(await resolveOnce('redis.hung.test', 30, hung).catch(() => 'timed out')).toBe('timed out');
    expect(started).toBe(1);
    finish('10.0.0.7');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await resolveOnce('redis.hung.test', 30, async () => '10.0.0.8')).toBe('10.0.0.8');
  });

  it.skipIf(!hasRedis)('keeps reconnecting while its lookups hang, and shares again once Redis is back', async () => {
    const server = await startRedis();
    let dns: 'answers' | 'hangs' = 'answers';
    // A stopped container's name: Docker's DNS forwards it and the lookup hangs, then fails.
    const resolveHost = async (): Promise<string> => {
      if (dns === 'answers') return '127.0.0.1';
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    const state = new DegradingState(
      new RedisState({ url: `redis://redis-hangs.invalid:${server.port}`, commandTimeoutMs: 1_000, resolveHost }),
      createMetrics(),
      { probeMs: 50, timeoutMs: 1_000 },
    );
    try {
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(state.status().state).toBe('shared');
      await server.kill();
      dns = 'hangs';
      await state.get('while-down');
      expect(state.status().state).toBe('degraded');
      // Several lookups time out meanwhile (1 s each): the client must not give up on them.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await server.restart();
      dns = 'answers';
      for (let i = 0; i < 300 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(state.status().state).toBe('shared');
    } finally {
      await state.close();
      await server.stop();
    }
  }, 30_000);

  it.skipIf(!hasRedis)('is not connected to after a close that came during its lookup', async () => {
    const server = redis as TestRedis;
    const slowLookup = async (): Promise<string> => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return '127.0.0.1';
    };
    const before = Number(/connected_clients:(\d+)/.exec(await server.inspect().info('clients'))?.[1]);
    const state = new RedisState({ url: `redis://redis-slow.invalid:${server.port}`, commandTimeoutMs: 2_000, resolveHost: slowLookup });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await state.close();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(state.ready).toBe(false);
    expect(Number(/connected_clients:(\d+)/.exec(await server.inspect().info('clients'))?.[1])).toBe(before);
  });

  it.skipIf(!hasRedis)('still connects by name', async () => {
    const state = new RedisState({ url: `redis://localhost:${(redis as TestRedis).port}`, commandTimeoutMs: 2000 });
    try {
      for (let i = 0; i < 100 && !state.ready; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      await state.set('by-name', 'yes', 10_000);
      expect(await (redis as TestRedis).inspect().get('by-name')).toBe('yes');
    } finally {
      await state.close();
    }
  });
});

describe('state keys', () => {
  it('are the same on every replica that shares the secret, and hold none of their parts', () => {
    const a = createStateKeyer('s'.repeat(32));
    const b = createStateKeyer('s'.repeat(32));
    const key = a('cursors', 'NRAK-SECRETKEY123', 42, 'name LIKE x');
    expect(key).toBe(b('cursors', 'NRAK-SECRETKEY123', 42, 'name LIKE x'));
    expect(key).toMatch(/^v2b:cursors:[A-Za-z0-9_-]{32}$/);
    expect(key).not.toContain('NRAK');
    expect(createStateKeyer('t'.repeat(32))('cursors', 'NRAK-SECRETKEY123', 42, 'name LIKE x')).not.toBe(key);
    // Parts are delimited: moving text between parts names another key.
    expect(a('cursors', 'ab', 'c')).not.toBe(a('cursors', 'a', 'bc'));
  });

  it('and callers get one identity on every replica that shares STATE_SECRET', () => {
    const settings = { secret: 'x'.repeat(40), timeoutMs: 100, probeMs: 1000 };
    const one = openSharedState(settings, createMetrics());
    const two = openSharedState(settings, createMetrics());
    expect(one.identityOf('NRAK-ONE')).toBe(two.identityOf('NRAK-ONE'));
    expect(one.identityOf('NRAK-ONE')).not.toBe(openSharedState({ ...settings, secret: 'y'.repeat(40) }, createMetrics()).identityOf('NRAK-ONE'));
  });
});

describe('a replica says who it is and where its state lives', () => {
  it('X-V2Bridge-Replica on every answer, and /readyz detail: local without Redis', async () => {
    const { createApp } = await import('../../src/app.ts');
    const { createLogger } = await import('../../src/ops/logger.ts');
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1, accountsCacheTtlMs: 1, metricNamesLookbackMs: 7 * 86_400_000, requestDeadlineMs: 10_000 },
      nerdgraph: { call: () => Promise.reject(new Error('unused')) },
      mappings: [],
      metrics: createMetrics(),
      logger: createLogger('silent'),
      replicaName: 'replica-7',
    });
    const ready = await app.request('/readyz');
    expect(ready.headers.get('x-v2bridge-replica')).toBe('replica-7');
    expect(await ready.json()).toEqual({ status: 'ready', sharedState: { backend: 'memory', state: 'local', fallbacks: 0 } });
    const missing = await app.request('/v2/applications.json');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-v2bridge-replica')).toBe('replica-7');
  });
});
