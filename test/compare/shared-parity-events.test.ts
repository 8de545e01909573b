import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParityStore, type ParityReport } from '../../src/compare/parity-store.ts';
import { shareParityStore, SHARING_DEFAULTS, type SharedParityStore } from '../../src/compare/shared-parity.ts';
import type { ComparisonRecord } from '../../src/compare/types.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { openSharedState, type OpenedState } from '../../src/state/open.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { TEST_STATE_SECRET } from '../support/replicas.ts';
import { LIST, mismatchRecord } from '../support/parity-fixture.ts';
import { loadTestMappings, SPROCKETS } from '../support/fixture-routes.ts';
import { metricSum, untilShared } from '../support/state.ts';

/**
 * The events one replica's parity store shares, seen from the stream and from another store:
 * key-shaped text in answer values, dry-run variables and tally patterns is masked before it
 * leaves the replica; what another replica wrote is checked before it is applied; a big record
 * keeps every count; without Redis nothing changes.
 */
const SENTINEL = 'NRAK-EVENTSENTINEL0123456789';
const mappings = await loadTestMappings('fixtures');

interface Side {
  opened: OpenedState;
  metrics: GatewayMetrics;
  store: SharedParityStore;
}

function side(redisUrl: string | undefined): Side {
  const metrics = createMetrics();
  const opened = openSharedState({ redisUrl, secret: TEST_STATE_SECRET, timeoutMs: 2000, probeMs: 50 }, metrics);
  const store = shareParityStore(createParityStore({ mappings, registry: metrics.registry, maxRecords: 100 }), opened, metrics.registry, SHARING_DEFAULTS);
  return { opened, metrics, store };
}

const connected = (s: Side): Promise<void> => untilShared(s.opened.state);

const value = (s: Side, metric: string): Promise<number> => metricSum(s.metrics.registry, metric);

/** The store's usual mismatch, with the sentinel key in both of its values. */
const record = (overrides: Partial<ComparisonRecord> = {}): ComparisonRecord =>
  mismatchRecord({
    differences: [{ path: 'widgets[id=5].name', pattern: 'widgets[].name', kind: 'value', verdict: 'mismatch', legacy: `app ${SENTINEL}`, translated: { note: SENTINEL } }],
    ...overrides,
  });

/** The report minus its time of generation. */
const contents = (report: ParityReport): Omit<ParityReport, 'generatedAt'> => {
  const { generatedAt: _generatedAt, ...rest } = report;
  return rest;
};

const hasRedis = redisAvailable();
/** A time well inside one hour. */
const MID_HOUR = Date.UTC(2026, 10, 22, 12, 20);

