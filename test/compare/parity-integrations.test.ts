import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { FINGERPRINT_CHARS, NO_KEY_FINGERPRINT, seenCaller } from '../../src/caller/seen-caller.ts';
import {
  createParityStore,
  MAX_INTEGRATIONS,
  MAX_ROUTES_PER_INTEGRATION,
  OTHER_INTEGRATIONS,
  OTHER_ROUTES,
  SERIES_BUCKET_MS,
  SERIES_MAX_BUCKETS,
  WITHHELD_AGENT,
  type LocalParityStore,
  type ParityEvent,
  type ParityReport,
} from '../../src/compare/parity-store.ts';
import { shareParityStore, SHARING_DEFAULTS, type SharedParityStore } from '../../src/compare/shared-parity.ts';
import { parseEvent } from '../../src/compare/parity-wire.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { openSharedState, type OpenedState } from '../../src/state/open.ts';
import { DEMO_KEY, FIXED_NOW, SECONDARY_KEY, createTestGateway, startSandbox } from '../support/harness.ts';
import { loadTestMappings, startFixtureLegacy } from '../support/fixture-routes.ts';
import { SHOW, LIST, COMPARED, PASSTHROUGH_ONLY, mismatchRecord } from '../support/parity-fixture.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { TEST_STATE_SECRET } from '../support/replicas.ts';
import { deadOrigin } from '../support/http.ts';
import { createModesGateway } from '../support/modes.ts';
import { untilShared } from '../support/state.ts';

/**
 * What the parity store keeps for the /bridge/ page's integrations and chart: callers grouped by
 * User-Agent and key fingerprint (never the key), bounded; comparisons per hour, bounded; both
 * carried to the other replicas by the store's events, in memory and through Redis; and the
 * routing step noting every caller request.
 */
const mappings = await loadTestMappings('fixtures');
const KEY = 'NRAK-Q7WZ4KX9MD2PLR8TVB3HJ6NC5YF';
const OTHER_KEY = 'NRAK-H3TN8VQ2LK6ZP9XW4RB7MD5CJ2G';
const fingerprintOf = createIdentityHasher();
const fingerprint = (key: string): string => fingerprintOf(key).slice(0, FINGERPRINT_CHARS);
const caller = (key: string | undefined, agent: string) => seenCaller(new Headers({ ...(key ? { 'x-api-key': key } : {}), 'user-agent': agent }), fingerprintOf);

function newStore(now = () => FIXED_NOW): LocalParityStore {
  return createParityStore({ mappings, registry: createMetrics().registry, maxRecords: 100, now });
}

/** Every 8 characters of the key, any case: none may be in `text`. */
function expectNoKey(text: string, key: string): void {
  const lower = text.toLowerCase();
  for (let at = 0; at + 8 <= key.length; at += 1) expect(lower).not.toContain(key.toLowerCase().slice(at, at + 8));
}

