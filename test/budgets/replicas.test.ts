import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { startReplica, type Replica } from '../support/replicas.ts';
import { startUpstreamMeter, type UpstreamMeter } from '../support/upstream-meter.ts';

/**
 * The concurrency budget held across two gateway processes that share only Redis: under a
 * load that would put more than the limit in flight, NerdGraph (the meter in front of the
 * sandbox) never sees more than NERDGRAPH_CONCURRENCY_PER_KEY calls of one key at once. The
 * same load on two replicas without Redis (each keeping the limit alone) shows the load is
 * able to exceed it, so the first assertion can fail.
 */
const KEY = 'NRAK-SANDBOX-DEMO';
const LIMIT = 3;
const REQUESTS = 40;
const headers = { 'x-api-key': KEY };

const hasRedis = redisAvailable();

async function sharedStatus(replica: Replica): Promise<{ state?: string; fallbacks?: number } | undefined> {
  return ((await (await fetch(`${replica.url}/readyz`)).json()) as { sharedState?: { state?: string; fallbacks?: number } }).sharedState;
}

async function untilShared(replica: Replica): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await sharedStatus(replica))?.state === 'shared') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`replica ${replica.name} never reached Redis:\n${replica.output()}`);
}

/** REQUESTS requests at once, alternating between the replicas: the statuses answered. */
async function load(replicas: Replica[], appIds: number[]): Promise<number[]> {
  return Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const replica = replicas[i % replicas.length] as Replica;
      const answer = await fetch(`${replica.url}/v2/applications/${appIds[i % appIds.length]}.json`, { headers });
      await answer.arrayBuffer();
      return answer.status;
    }),
  );
}

describe.skipIf(!hasRedis)('concurrency budget across two gateway processes', () => {
  let redis: TestRedis;
  let sandbox: RunningSandbox;
  let meter: UpstreamMeter;
  let appIds: number[];
  const replicas: Replica[] = [];

  const start = async (name: string, env: Record<string, string>): Promise<Replica> => {
    const replica = await startReplica(name, {
      NERDGRAPH_URL: meter.url,
      LEGACY_REST_URL: sandbox.url,
      NERDGRAPH_CONCURRENCY_PER_KEY: String(LIMIT),
      MICRO_CACHE_MS: '0',
      // A loaded CI machine must not degrade a replica to its own memory mid-test (that is
      // shared-state.test's subject): Redis answers slowly here, it is not gone.
      STATE_TIMEOUT_MS: '3000',
      ...env,
    });
    replicas.push(replica);
    return replica;
  };

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await createSandbox({ seed: 42, apmApps: 50 }).listen(0, '127.0.0.1');
    meter = await startUpstreamMeter(`${sandbox.url}/graphql`, { delayMs: 100 });
    const list = (await (await fetch(`${sandbox.url}/v2/applications.json`, { headers })).json()) as { applications: { id: number }[] };
    appIds = list.applications.map((app) => app.id);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await meter?.close();
    await sandbox?.close();
    await redis?.stop();
  });

  it(`keeps NerdGraph at most ${LIMIT} calls in flight for the key, with 0 gateway 5xx`, async () => {
    const [a, b] = await Promise.all([start('a', { REDIS_URL: redis.url }), start('b', { REDIS_URL: redis.url })]);
    await Promise.all([untilShared(a as Replica), untilShared(b as Replica)]);
    meter.resetCounts();

    // What Redis holds while the load runs: the leases (names, and their members' values).
    const client = redis.inspect();
    const seen = new Map<string, string[]>();
    let loading = true;
    const watching = (async () => {
      while (loading) {
        for (const name of await client.keys('*')) {
          if ((await client.type(name)) === 'zset') seen.set(name, [...(seen.get(name) ?? []), ...(await client.zrange(name, '0', '-1'))]);
          else seen.set(name, seen.get(name) ?? []);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const statuses = await load([a as Replica, b as Replica], appIds).finally(() => (loading = false));
    await watching;

    // Both kept to Redis throughout: the budget was shared, not each replica's own.
    for (const replica of [a, b] as Replica[]) expect(await sharedStatus(replica)).toMatchObject({ state: 'shared', fallbacks: 0 });
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    // The deadline (10 s) leaves room for every queued call.
    expect(statuses.filter((status) => status === 200)).toHaveLength(REQUESTS);
    // The load did fill the budget, and never passed it.
    expect(meter.peakInFlight(KEY)).toBe(LIMIT);
    for (const replica of [a, b] as Replica[]) {
      expect(await replica.counter('v2bridge_budget_decisions_total', { budget: 'concurrency' })).toBeGreaterThan(0);
    }
    const queued = (await a!.counter('v2bridge_budget_decisions_total', { budget: 'concurrency', result: 'queued' })) + (await b!.counter('v2bridge_budget_decisions_total', { budget: 'concurrency', result: 'queued' }));
    expect(queued).toBeGreaterThan(0);
    // Neither replica's key appears in what it exports, nor in what the budgets keep in Redis.
    for (const replica of [a, b] as Replica[]) expect(await replica.metrics()).not.toContain(KEY);
    // One lease set for the key's user (budgets per user), and the key's own
    // for its accounts look-up, made before its user was known.
    expect([...seen.keys()].filter((name) => name.startsWith('v2b:concurrency:')).length).toBeLessThanOrEqual(2);
    for (const [name, members] of seen) {
      expect(name).not.toContain(KEY);
      for (const member of members) expect(member).not.toContain(KEY);
    }
  }, 60_000);

  it('without shared state the same load passes the limit (each replica keeps it alone)', async () => {
    const [c, d] = await Promise.all([start('c', {}), start('d', {})]);
    meter.resetCounts();
    const statuses = await load([c as Replica, d as Replica], appIds);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(meter.peakInFlight(KEY)).toBeGreaterThan(LIMIT);
  }, 60_000);
});
