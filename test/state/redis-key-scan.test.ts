import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../sandbox/server.ts';
import { redisAvailable, startRedis, type TestRedis, valuesOf } from '../support/redis.ts';
import { startReplica, type Replica } from '../support/replicas.ts';

/**
 * Nothing in Redis holds an API key: after two replicas served reads, pages, writes, a refused
 * key, a multi-account key and compared answers, every key name and every value (strings,
 * hashes, sorted sets, streams, lists, sets) is scanned for each key used and for key shapes.
 */
const KEYS = ['NRAK-SANDBOX-DEMO', 'NRAK-SANDBOX-MULTI', 'NRAK-SANDBOX-SECONDARY'];
const REFUSED = 'NRAK-REFUSEDKEY0123456789ABCDEFGH';
const hasRedis = redisAvailable();


describe.skipIf(!hasRedis)('Redis after two replicas served', () => {
  let redis: TestRedis;
  let sandbox: RunningSandbox;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await createSandbox({ seed: 5, apmApps: 300 }).listen(0, '127.0.0.1');
    const env = {
      REDIS_URL: redis.url,
      NERDGRAPH_URL: `${sandbox.url}/graphql`,
      LEGACY_REST_URL: sandbox.url,
      // Comparisons too, so parity records and usage reach Redis.
      ROUTE_MODES: 'GET /v2/applications/{id}=compare;GET /v2/applications=compare;*=translate',
      MICRO_CACHE_MS: '5000',
    };
    replicas = await Promise.all([startReplica('a', env), startReplica('b', env)]);
    // Both must share before the traffic, or part of it would stay in their memories unscanned.
    for (const replica of replicas) {
      for (let i = 0; i < 200; i++) {
        const ready = (await (await fetch(`${replica.url}/readyz`)).json()) as { sharedState?: { state?: string } };
        if (ready.sharedState?.state === 'shared') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await sandbox?.close();
    await redis?.stop();
  });

  it('holds no API key in any key name or value', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const send = async (replica: Replica, path: string, key: string, init: RequestInit = {}): Promise<Response> => {
      // The multi-account key names its account, as newrelic-client-go does.
      const account: Record<string, string> = key === 'NRAK-SANDBOX-MULTI' ? { 'x-account-id': '1000001' } : {};
      const response = await fetch(`${replica.url}${path}`, { ...init, headers: { 'x-api-key': key, ...account, ...(init.headers as Record<string, string> | undefined) } });
      await response.arrayBuffer();
      return response;
    };
    const list = await fetch(`${a.url}/v2/applications.json`, { headers: { 'x-api-key': KEYS[0] as string } });
    const first = ((await list.json()) as { applications: { id: number }[] }).applications[0]?.id;
    expect(first).toBeDefined();
    for (const [n, key] of KEYS.entries()) {
      const replica = n % 2 === 0 ? a : b;
      const other = n % 2 === 0 ? b : a;
      expect((await send(replica, '/v2/applications.json', key)).status).toBe(200);
      await send(other, '/v2/applications.json?page=2', key);
      await send(replica, `/v2/applications/${first}.json`, key);
      await send(other, `/v2/applications/${first}/metrics/data.json?names[]=HttpDispatcher&values[]=call_count`, key);
      await send(replica, `/v2/applications/${first}/deployments.json`, key);
    }
    await send(a, `/v2/applications/${first}/deployments.json`, KEYS[0] as string, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'scan-1', user: 'scanner' } }),
    });
    // A translated route: on a compared one the legacy API answers the caller, and NerdGraph never sees the key.
    expect((await send(a, '/v2/mobile_applications.json', REFUSED)).status).toBe(401);
    expect((await send(b, '/v2/mobile_applications.json', REFUSED)).status).toBe(401);
    const client = redis.inspect();
    // Parity events are published in batches: wait for the stream.
    for (let i = 0; i < 200 && (await client.keys('v2b:parity:*')).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    for (const replica of replicas) expect(await replica.counter('v2bridge_shared_state_fallbacks_total')).toBe(0);
    const names = await client.keys('*');
    // Every kind of shared state the traffic makes is there to be scanned.
    const purposes = new Set(names.map((name) => name.split(':')[1]));
    for (const purpose of ['cursors', 'accounts', 'refused', 'micro', 'writes', 'identical', 'nrql-account', 'parity']) expect(purposes).toContain(purpose);
    const haystack: string[] = [];
    for (const name of names) haystack.push(name, ...(await valuesOf(client, name)));
    const text = haystack.join('\n');
    for (const key of [...KEYS, REFUSED]) expect(text).not.toContain(key);
    expect(text).not.toMatch(/NRAK-[A-Z0-9]/);
    // Every key is the gateway's own, named by its HMAC.
    for (const name of names) expect(name).toMatch(/^v2b:[a-z-]+:[A-Za-z0-9_-]{32}$/);
  }, 60_000);
});