describe('integrations in the parity store', () => {
  it('groups callers by User-Agent and key fingerprint, the one with most calls to routes not ready first', () => {
    const store = newStore();
    store.record(mismatchRecord({ at: FIXED_NOW })); // LIST differs
    store.record(mismatchRecord({ route: SHOW, outcome: 'match', differences: [], at: FIXED_NOW })); // SHOW safe
    for (let i = 0; i < 5; i += 1) store.noteCaller(SHOW, 'GET', caller(KEY, 'dashboards/1.0'));
    store.noteCaller(LIST, 'GET', caller(KEY, 'dashboards/1.0'));
    for (let i = 0; i < 3; i += 1) store.noteCaller(LIST, 'GET', caller(OTHER_KEY, 'dashboards/1.0'));
    store.noteCaller(LIST, 'HEAD', caller(undefined, ''));

    const { integrations } = store.report();
    expect(integrations.map((i) => [i.fingerprint, i.agent, i.calls, i.notReadyCalls])).toEqual([
      [fingerprint(OTHER_KEY), 'dashboards/1.0', 3, 3],
      [fingerprint(KEY), 'dashboards/1.0', 6, 1],
      [NO_KEY_FINGERPRINT, '(no User-Agent)', 1, 1],
    ]);
    // Not ready first, then by calls; HEAD is counted with GET, as everywhere in the store.
    expect(integrations[1]?.routes).toEqual([
      { route: LIST, method: 'GET', calls: 1, readiness: 'differs', ready: false },
      { route: SHOW, method: 'GET', calls: 5, readiness: 'safe to translate', ready: true },
    ]);
    expect(integrations[2]?.routes[0]).toMatchObject({ route: LIST, method: 'GET' });
    expectNoKey(JSON.stringify(store.report()), KEY);
    expectNoKey(JSON.stringify(store.report()), OTHER_KEY);
  });

  it('withholds a User-Agent that carries the key, plain or disguised, and redacts and bounds the others', () => {
    const store = newStore();
    const base64 = Buffer.from(KEY).toString('base64');
    const hex = Buffer.from(OTHER_KEY.slice(5)).toString('hex');
    store.noteCaller(LIST, 'GET', caller(KEY, `ci-bot/2 (token ${base64})`));
    store.noteCaller(LIST, 'GET', caller(OTHER_KEY, `ci-bot/3 ${hex}`));
    store.noteCaller(LIST, 'GET', caller(undefined, `curl/8 NRAK-${'Z'.repeat(27)}`));
    store.noteCaller(LIST, 'GET', caller(OTHER_KEY, `long-agent/${'x'.repeat(400)}`));
    const agents = store.report().integrations.map((i) => i.agent);
    expect(agents.filter((a) => a === WITHHELD_AGENT)).toHaveLength(3);
    const long = agents.find((a) => a.startsWith('long-agent/'));
    expect(long?.length).toBeLessThanOrEqual(161);
    const json = JSON.stringify(store.report());
    expect(json).not.toContain(base64.slice(0, 12));
    expect(json).not.toContain(hex.slice(0, 16));
    expectNoKey(json, KEY);
  });

  it(`keeps at most ${MAX_INTEGRATIONS} integrations and ${MAX_ROUTES_PER_INTEGRATION} routes each, counting the rest together`, () => {
    const store = newStore();
    for (let i = 0; i < MAX_INTEGRATIONS + 20; i += 1) store.noteCaller(LIST, 'GET', caller(`NRAK-BOUND${i}`, `agent-${i}`));
    for (let i = 0; i < 70; i += 1) store.noteCaller(`/v2/made_up_${i}.json`, 'GET', caller(KEY, 'walker'));
    for (const route of [LIST, SHOW, COMPARED, PASSTHROUGH_ONLY]) for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'BREW']) store.noteCaller(route, method, caller('NRAK-BOUND1', 'agent-1'));

    const { integrations } = store.report();
    // The walker came after the bound too: it is one of the others.
    expect(integrations).toHaveLength(MAX_INTEGRATIONS + 1);
    const others = integrations.find((i) => i.fingerprint === OTHER_INTEGRATIONS);
    expect(others?.calls).toBe(20 + 70);
    // Unknown routes are `unmapped`, one label: no growth from made-up paths.
    expect(others?.routes.map((r) => r.route).sort()).toEqual([LIST, 'unmapped'].sort());
    const busy = integrations.find((i) => i.agent === 'agent-1');
    expect(busy?.routes.length).toBeLessThanOrEqual(MAX_ROUTES_PER_INTEGRATION + 1);
    expect(busy?.calls).toBe(1 + 4 * 7);
  });

  it('routes past the bound are counted together, with no readiness', () => {
    // A table with more routes than the bound (declared routes, not unmapped paths).
    const templates = Array.from({ length: MAX_ROUTES_PER_INTEGRATION + 12 }, (_, i) => `/v2/fixture_routes_${i}.{format}`);
    const store = createParityStore({
      mappings: templates.map((route) => ({ route, method: 'GET', fidelity: 'exact', summary: `Fixture route ${route}` })),
      registry: createMetrics().registry,
      maxRecords: 100,
      now: () => FIXED_NOW,
    });
    expect(templates.length).toBeGreaterThan(MAX_ROUTES_PER_INTEGRATION);
    for (const route of templates) store.noteCaller(route, 'GET', caller(KEY, 'crawler'));
    const [crawler] = store.report().integrations;
    expect(crawler?.routes).toHaveLength(MAX_ROUTES_PER_INTEGRATION + 1);
    expect(crawler?.routes.find((r) => r.route === OTHER_ROUTES)).toMatchObject({ calls: templates.length - MAX_ROUTES_PER_INTEGRATION, readiness: null, ready: false });
    expect(crawler?.calls).toBe(templates.length);
  });
});

