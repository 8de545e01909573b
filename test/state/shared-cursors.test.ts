import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CursorCache } from '../../src/cache/cursor-cache.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { localState } from '../../src/state/open.ts';
import { redisAvailable, startRedis, type TestRedis, valuesOf } from '../support/redis.ts';
import { startReplica, type Replica } from '../support/replicas.ts';
import { startUpstreamMeter, type UpstreamMeter } from '../support/upstream-meter.ts';

/**
 * Two gateway PROCESSES behind a (pretend) load balancer, sharing nothing but Redis and the
 * upstream: what one replica learned (page cursors, a key's accounts, a refused key, a read in
 * the micro-cache's window) spares the other its NerdGraph calls, and a write through one is
 * never followed by the other serving the state before it. The meter counts what NerdGraph sees
 * from both together.
 */
const DEMO_KEY = 'NRAK-SANDBOX-DEMO';
const BAD_KEY = 'NRAK-NOTAKEYTHESANDBOXKNOWS0000';
const PRIMARY_ACCOUNT = 1000001;
const hasRedis = redisAvailable();

interface Answer {
  status: number;
  body: string;
  link: string | null;
  replica: string | null;
}

async function get(replica: Replica, path: string, key = DEMO_KEY): Promise<Answer> {
  const response = await fetch(`${replica.url}${path}`, { headers: { 'X-Api-Key': key } });
  return { status: response.status, body: await response.text(), link: response.headers.get('link'), replica: response.headers.get('x-v2bridge-replica') };
}


/** How many times Redis ran `command` since it started (INFO commandstats). */
async function commandCalls(client: Redis, command: string): Promise<number> {
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(await client.info('commandstats'));
  return match ? Number(match[1]) : 0;
}

/** Until the replica uses Redis (start-up serves from memory until Redis first answers). */
async function untilShared(replica: Replica): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const ready = (await (await fetch(`${replica.url}/readyz`)).json()) as { sharedState?: { state?: string } };
    if (ready.sharedState?.state === 'shared') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`replica ${replica.name} never reached Redis:\n${replica.output()}`);
}

/** For a failure's message: whether the replicas were using Redis all along. */
async function sharedStates(...replicas: Replica[]): Promise<string> {
  const states = await Promise.all(replicas.map(async (replica) => JSON.stringify((await (await fetch(`${replica.url}/readyz`)).json()) as unknown)));
  return states.join('\n');
}

