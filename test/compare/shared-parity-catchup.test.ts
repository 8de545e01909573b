import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createParityStore, type LocalParityStore } from '../../src/compare/parity-store.ts';
import { shareParityStore, SHARING_DEFAULTS, type SharedParityStore, type SharingSettings } from '../../src/compare/shared-parity.ts';
import type { ComparisonRecord } from '../../src/compare/types.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { openSharedState, type OpenedState } from '../../src/state/open.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { LIST, mismatchRecord } from '../support/parity-fixture.ts';
import { loadTestMappings } from '../support/fixture-routes.ts';
import { metricSum, untilShared } from '../support/state.ts';

/**
 * How a replica catches up with the shared parity stream: in small pages and slices that leave
 * the event loop to real requests, a report that waits a bounded time while the read goes on,
 * concurrent reports sharing one read, a stream Redis lost (or trimmed) noticed, and a burst
 * while Redis is slow kept whole and bounded. Each test has its own stream (its own secret).
 */
const mappings = await loadTestMappings('fixtures');
/** No timer interferes: every read and flush here is the test's own. */
const QUIET: SharingSettings = { ...SHARING_DEFAULTS, readMs: 3_600_000, flushMs: 3_600_000 };

interface Side {
  opened: OpenedState;
  metrics: GatewayMetrics;
  local: LocalParityStore;
  store: SharedParityStore;
}

const sides: Side[] = [];