describe('comparisons per hour in the parity store', () => {
  const hour = (n: number): number => FIXED_NOW - (FIXED_NOW % SERIES_BUCKET_MS) - n * SERIES_BUCKET_MS;

  it('counts matches, mismatches and noise per hour, and nothing else', () => {
    const store = newStore();
    store.record(mismatchRecord({ at: hour(2) + 10 }));
    store.record(mismatchRecord({ at: hour(2) + 20, outcome: 'match', differences: [] }));
    store.record(mismatchRecord({ at: hour(0) + 5, outcome: 'noise' }));
    store.record(mismatchRecord({ at: hour(0) + 6, outcome: 'error', differences: [], error: 'timeout' }));
    store.dropped(LIST, 'GET');
    expect(store.report().series).toEqual({
      bucketMs: SERIES_BUCKET_MS,
      maxBuckets: SERIES_MAX_BUCKETS,
      buckets: [
        { start: hour(2), match: 1, mismatch: 1, noise: 0 },
        { start: hour(0), match: 0, mismatch: 0, noise: 1 },
      ],
    });
  });

  it(`keeps the newest ${SERIES_MAX_BUCKETS} hours`, () => {
    const store = newStore();
    for (let n = SERIES_MAX_BUCKETS + 9; n >= 0; n -= 1) store.record(mismatchRecord({ at: hour(n) }));
    // An hour older than every one kept is not counted once the series is full.
    store.record(mismatchRecord({ at: hour(SERIES_MAX_BUCKETS + 50) }));
    const { buckets } = store.report().series;
    expect(buckets).toHaveLength(SERIES_MAX_BUCKETS);
    expect(buckets[0]?.start).toBe(hour(SERIES_MAX_BUCKETS - 1));
    expect(buckets.at(-1)?.start).toBe(hour(0));
  });
});

describe('integrations and the series on another replica', () => {
  const fill = (store: LocalParityStore | SharedParityStore): void => {
    store.noteUsage(LIST, 'GET', 'compare');
    store.noteCaller(LIST, 'GET', caller(KEY, 'dashboards/1.0'));
    store.noteCaller(LIST, 'GET', caller(KEY, 'dashboards/1.0'));
    store.noteCaller(SHOW, 'GET', caller(OTHER_KEY, '<b>sla</b>'));
    store.record(mismatchRecord({ at: FIXED_NOW - 2 * SERIES_BUCKET_MS }));
    store.record(mismatchRecord({ route: SHOW, outcome: 'match', differences: [], at: FIXED_NOW - SERIES_BUCKET_MS }));
    store.record(mismatchRecord({ route: SHOW, outcome: 'match', differences: [], at: FIXED_NOW }));
  };
  const shown = (report: ParityReport) => ({ integrations: report.integrations, series: report.series });

  it("are rebuilt from this replica's events, as they travel (checked by the wire schema)", () => {
    const a = newStore();
    const b = newStore(() => FIXED_NOW + 99 * SERIES_BUCKET_MS);
    const events: ParityEvent[] = [];
    a.onLocalEvent((event) => events.push(event));
    fill(a);
    for (const event of events) {
      const parsed = parseEvent(JSON.parse(JSON.stringify(event)));
      expect(parsed, JSON.stringify(event)).toBeDefined();
      b.applyRemote(parsed as ParityEvent);
    }
    expect(shown(b.report())).toEqual(shown(a.report()));
    expect(a.report().integrations).toHaveLength(2);
    expectNoKey(JSON.stringify(events), KEY);
    expectNoKey(JSON.stringify(events), OTHER_KEY);
  });

  it("counts a batch of matches from a replica that sends no time at the time it arrives", () => {
    const b = newStore(() => FIXED_NOW);
    b.applyRemote({ kind: 'matched', route: SHOW, method: 'GET', mode: 'compare', count: 4, onSuccess: 4 });
    expect(b.report().series.buckets).toEqual([{ start: FIXED_NOW - (FIXED_NOW % SERIES_BUCKET_MS), match: 4, mismatch: 0, noise: 0 }]);
  });

  it('refuses a time no Date can hold, so a bad event from a replica cannot break the page', () => {
    const matched = { kind: 'matched', route: SHOW, method: 'GET', mode: 'compare', count: 1, onSuccess: 1 };
    expect(parseEvent({ ...matched, at: 1e300 })).toBeUndefined();
    expect(parseEvent({ ...matched, at: -5 })).toBeUndefined();
    expect(parseEvent({ ...matched, at: FIXED_NOW })).toBeDefined();
    const b = newStore(() => FIXED_NOW);
    b.applyRemote({ ...matched, at: 1e300 } as Parameters<typeof b.applyRemote>[0]);
    expect(b.report().series.buckets).toEqual([]);
  });

  const hasRedis = redisAvailable();
  describe.skipIf(!hasRedis)('through Redis', () => {
    let redis: TestRedis;
    const sides: Array<{ opened: OpenedState; store: SharedParityStore }> = [];
    beforeAll(async () => {
      redis = await startRedis();
      for (let i = 0; i < 2; i += 1) {
        const metrics = createMetrics();
        const opened = openSharedState({ redisUrl: redis.url, secret: TEST_STATE_SECRET, timeoutMs: 2000, probeMs: 50 }, metrics);
        const store = shareParityStore(createParityStore({ mappings, registry: metrics.registry, maxRecords: 100, now: () => FIXED_NOW }), opened, metrics.registry, SHARING_DEFAULTS);
        sides.push({ opened, store });
        await untilShared(opened.state);
      }
    });
    afterAll(async () => {
      for (const side of sides) {
        await side.store.close();
        await side.opened.state.close();
      }
      await redis?.stop();
    });

    it('show the same integrations and chart on both replicas, with no key in the stream', async () => {
      const [a, b] = sides as [(typeof sides)[0], (typeof sides)[0]];
      fill(a.store);
      await a.store.flush();
      await b.store.refresh();
      expect(shown(b.store.report())).toEqual(shown(a.store.report()));
      expect(b.store.report().integrations.map((i) => i.calls)).toEqual([2, 1]);
      const entries = await redis.inspect().xrange(a.opened.keyOf('parity', 'events'), '-', '+');
      const text = entries.flatMap(([, fields]) => fields).join('\n');
      expectNoKey(text, KEY);
      expectNoKey(text, OTHER_KEY);
    });
  });
});

