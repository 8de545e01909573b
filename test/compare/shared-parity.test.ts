import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchReport } from '../../scripts/report.ts';
import type { ParityReport } from '../../src/compare/parity-store.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { serveOnLoopback } from '../support/http.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { TEST_STATE_SECRET } from '../support/replicas.ts';

/**
 * Behind a load balancer, the parity report of any replica (/bridge/parity.json, the /bridge/
 * page, `npm run report`) tells the story of all of them: every request counted once, the
 * outcomes summed, the recent records of all; /metrics stays each replica's own. Gateways built
 * as `npm start` builds them (compare mode on every route, the sandbox's NerdGraph face renaming
 * applications so comparisons find differences), sharing one real Redis.
 */
const DEMO_KEY = 'NRAK-SANDBOX-DEMO';
/** Key-shaped text a caller puts in a query: recorded in the request path, and must be masked. */
const KEY_IN_QUERY = 'NRAK-QUERYSENTINEL0123456789';
/** And in a write's body: kept in the record of what the translation would have sent. */
const KEY_IN_BODY = 'NRAK-BODYSENTINEL0123456789';

interface Replica {
  gateway: BuiltGateway;
  url: string;
  stop(): Promise<void>;
}

async function startReplica(redisUrl: string): Promise<Replica> {
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    REDIS_URL: redisUrl,
    STATE_SECRET: TEST_STATE_SECRET,
    // Comparing big answers can hold this busy test process's event loop past the default
    // 200 ms: a Redis answer seen late would degrade a replica and drop its events (counted).
    STATE_TIMEOUT_MS: '2000',
    STATE_PROBE_MS: '100',
    ROUTE_MODES: '*=compare',
    SANDBOX_DIVERGE: 'app-names',
    SANDBOX_LEGACY_JITTER: 'false',
    COMPARE_SAMPLE_RATE: '1',
    COMPARE_MAX_LOOP_UTILISATION: '1',
    NERDGRAPH_URL: '',
    NEW_RELIC_REGION: '',
    LEGACY_REST_URL: '',
    BRIDGE_TOKEN: '',
    LOG_LEVEL: 'silent',
  });
  const gateway = await buildGateway(config, { logger: createLogger('silent') });
  for (let i = 0; i < 200 && gateway.shared.state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const server = await serveOnLoopback(gateway.app.fetch);
  return {
    gateway,
    url: server.url,
    async stop() {
      await server.close();
      await gateway.close();
    },
  };
}

async function get(replica: Replica, path: string): Promise<Response> {
  const response = await fetch(`${replica.url}${path}`, { headers: { 'x-api-key': DEMO_KEY } });
  await response.arrayBuffer();
  expect(response.status).toBeLessThan(500);
  return response;
}