describe.skipIf(!hasRedis)('parity events in the shared stream', () => {
  let redis: TestRedis;
  let a: Side;
  let b: Side;

  beforeAll(async () => {
    redis = await startRedis();
    a = side(redis.url);
    b = side(redis.url);
    await Promise.all([connected(a), connected(b)]);
  });

  afterAll(async () => {
    for (const s of [a, b]) {
      await s?.store.close();
      await s?.opened.state.close();
    }
    await redis?.stop();
  });

  it('carry no key-shaped text, and another replica shows what this one keeps', async () => {
    a.store.noteUsage(LIST, 'GET', 'compare');
    a.store.record(record({ tally: [{ pattern: `widgets[].${SENTINEL}`, kind: 'value', verdict: 'mismatch', count: 3 }] }));
    a.store.record(
      record({
        route: '/v2/fixture_widgets/{id}/notes.{format}',
        method: 'POST',
        outcome: 'dry_run',
        differences: [],
        dryRun: { side: 'translated', calls: [{ operation: 'DeploymentCreate', variables: { description: `rotated ${SENTINEL}`, [SENTINEL]: 1 } }] },
        error: `upstream said ${SENTINEL}`,
      }),
    );
    a.store.dropped(LIST, 'GET');
    await a.store.flush();

    const entries = await redis.inspect().xrange(a.opened.keyOf('parity', 'events'), '-', '+');
    const text = entries.flatMap(([, fields]) => fields).join('\n');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(SENTINEL);
    expect(text).not.toMatch(/NRAK-/i);

    await b.store.refresh();
    // B keeps exactly what A keeps (the same cleaned records, patterns and counts).
    expect(contents(b.store.report({ recent: 100 }))).toEqual(contents(a.store.report({ recent: 100 })));
    expect(JSON.stringify(b.store.report({ recent: 100 }))).not.toContain(SENTINEL);
    // And counted none of it as its own.
    expect(await value(b, 'v2bridge_route_usage_total')).toBe(0);
    expect(await value(b, 'v2bridge_compare_results_total')).toBe(0);
    expect(await value(b, 'v2bridge_parity_events_applied_total')).toBe(4);
  });

  it('keep every count of a record whose tally outgrows an event', async () => {
    const tally = Array.from({ length: 700 }, (_, i) => ({ pattern: `widgets[].extra_${i}`, kind: 'value' as const, verdict: 'mismatch' as const, count: 2 }));
    a.store.record(record({ route: '/v2/fixture_widgets/{id}.{format}', differences: [], tally }));
    await a.store.flush();
    await b.store.refresh();
    const show = (s: Side) => s.store.report().routes.find((r) => r.route === '/v2/fixture_widgets/{id}.{format}' && r.method === 'GET');
    const mismatchesAt = (s: Side) => show(s)?.worstPatterns.reduce((n, p) => n + p.mismatch, 0);
    expect(show(b)?.outcomes).toEqual(show(a)?.outcomes);
    expect(show(b)?.patternsTracked).toBe(show(a)?.patternsTracked);
    // The shown patterns are the worst ten; every count is in the route's total either way.
    expect(mismatchesAt(b)).toBe(mismatchesAt(a));
  });

  it('fold plain matches into counts, and another replica still sees a route agreeing on success', async () => {
    // Another translated read than the list.
    const OTHER = SPROCKETS;
    // One hour's matches (the batch keeps hours apart for the time series).
    const at = MID_HOUR;
    for (let i = 0; i < 3; i++) a.store.record(record({ route: OTHER, outcome: 'match', differences: [], id: `plain-${i}`, at: at + i }));
    a.store.record(record({ route: OTHER, outcome: 'match', differences: [], status: { legacy: 404, translated: 404 }, at }));
    await a.store.flush();
    await b.store.refresh();
    const route = (s: Side) => s.store.report().routes.find((r) => r.route === OTHER && r.method === 'GET');
    expect(route(b)).toMatchObject({ outcomes: { match: 4 }, readiness: 'safe to translate', mode: 'compare' });
    expect(route(b)).toEqual(route(a));
    const entries = await redis.inspect().xrange(a.opened.keyOf('parity', 'events'), '-', '+');
    const last = entries.at(-1)?.[1][1] ?? '';
    expect(last).not.toContain('plain-');
    expect(JSON.parse(last).events).toEqual([{ kind: 'matched', route: OTHER, method: 'GET', mode: 'compare', count: 4, onSuccess: 3, at: at + 2 }]);
  });

  it('go out in batches of bounded size however fast they come, every count kept', async () => {
    const stream = a.opened.keyOf('parity', 'events');
    const before = await redis.inspect().xlen(stream);
    const burst = 5000;
    // All in one hour: a batch folds records per hour (the time series charts them by hour).
    for (let i = 0; i < burst; i++) a.store.record(record({ at: MID_HOUR + i }));
    await a.store.flush();
    const entries = (await redis.inspect().xrange(stream, '-', '+')).slice(before);
    // One window's burst is one entry of bounded size: its first records whole, the rest as counts.
    expect(entries.length).toBe(1);
    const data = entries[0]?.[1][1] ?? '';
    expect(data.length).toBeLessThanOrEqual(SHARING_DEFAULTS.batchChars + SHARING_DEFAULTS.foldedTallyChars + 4096);
    const events = (JSON.parse(data) as { events: Array<{ kind: string; count?: number; tally?: Array<{ count: number }> }> }).events;
    const whole = events.filter((event) => event.kind === 'record').length;
    expect(whole).toBeGreaterThan(0);
    expect(whole).toBeLessThanOrEqual(SHARING_DEFAULTS.batchRecords);
    expect(events.filter((event) => event.kind === 'folded')).toEqual([expect.objectContaining({ count: burst - whole, tally: [expect.objectContaining({ count: burst - whole })] })]);

    await b.store.refresh();
    const apps = (s: Side) => s.store.report().routes.find((r) => r.route === LIST && r.method === 'GET');
    expect(b.store.report().totals).toEqual(a.store.report().totals);
    expect(apps(b)?.outcomes).toEqual(apps(a)?.outcomes);
    const nameCounts = (s: Side) => apps(s)?.worstPatterns.find((p) => p.pattern === 'widgets[].name')?.mismatch;
    expect(nameCounts(b)).toBe(nameCounts(a));
  });

  it('that another writer got wrong are counted and skipped, never applied', async () => {
    const before = contents(b.store.report({ recent: 100 }));
    const stream = a.opened.keyOf('parity', 'events');
    const inspector = redis.inspect();
    await inspector.xadd(stream, '*', 'd', 'not json');
    await inspector.xadd(stream, '*', 'd', JSON.stringify({ v: 1, from: 'f'.repeat(24), events: [{ kind: 'usage', route: LIST, method: 'GET', mode: 'compare', count: -5 }] }));
    await inspector.xadd(stream, '*', 'd', JSON.stringify({ v: 1, from: 'f'.repeat(24), events: [{ kind: 'record', record: { ...record(), differences: [{ path: 'x', pattern: 'x', kind: 'value', verdict: 'mismatch', legacy: 'y'.repeat(20_000) }] } }] }));
    await b.store.refresh();
    expect(await value(b, 'v2bridge_parity_batches_rejected_total')).toBe(3);
    expect(contents(b.store.report({ recent: 100 }))).toEqual(before);
  });

  it('from an older or careless writer are masked again before they are kept', async () => {
    const stream = a.opened.keyOf('parity', 'events');
    const raw = record({ id: 'careless', request: `/v2/fixture_widgets.json?x=${SENTINEL}`, differences: [{ path: 'widgets[id=5].name', pattern: 'widgets[].name', kind: 'value', verdict: 'mismatch', legacy: { [SENTINEL]: [SENTINEL] } }] });
    await redis.inspect().xadd(stream, '*', 'd', JSON.stringify({ v: 1, from: 'e'.repeat(24), events: [{ kind: 'record', record: raw }] }));
    await b.store.refresh();
    const kept = b.store.report({ recent: 100 }).recent.find((r) => r.id === 'careless');
    expect(kept).toMatchObject({ request: '/v2/fixture_widgets.json?x=[redacted]', differences: [{ legacy: { '[redacted]': ['[redacted]'] } }] });
    expect(JSON.stringify(b.store.report({ recent: 100 }))).not.toContain(SENTINEL);
  });

  it('from another replica keep no secret nested in a difference value or in dry-run variables', async () => {
    const stream = a.opened.keyOf('parity', 'events');
    const SLACK = 'https://hooks.slack.com/services/T0000/B0000/nestedSlackSecret';
    const PAGERDUTY = 'pd-service-key-not-key-shaped';
    const raw = record({
      id: 'nested-secret',
      differences: [{ path: 'channels[id=1]', pattern: 'channels[]', kind: 'value', verdict: 'mismatch', legacy: { name: 'ops', configuration: { url: SLACK, channel: '#ops' } } }],
      dryRun: { side: 'translated', calls: [{ operation: 'ChannelCreate', variables: { channel: { service_key: PAGERDUTY, name: 'pager' } } }] },
    });
    await redis.inspect().xadd(stream, '*', 'd', JSON.stringify({ v: 1, from: 'd'.repeat(24), events: [{ kind: 'record', record: raw }] }));
    await b.store.refresh();
    const kept = b.store.report({ recent: 100 }).recent.find((r) => r.id === 'nested-secret');
    expect(kept).toMatchObject({
      differences: [{ legacy: { name: 'ops', configuration: { url: expect.stringMatching(/^\[secret [0-9a-f]{8}\]$/), channel: '#ops' } } }],
      dryRun: { calls: [{ variables: { channel: { service_key: expect.stringMatching(/^\[secret [0-9a-f]{8}\]$/), name: 'pager' } } }] },
    });
    const shown = JSON.stringify(b.store.report({ recent: 100 }));
    expect(shown).not.toContain('nestedSlackSecret');
    expect(shown).not.toContain(PAGERDUTY);
  });
});

describe('parity without Redis', () => {
  it('is the store alone: no stream, no sharing metrics', async () => {
    const alone = side(undefined);
    alone.store.noteUsage(LIST, 'GET', 'compare');
    await alone.store.flush();
    await alone.store.refresh();
    expect(alone.store.report().totals.requests).toBe(1);
    expect(await alone.metrics.registry.getSingleMetric('v2bridge_parity_events_unshared_total')).toBeUndefined();
    await alone.store.close();
  });
});