describe('the routing step counts every caller request for its integration', () => {
  it('but not a request whose key was refused: made-up keys fill neither the integrations nor the routes in use', async () => {
    const upstream = await startSandbox({ apmApps: 5 });
    try {
      const opened = openSharedState({ timeoutMs: 1000, probeMs: 1000 }, createMetrics());
      const store = newStore();
      const gateway = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: upstream.graphqlUrl, shared: opened, bridge: { store } });
      for (let i = 0; i < 5; i++) {
        const refused = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': `NRAK-MADEUP${String(i).padStart(22, '0')}`, 'User-Agent': `flood/${i}` } });
        expect(refused.status).toBe(401);
        await refused.arrayBuffer();
      }
      const served = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY, 'User-Agent': 'exporter/1' } });
      expect(served.status).toBe(200);
      await served.arrayBuffer();
      const report = store.report();
      expect(report.integrations.map((i) => [i.agent, i.calls])).toEqual([['exporter/1', 1]]);
      expect(report.usage).toEqual([]);

      // The usage (the head's routes in use) is counted by the modes: a refused key is not counted there either.
      const modes = await createModesGateway({ nerdgraphUrl: upstream.graphqlUrl, legacyUrl: 'http://127.0.0.1:9', routeModes: '*=translate' });
      await (await modes.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': 'NRAK-MADEUP0000000000000000000000' } })).arrayBuffer();
      await (await modes.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY } })).arrayBuffer();
      expect(modes.sink.usage).toEqual([{ route: LIST, method: 'GET', mode: 'translate' }]);

      // A request the legacy API failed (thrown to the error handler) is a use all the same.
      const outage = await createModesGateway({ nerdgraphUrl: upstream.graphqlUrl, legacyUrl: await deadOrigin(), routeModes: '*=passthrough' });
      const failed = await outage.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY } });
      expect(failed.status).toBeGreaterThanOrEqual(500);
      await failed.arrayBuffer();
      expect(outage.sink.usage).toEqual([{ route: LIST, method: 'GET', mode: 'passthrough' }]);
    } finally {
      await upstream.close();
    }
  });

  it('by the fingerprint of the key it sent and its User-Agent, once the key is known good, whether the request succeeded or not', async () => {
    const upstream = await startSandbox({ apmApps: 5 });
    try {
      const opened = openSharedState({ timeoutMs: 1000, probeMs: 1000 }, createMetrics());
      const store = newStore();
      const gateway = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: upstream.graphqlUrl, shared: opened, bridge: { store } });
      for (const [key, agent] of [[DEMO_KEY, 'exporter/1'], [DEMO_KEY, 'exporter/1'], [SECONDARY_KEY, '<script>alert(1)</script>']] as const) {
        const res = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': key, 'User-Agent': agent } });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      // A known key's request answered before any key check (an unknown path) still counts.
      const unknown = await gateway.app.request('/v2/no_such_thing.json', { headers: { 'Api-Key': DEMO_KEY, 'User-Agent': 'exporter/1' } });
      expect(unknown.status).toBe(404);
      await unknown.arrayBuffer();
      await (await gateway.app.request('/healthz', { headers: { 'X-Api-Key': DEMO_KEY } })).arrayBuffer();

      const mine = opened.fingerprintOf(DEMO_KEY).slice(0, FINGERPRINT_CHARS);
      const { integrations } = store.report();
      expect(integrations.map((i) => [i.fingerprint, i.agent, i.calls])).toEqual([
        [mine, 'exporter/1', 3],
        [opened.fingerprintOf(SECONDARY_KEY).slice(0, FINGERPRINT_CHARS), '<script>alert(1)</script>', 1],
      ]);
      expect(integrations[0]?.routes.map((r) => `${r.method} ${r.route}`).sort()).toEqual([`GET ${LIST}`, 'GET unmapped']);
      expect(mine).not.toBe(DEMO_KEY.slice(0, FINGERPRINT_CHARS));
      // Not the key's identity either (what caches key by): a secret of its own.
      expect(opened.identityOf(DEMO_KEY).startsWith(mine)).toBe(false);

      const page = await (await gateway.app.request('/bridge/')).text();
      expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(page).not.toContain('<script>alert(1)');
      expectNoKey(page, DEMO_KEY);
      expectNoKey(page, SECONDARY_KEY);
    } finally {
      await upstream.close();
    }
  });

  it('not for a key never known good: invented keys on unknown paths, or with NerdGraph down, make no integration', async () => {
    const upstream = await startSandbox({ apmApps: 5 });
    try {
      const opened = openSharedState({ timeoutMs: 1000, probeMs: 1000 }, createMetrics());
      const store = newStore();
      const gateway = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: upstream.graphqlUrl, shared: opened, bridge: { store } });
      const served = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY, 'User-Agent': 'exporter/1' } });
      expect(served.status).toBe(200);
      await served.arrayBuffer();
      // An unknown path, a method the route does not serve, a bad format: answered before any key check.
      for (let i = 0; i < MAX_INTEGRATIONS + 5; i++) {
        const path = ['/v2/no_such_thing.json', '/v2/fixture_widgets.yaml', '/v2/fixture_widgets/1.json'][i % 3] as string;
        const res = await gateway.app.request(path, { method: i % 3 === 2 ? 'PATCH' : 'GET', headers: { 'X-Api-Key': `NRAK-INVENTED${String(i).padStart(20, '0')}`, 'User-Agent': `flood/${i}` } });
        expect([404, 405]).toContain(res.status);
        await res.arrayBuffer();
      }
      const after = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': SECONDARY_KEY, 'User-Agent': 'dashboards/2' } });
      expect(after.status).toBe(200);
      await after.arrayBuffer();
      expect(store.report().integrations.map((i) => [i.agent, i.calls])).toEqual([
        ['dashboards/2', 1],
        ['exporter/1', 1],
      ]);

      // NerdGraph down: an unverified key is no integration either.
      const outage = newStore();
      const down = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: 'http://127.0.0.1:9/graphql', shared: openSharedState({ timeoutMs: 1000, probeMs: 1000 }, createMetrics()), bridge: { store: outage } });
      const failed = await down.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': KEY, 'User-Agent': 'flood/x' } });
      expect(failed.status).toBeGreaterThanOrEqual(500);
      await failed.arrayBuffer();
      expect(outage.report().integrations).toEqual([]);

      // Passthrough: the legacy API's 2xx makes a key known good; its 404 for an unknown path does not.
      const relayed = newStore();
      const legacy = await startFixtureLegacy(upstream.sandbox, upstream.url);
      onTestFinished(() => legacy.close());
      const modes = await createModesGateway({ nerdgraphUrl: upstream.graphqlUrl, legacyUrl: legacy.origin, routeModes: '*=passthrough', bridge: { store: relayed } });
      for (let i = 0; i < 5; i++) {
        const res = await modes.app.request('/v2/no_such_thing.json', { headers: { 'X-Api-Key': `NRAK-INVENTED${String(i).padStart(20, '0')}`, 'User-Agent': `flood/${i}` } });
        expect(res.status).toBe(404);
        await res.arrayBuffer();
      }
      for (const path of ['/v2/fixture_widgets.json', '/v2/no_such_thing.json']) {
        const res = await modes.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY, 'User-Agent': 'exporter/1' } });
        await res.arrayBuffer();
      }
      expect(relayed.report().integrations.map((i) => [i.agent, i.calls])).toEqual([['exporter/1', 2]]);
    } finally {
      await upstream.close();
    }
  });
});