/** The sum of a counter's series on a replica's /metrics (labels filter by substring). */
async function counter(replica: Replica, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${replica.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** This replica's own comparisons (Prometheus counts only its own), once the shadow work is done. */
async function comparedHere(replica: Replica, expected: number): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if ((await counter(replica, 'v2bridge_compare_results_total')) >= expected) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the comparisons did not finish on ${replica.url}`);
}

async function parityOf(replica: Replica): Promise<ParityReport> {
  const response = await fetch(`${replica.url}/bridge/parity.json?recent=1000`);
  expect(response.status).toBe(200);
  return (await response.json()) as ParityReport;
}

/** What every replica must agree on: counts per route, usage, and which records are recent. */
function story(report: ParityReport) {
  return {
    totals: report.totals,
    routes: report.routes.filter((r) => r.requests > 0 || Object.values(r.outcomes).some((n) => n > 0)).map((r) => ({ route: r.route, method: r.method, requests: r.requests, outcomes: r.outcomes, verdict: r.verdict })),
    usage: report.usage.map((u) => ({ route: u.route, method: u.method, requests: u.requests, byMode: u.byMode })),
    recent: report.recent.map((r) => r.id).sort(),
  };
}

const OUTCOME_NAMES = ['match', 'mismatch', 'noise', 'error', 'dropped', 'dry_run'] as const;

const hasRedis = redisAvailable();

describe.skipIf(!hasRedis)('parity shared across replicas', () => {
  let redis: TestRedis;
  let a: Replica;
  let b: Replica;
  const late: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startReplica(redis.url), startReplica(redis.url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a, b, ...late].filter((r) => r !== undefined).map((r) => r.stop()));
    await redis?.stop();
  });

  it('shows every replica its own and the others’ requests once each, outcomes summed, while /metrics counts its own', async () => {
    // A: three list reads (applications renamed: mismatches) and one with key-shaped text in its query (also a mismatch).
    for (let i = 0; i < 3; i++) await get(a, '/v2/applications.json');
    await get(a, `/v2/applications.json?filter[name]=Amber&note=${KEY_IN_QUERY}`);
    // B: two list reads and a show.
    const list = (await (await fetch(`${b.url}/v2/applications.json`, { headers: { 'x-api-key': DEMO_KEY } })).json()) as { applications: Array<{ id: number }> };
    await get(b, '/v2/applications.json');
    await get(b, `/v2/applications/${list.applications[0]?.id}.json`);
    const sentToA = 4;
    const sentToB = 3;
    await Promise.all([comparedHere(a, sentToA), comparedHere(b, sentToB)]);
    await Promise.all([a.gateway.store.flush(), b.gateway.store.flush()]);

    // Each replica's own outcomes, as its Prometheus counters have them.
    const expectedOutcomes = Object.fromEntries(
      await Promise.all(
        OUTCOME_NAMES.map(async (outcome) => [
          outcome,
          (await counter(a, 'v2bridge_compare_results_total', { outcome })) + (await counter(b, 'v2bridge_compare_results_total', { outcome })),
        ]),
      ),
    );
    expect(expectedOutcomes.mismatch).toBeGreaterThan(0);

    expect(await counter(a, 'v2bridge_parity_events_unshared_total')).toBe(0);
    expect(await counter(b, 'v2bridge_parity_events_unshared_total')).toBe(0);
    const fromA = await parityOf(a);
    expect(fromA.totals.requests).toBe(sentToA + sentToB);
    expect(fromA.totals.outcomes).toEqual(expectedOutcomes);
    const listRoute = fromA.usage.find((u) => u.route === '/v2/applications.{format}' && u.method === 'GET');
    expect(listRoute).toMatchObject({ requests: 6, byMode: { compare: 6 } });
    expect(fromA.usage.find((u) => u.route === '/v2/applications/{id}.{format}')).toMatchObject({ requests: 1 });
    // The recent records of both: mismatches on A's and on B's list reads.
    const recentRequests = fromA.recent.map((r) => r.request);
    expect(recentRequests.filter((r) => r.startsWith('/v2/applications.json')).length).toBe(expectedOutcomes.mismatch);

    // B tells the same story, and so does `npm run report` against either.
    const fromB = await parityOf(b);
    expect(story(fromB)).toEqual(story(fromA));
    const printedA = await fetchReport(a.url, undefined);
    const printedB = await fetchReport(b.url, undefined);
    expect(printedA.totals).toEqual(fromA.totals);
    expect(printedB.totals).toEqual(fromA.totals);

    // Counted once: more rounds of publishing and reading (each waits for its read) add nothing.
    for (let round = 0; round < 2; round++) {
      await Promise.all([a.gateway.store.flush(), b.gateway.store.flush()]);
      await Promise.all([a.gateway.store.refresh(), b.gateway.store.refresh()]);
    }
    expect(story(await parityOf(a))).toEqual(story(fromA));
    expect(story(await parityOf(b))).toEqual(story(fromA));

    // Prometheus sums the replicas itself: each /metrics counts only its own requests.
    expect(await counter(a, 'v2bridge_route_usage_total')).toBe(sentToA);
    expect(await counter(b, 'v2bridge_route_usage_total')).toBe(sentToB);
    expect(await counter(a, 'v2bridge_compare_results_total')).toBe(sentToA);
    expect(await counter(a, 'v2bridge_parity_events_applied_total')).toBe(2 * sentToB);
    expect(await counter(a, 'v2bridge_parity_events_unshared_total')).toBe(0);
  }, 60_000);

  it('shows a replica started later the history still in the stream', async () => {
    const before = story(await parityOf(a));
    const c = await startReplica(redis.url);
    late.push(c);
    // Its first report reads the stream from its start: no wait for a timer.
    expect(story(await parityOf(c))).toEqual(before);
    expect(await counter(c, 'v2bridge_route_usage_total')).toBe(0);
  }, 60_000);

  it('never puts an API key or key-shaped text in the stream (or any key name)', async () => {
    // A write in compare mode: the record keeps the mutation the translation would have sent, description included.
    const list = (await (await fetch(`${a.url}/v2/applications.json`, { headers: { 'x-api-key': DEMO_KEY } })).json()) as { applications: Array<{ id: number }> };
    const before = await counter(a, 'v2bridge_compare_results_total');
    const write = await fetch(`${a.url}/v2/applications/${list.applications[0]?.id}/deployments.json`, {
      method: 'POST',
      headers: { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'v9.9.9', description: `rotated ${KEY_IN_BODY} today`, user: 'ci' } }),
    });
    expect(write.status).toBe(201);
    await comparedHere(a, before + 2);
    await a.gateway.store.flush();

    const inspector = redis.inspect();
    const names = await inspector.keys('*');
    expect(names.length).toBeGreaterThan(0);
    const stream = a.gateway.shared.keyOf('parity', 'events');
    expect(names).toContain(stream);
    const entries = await inspector.xrange(stream, '-', '+');
    expect(entries.length).toBeGreaterThan(0);
    const everything = [...names, ...entries.flatMap(([id, fields]) => [id, ...fields])].join('\n');
    // The stream holds the requests that differed (the masked query included) ...
    expect(everything).toContain('/v2/applications.json?filter[name]=Amber&note=[redacted]');
    expect(everything).toContain('rotated [redacted] today');
    // ... and no key, whole or in part.
    expect(everything).not.toContain(DEMO_KEY);
    expect(everything).not.toContain(KEY_IN_QUERY);
    expect(everything).not.toContain(KEY_IN_BODY);
    expect(everything).not.toMatch(/NRAK-/i);
  });

  it('keeps counting while Redis is gone, counts what it could not share, and shares again once Redis is back', async () => {
    const seenByB = (await parityOf(b)).totals.requests;
    await redis.kill();
    await get(a, '/v2/applications.json');
    await get(a, '/v2/applications.json');
    await comparedHere(a, 8);
    await a.gateway.store.flush();
    // Counted by A itself, not shared: the two requests and their two comparisons.
    expect((await parityOf(a)).totals.requests).toBe(seenByB + 2);
    expect(await counter(a, 'v2bridge_parity_events_unshared_total')).toBe(4);

    await redis.restart();
    for (const replica of [a, b]) {
      for (let i = 0; i < 400 && replica.gateway.shared.state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(replica.gateway.shared.state.status().state).toBe('shared');
    }
    await get(a, '/v2/applications.json');
    await comparedHere(a, 9);
    await a.gateway.store.flush();
    // B gets what A published after Redis came back (what was dropped stays A's own).
    expect((await parityOf(b)).totals.requests).toBe(seenByB + 1);
    expect((await parityOf(a)).totals.requests).toBe(seenByB + 3);
  }, 60_000);
});