/** A store sharing through `redisUrl`; `around` may stand between it and the state (to count or hold calls). */
function side(redisUrl: string, secret: string, settings: SharingSettings = QUIET, around?: Partial<Pick<OpenedState['state'], 'append' | 'readAfter'>>): Side {
  const metrics = createMetrics();
  const real = openSharedState({ redisUrl, secret, timeoutMs: 5000, probeMs: 50 }, metrics);
  const state = new Proxy(real.state, {
    get(target, property, receiver) {
      if (around && property in around) return around[property as keyof typeof around];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const opened = { ...real, state };
  const local = createParityStore({ mappings, registry: metrics.registry, maxRecords: 1000 });
  const s = { opened: real, metrics, local, store: shareParityStore(local, opened, metrics.registry, settings) };
  sides.push(s);
  return s;
}

async function connected(...all: Side[]): Promise<void> {
  for (const s of all) await untilShared(s.opened.state);
}

const value = (s: Side, metric: string): Promise<number> => metricSum(s.metrics.registry, metric);

const record = (): ComparisonRecord => mismatchRecord();

/** `n` batches from `s`, each one request's usage. */
async function batches(s: Side, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    s.store.noteUsage(LIST, 'GET', 'compare');
    await s.store.flush();
  }
}

const requests = (s: Side): number => s.store.report().totals.requests;

const hasRedis = redisAvailable();

describe.skipIf(!hasRedis)('catching up with the shared parity stream', () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterEach(async () => {
    for (const s of sides.splice(0)) {
      await s.store.close();
      await s.opened.state.close();
    }
  });

  afterAll(async () => {
    await redis?.stop();
  });

  it('reads in pages, at most readPages of them per read, the next read going on from there', async () => {
    const secret = randomUUID();
    const a = side(redis.url, secret);
    const b = side(redis.url, secret, { ...QUIET, readPage: 2, readPages: 2 });
    await connected(a, b);
    await batches(a, 7);
    await b.store.refresh();
    expect(requests(b)).toBe(4);
    await b.store.refresh();
    expect(requests(b)).toBe(7);
    await b.store.refresh();
    expect(requests(b)).toBe(7);
  });

  it('applies a backlog a few events at a time, leaving the event loop to other work between them', async () => {
    const secret = randomUUID();
    const a = side(redis.url, secret);
    const b = side(redis.url, secret);
    await connected(a, b);
    // 10 entries of 40 records each: one page, 400 events.
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 40; j++) a.store.record(record());
      await a.store.flush();
    }
    // Counts the events applied between two turns of a ticker that re-arms itself every loop turn.
    let sinceTick = 0;
    let mostBetweenTicks = 0;
    const applyRemote = b.local.applyRemote.bind(b.local);
    b.local.applyRemote = (event) => {
      sinceTick += 1;
      mostBetweenTicks = Math.max(mostBetweenTicks, sinceTick);
      applyRemote(event);
    };
    let ticking = true;
    const tick = (): void => {
      sinceTick = 0;
      if (ticking) setImmediate(tick);
    };
    tick();
    await b.store.refresh();
    ticking = false;
    expect(requests(b)).toBe(0);
    expect(b.store.report().totals.outcomes.mismatch).toBe(400);
    expect(mostBetweenTicks).toBeGreaterThan(0);
    expect(mostBetweenTicks).toBeLessThanOrEqual(20);
  });

  it('lets a report wait a bounded time for a slow read, which goes on and is seen by the next report', async () => {
    const secret = randomUUID();
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined;
    const a = side(redis.url, secret);
    const b = side(redis.url, secret, QUIET, {
      readAfter: async (stream, afterId, count) => {
        if (held) await held;
        return b.opened.state.readAfter(stream, afterId, count);
      },
    });
    await connected(a, b);
    await batches(a, 3);
    held = new Promise((resolve) => (release = resolve));
    // Resolves although the read is held (unbounded, this would never return).
    await b.store.refresh({ maxWaitMs: 50 });
    expect(requests(b)).toBe(0);
    held = undefined;
    release();
    await b.store.refresh({ maxWaitMs: 10_000 });
    expect(requests(b)).toBe(3);
  }, 10_000);

  it('shares one read among concurrent reports', async () => {
    const secret = randomUUID();
    let reads = 0;
    const a = side(redis.url, secret);
    const b = side(redis.url, secret, QUIET, {
      readAfter: (stream, afterId, count) => {
        reads += 1;
        return b.opened.state.readAfter(stream, afterId, count);
      },
    });
    await connected(a, b);
    await batches(a, 2);
    await Promise.all(Array.from({ length: 20 }, () => b.store.refresh()));
    expect(requests(b)).toBe(2);
    // One read (one page: the backlog is under readPage), not twenty in a row.
    expect(reads).toBe(1);
    // A report asked for while a read goes on gets a read of its own, after it.
    await batches(a, 1);
    const first = b.store.refresh();
    await batches(a, 1);
    await Promise.all([first, b.store.refresh(), b.store.refresh()]);
    expect(requests(b)).toBe(4);
    expect(reads).toBe(3);
  });

  it('keeps a burst whole and bounded while Redis is slow to take it', async () => {
    const secret = randomUUID();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const a = side(redis.url, secret, QUIET, {
      append: async (stream, data, maxLength) => {
        await held;
        return a.opened.state.append(stream, data, maxLength);
      },
    });
    const b = side(redis.url, secret);
    await connected(a, b);
    a.store.noteUsage(LIST, 'GET', 'compare');
    const first = a.store.flush();
    await new Promise((resolve) => setImmediate(resolve));
    // While the first append hangs: a burst, and many flushes (they join the one queued).
    for (let i = 0; i < 3000; i++) {
      a.store.noteUsage(LIST, 'GET', 'compare');
      a.store.record(record());
    }
    const more = Array.from({ length: 10 }, () => a.store.flush());
    release();
    await Promise.all([first, ...more]);
    const entries = await redis.inspect().xrange(a.opened.keyOf('parity', 'events'), '-', '+');
    expect(entries.length).toBe(2);
    for (const [, fields] of entries) expect(fields[1]?.length).toBeLessThanOrEqual(SHARING_DEFAULTS.batchChars + SHARING_DEFAULTS.foldedTallyChars + 4096);
    await b.store.refresh();
    expect(b.store.report().totals).toEqual(a.store.report().totals);
    expect(requests(b)).toBe(3001);
    expect(await value(a, 'v2bridge_parity_events_unshared_total')).toBe(0);
  });

  it('counts batches trimmed away before it read them', async () => {
    const secret = randomUUID();
    const a = side(redis.url, secret);
    const b = side(redis.url, secret);
    await connected(a, b);
    await batches(a, 1);
    await b.store.refresh();
    // B lags; meanwhile two batches are trimmed away unread.
    await batches(a, 2);
    await redis.inspect().xtrim(a.opened.keyOf('parity', 'events'), 'MAXLEN', 0);
    await batches(a, 1);
    await b.store.refresh();
    expect(requests(b)).toBe(2);
    expect(await value(b, 'v2bridge_parity_batches_missed_total')).toBe(2);
  });

  it('reads a stream Redis lost and began again from its start, even with ids below where it was', async () => {
    const secret = randomUUID();
    const a = side(redis.url, secret);
    const b = side(redis.url, secret);
    await connected(a, b);
    await batches(a, 2);
    await b.store.refresh();
    expect(requests(b)).toBe(2);
    // A failover to an empty Redis whose clock is behind: the new stream's ids are lower than B's position.
    const inspector = redis.inspect();
    await inspector.flushall();
    await inspector.xadd(a.opened.keyOf('parity', 'events'), '1-1', 'd', JSON.stringify({ v: 1, from: 'c'.repeat(24), seq: 0, events: [{ kind: 'usage', route: LIST, method: 'GET', mode: 'compare', count: 3 }] }));
    await b.store.refresh();
    expect(requests(b)).toBe(5);
    expect(await value(b, 'v2bridge_parity_stream_resets_total')).toBe(1);
    // Read once: the next read finds the same epoch and nothing new.
    await b.store.refresh();
    expect(requests(b)).toBe(5);
    expect(await value(b, 'v2bridge_parity_stream_resets_total')).toBe(1);
  });
});