describe.skipIf(!hasRedis)('two gateway processes sharing Redis', () => {
  let redis: TestRedis;
  let sandbox: { url: string; close: () => Promise<void> };
  let meter: UpstreamMeter;
  let slowMeter: UpstreamMeter;
  /** Micro-cache off: every read is NerdGraph's, so only shared cursors and accounts can spare calls. */
  let plain: Replica[];
  /** Micro-cache on (2 s) in front of a NerdGraph that takes 200 ms per call. */
  let cached: Replica[];
  let appId: number;

  beforeAll(async () => {
    redis = await startRedis();
    const created = createSandbox({ seed: 7, apmApps: 200 });
    sandbox = await created.listen(0, '127.0.0.1');
    appId = (created.data.apps.find((app) => app.accountId === PRIMARY_ACCOUNT) as { id: number }).id;
    meter = await startUpstreamMeter(`${sandbox.url}/graphql`);
    slowMeter = await startUpstreamMeter(`${sandbox.url}/graphql`, { delayMs: 200 });
    const env = (upstream: UpstreamMeter, microCacheMs: string): Record<string, string> => ({
      REDIS_URL: redis.url,
      NERDGRAPH_URL: upstream.url,
      LEGACY_REST_URL: sandbox.url,
      MICRO_CACHE_MS: microCacheMs,
      // A loaded CI machine (the whole suite on two cores) must not pass for Redis trouble: a
      // replica degraded to its memory shares nothing, and that has its own test.
      STATE_TIMEOUT_MS: '2000',
    });
    [plain, cached] = await Promise.all([
      Promise.all([startReplica('a', env(meter, '0')), startReplica('b', env(meter, '0'))]),
      Promise.all([startReplica('a', env(slowMeter, '2000')), startReplica('b', env(slowMeter, '2000'))]),
    ]);
    await Promise.all([...plain, ...cached].map(untilShared));
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...(plain ?? []), ...(cached ?? [])].map((replica) => replica.stop()));
    await meter?.close();
    await slowMeter?.close();
    await sandbox?.close();
    await redis?.stop();
  });

  it('a cold page 2 reads what is known of its search once: page 1 taught the rest', async () => {
    const [a] = plain as [Replica, Replica];
    const inspect = redis.inspect();
    const before = await commandCalls(inspect, 'hgetall');
    const answer = await get(a, '/v2/mobile_applications.json?page=2');
    expect(answer.status).toBe(200);
    expect((await commandCalls(inspect, 'hgetall')) - before).toBe(1);
    // The same page again taught nothing new: read once, written not at all.
    const [reads, writes] = [await commandCalls(inspect, 'hgetall'), await commandCalls(inspect, 'hset')];
    expect((await get(a, '/v2/mobile_applications.json?page=2')).status).toBe(200);
    expect({ reads: (await commandCalls(inspect, 'hgetall')) - reads, writes: (await commandCalls(inspect, 'hset')) - writes }).toEqual({ reads: 1, writes: 0 });
  });

  it('page 1 from A, then page 2 from B: B sends one entity search, no accounts lookup and no walk from page 1', async () => {
    const [a, b] = plain as [Replica, Replica];
    const first = await get(a, '/v2/mobile_applications.json');
    expect(first.status).toBe(200);
    expect(first.replica).toBe('a');
    expect(first.link).toContain('page=2');

    meter.resetCounts();
    const second = await get(b, '/v2/mobile_applications.json?page=2');
    expect(second.replica).toBe('b');
    expect(second.status).toBe(200);
    expect({ all: meter.calls(), search: meter.calls('MobileApplicationsSearch'), accounts: meter.calls('AccessibleAccounts') }).toEqual({
      all: 1,
      search: 1,
      accounts: 0,
    });

    // The page B served is page 2 itself: other apps than page 1's, the same A gives for page 2.
    const ids = (answer: Answer): number[] => (JSON.parse(answer.body) as { applications: { id: number }[] }).applications.map((app) => app.id);
    expect(ids(second).length).toBeGreaterThan(0);
    expect(ids(second).some((id) => ids(first).includes(id))).toBe(false);
    const fromA = await get(a, '/v2/mobile_applications.json?page=2');
    expect(ids(fromA)).toEqual(ids(second));
    // The Link headers name each replica's own origin; the pages they announce are the same.
    const pagesOf = (answer: Answer): string | undefined => answer.link?.replaceAll(/http:\/\/127\.0\.0\.1:\d+/g, '');
    expect(pagesOf(second)).toBe(pagesOf(fromA));
    expect(pagesOf(second)).toContain('rel="prev"');
  });

  it('a key NerdGraph refused through A is refused by B without a NerdGraph call', async () => {
    const [a, b] = plain as [Replica, Replica];
    const refusedByA = await get(a, '/v2/applications.json', BAD_KEY);
    expect(refusedByA.status).toBe(401);
    expect(JSON.parse(refusedByA.body)).toEqual({ error: { title: expect.any(String) } });

    meter.resetCounts();
    const hitsBefore = await b.counter('v2bridge_refused_key_hits_total');
    const refusedByB = await get(b, '/v2/applications.json', BAD_KEY);
    expect({ status: refusedByB.status, body: refusedByB.body }).toEqual({ status: 401, body: refusedByA.body });
    expect(meter.calls()).toBe(0);
    expect((await b.counter('v2bridge_refused_key_hits_total')) - hitsBefore).toBe(1);
  });

  it('identical reads sent at once to A and B reach NerdGraph once', async () => {
    const [a, b] = cached as [Replica, Replica];
    // Both replicas know the key already (its accounts are shared too): only the reads are counted.
    await Promise.all([get(a, '/v2/applications.json?page=1'), get(b, '/v2/applications.json?page=1')]);
    slowMeter.resetCounts();
    const path = `/v2/applications/${appId}.json`;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => get(i % 2 === 0 ? a : b, path)));
    expect(new Set(answers.map((answer) => answer.replica))).toEqual(new Set(['a', 'b']));
    expect(new Set(answers.map((answer) => `${answer.status} ${answer.body}`)).size).toBe(1);
    expect(answers[0]?.status).toBe(200);
    expect(slowMeter.calls('ApplicationByGuid'), await sharedStates(a, b)).toBe(1);
    // One replica sent; the other waited for its answer in Redis (counted as coalesced there).
    const shared = async (result: string): Promise<number> =>
      (await a.counter('v2bridge_cache_lookups_total', { cache: 'micro-shared', result })) +
      (await b.counter('v2bridge_cache_lookups_total', { cache: 'micro-shared', result }));
    expect(await shared('miss')).toBeGreaterThanOrEqual(1);
    expect((await shared('coalesced')) + (await shared('hit'))).toBeGreaterThanOrEqual(1);
  });

  it('a write through A is never followed by B serving the state before it', async () => {
    const [a, b] = cached as [Replica, Replica];
    const path = `/v2/applications/${appId}.json`;
    const nameIn = (answer: Answer): string => (JSON.parse(answer.body) as { application: { name: string } }).application.name;
    for (let round = 1; round <= 3; round++) {
      // Both replicas hold the current state in their micro-caches (and in Redis).
      const before = await Promise.all([get(b, path), get(a, path), get(b, path)]);
      expect(before.map((answer) => answer.status)).toEqual([200, 200, 200]);
      const name = `renamed-by-a-${round}`;
      expect(before.map(nameIn)).not.toContain(name);
      const put = await fetch(`${a.url}${path}`, {
        method: 'PUT',
        headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ application: { name } }),
      });
      expect(put.status).toBe(200);
      await put.text();
      const after = await get(b, path);
      expect({ status: after.status, name: nameIn(after) }).toEqual({ status: 200, name });
      expect(nameIn(await get(a, path))).toBe(name);
    }
  });

  it('left no key, raw or hashed from a key, in any Redis key name or value', async () => {
    const inspect = redis.inspect();
    const keys = await inspect.keys('*');
    // Cursors, accounts, the refusal, micro entries and the write generation at least.
    const purposes = new Set(keys.map((key) => key.split(':')[1]));
    expect([...purposes].sort()).toEqual(expect.arrayContaining(['accounts', 'cursors', 'micro', 'refused', 'writes']));
    for (const key of keys) {
      expect(key).toMatch(/^v2b:[a-z-]+:[A-Za-z0-9_-]{32}$/);
      const values = await valuesOf(inspect, key);
      for (const secret of [DEMO_KEY, BAD_KEY, 'NRAK-', 'SANDBOX-DEMO']) for (const value of values) expect(value, `${key}`).not.toContain(secret);
    }
  });
});

describe('page cursors kept in this process (no Redis, or Redis degraded)', () => {
  it('keeps at most 5,000 searches and the latest 1,000 cursors of each', async () => {
    const cursors = new CursorCache(localState(), { ttlMs: 60_000 });
    for (let search = 0; search <= 5_000; search++) await cursors.remember(`search-${search}`, 10);
    expect((await cursors.pages('search-0')).count).toBeUndefined();
    expect((await cursors.pages('search-5000')).count).toBe(10);
    for (let page = 2; page <= 1_200; page++) await cursors.remember('long', null, { page, cursor: `cursor-${page}` });
    const long = await cursors.pages('long');
    expect(long.nearest(1_200)).toEqual({ page: 1_200, cursor: 'cursor-1200' });
    expect(long.nearest(201)).toEqual({ page: 201, cursor: 'cursor-201' });
    // The first learned went: page 200's cursor is no longer known, page 1 is the start.
    expect(long.nearest(200)).toEqual({ page: 1, cursor: null });
  });
});
