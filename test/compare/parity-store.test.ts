import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  MAX_PATTERNS_PER_ROUTE,
  OTHER_PATTERNS,
  UNMAPPED_ROUTE,
  boundedValue,
  cleanValue,
  createParityStore,
  type ParityStore,
  type RouteParity,
} from '../../src/compare/parity-store.ts';
import type { ComparisonRecord, JudgedDifference } from '../../src/compare/types.ts';
import { loadTestMappings } from '../support/fixture-routes.ts';
import { COMPARED, LIST, PASSTHROUGH_ONLY, SHOW, UNSUPPORTED } from '../support/parity-fixture.ts';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const SENTINEL = 'NRAK-PARITYSENTINEL0123456789';

// The fixture routes (test/support/fixture-routes.ts): a translated list, show and compared
// read, an unsupported route, a passthrough-only one (several methods).
const mappings = await loadTestMappings('fixtures');

let ids = 0;
function comparison(overrides: Partial<ComparisonRecord> = {}): ComparisonRecord {
  ids += 1;
  return {
    id: `r${ids}`,
    at: NOW + ids,
    route: LIST,
    method: 'GET',
    mode: 'compare',
    request: '/v2/fixture_widgets.json?page=1',
    outcome: 'match',
    status: { legacy: 200, translated: 200 },
    differences: [],
    ms: { legacy: 12, translated: 30 },
    ...overrides,
  };
}

function difference(pattern: string, verdict: JudgedDifference['verdict'], legacy: unknown = 1, translated: unknown = 2): JudgedDifference {
  return { path: pattern.replace('[]', '[id=5]'), pattern, kind: 'value', verdict, legacy, translated };
}

function mismatch(...patterns: string[]): ComparisonRecord {
  return comparison({ outcome: 'mismatch', differences: patterns.map((p) => difference(p, 'mismatch')) });
}

function setup(maxRecords = 100): { store: ParityStore; registry: Registry } {
  const registry = new Registry();
  return { store: createParityStore({ mappings, registry, maxRecords, now: () => NOW }), registry };
}

function routeOf(store: ParityStore, route: string, method = 'GET'): RouteParity {
  const found = store.report().routes.find((r) => r.route === route && r.method === method);
  if (!found) throw new Error(`no ${method} ${route} in the report`);
  return found;
}

describe('readiness verdicts', () => {
  it('come from fidelity first, then from what comparisons found', () => {
    const { store } = setup();
    expect(routeOf(store, UNSUPPORTED, 'DELETE')).toMatchObject({ readiness: 'unsupported', verdict: 'unsupported', fidelity: 'unsupported' });
    expect(routeOf(store, PASSTHROUGH_ONLY, 'POST')).toMatchObject({ readiness: 'passthrough only', fidelity: 'passthrough' });
    expect(routeOf(store, SHOW)).toMatchObject({ readiness: 'not compared yet', requests: 0 });

    store.record(comparison({ route: SHOW }));
    store.record(comparison({ route: SHOW, outcome: 'noise', differences: [difference('application.summary.rpm', 'noise')] }));
    expect(routeOf(store, SHOW)).toMatchObject({ readiness: 'safe to translate', verdict: 'safe to translate' });

    store.record(comparison({ route: SHOW, outcome: 'error', error: 'legacy answered 502' }));
    expect(routeOf(store, SHOW)).toMatchObject({ readiness: 'comparison errors', verdict: 'comparison errors: 1 of 3 failed' });

    store.record(comparison({ route: COMPARED, outcome: 'dry_run', dryRun: { side: 'translated', calls: [] } }));
    expect(routeOf(store, COMPARED).readiness).toBe('dry runs only');
  });

  it('name the three field patterns with the most mismatches', () => {
    const { store } = setup();
    store.record(mismatch('widgets[].name', 'widgets[].health_status', 'widgets[].language', 'widgets[].reporting'));
    store.record(mismatch('widgets[].name', 'widgets[].health_status', 'widgets[].language'));
    store.record(mismatch('widgets[].name', 'widgets[].health_status'));
    store.record(mismatch('widgets[].name'));
    store.record(comparison({ outcome: 'noise', differences: Array.from({ length: 9 }, () => difference('widgets[].reporting', 'noise')) }));
    const apps = routeOf(store, LIST);
    expect(apps.readiness).toBe('differs');
    expect(apps.verdict).toBe('differs in widgets[].name, widgets[].health_status, widgets[].language');
    expect(apps.worstPatterns.map((p) => [p.pattern, p.mismatch, p.noise])).toEqual([
      ['widgets[].name', 4, 0],
      ['widgets[].health_status', 3, 0],
      ['widgets[].language', 2, 0],
      ['widgets[].reporting', 1, 9],
    ]);
    // A passthrough or unsupported route keeps its verdict whatever was recorded for it.
    store.record(mismatch('policies[].name'));
    store.record(comparison({ route: PASSTHROUGH_ONLY, outcome: 'mismatch', differences: [difference('location_failure_conditions[].name', 'mismatch')] }));
    expect(routeOf(store, PASSTHROUGH_ONLY).readiness).toBe('passthrough only');
  });
});

describe('counts', () => {
  it('counts outcomes, usage and side latency, on the given registry', async () => {
    const { store, registry } = setup();
    store.noteUsage(LIST, 'GET', 'compare');
    store.noteUsage(LIST, 'GET', 'compare');
    store.noteUsage(LIST, 'GET', 'translate');
    store.record(comparison());
    store.record(mismatch('widgets[].name'));
    store.dropped(LIST, 'GET');
    store.dropped(LIST, 'GET');
    store.observeSide(LIST, 'legacy', 0.012);
    store.observeSide(LIST, 'translated', 0.03);
    store.observeSide(LIST, 'translated', Number.NaN);

    expect(routeOf(store, LIST)).toMatchObject({
      requests: 3,
      mode: 'translate',
      outcomes: { match: 1, mismatch: 1, noise: 0, error: 0, dropped: 2, dry_run: 0 },
    });
    const metrics = await registry.metrics();
    expect(metrics).toContain(`v2bridge_compare_results_total{route="${LIST}",outcome="dropped"} 2`);
    expect(metrics).toContain(`v2bridge_compare_results_total{route="${LIST}",outcome="mismatch"} 1`);
    expect(metrics).toContain(`v2bridge_route_usage_total{route="${LIST}",method="GET",mode="compare"} 2`);
    expect(metrics).toContain(`v2bridge_compare_side_duration_seconds_count{route="${LIST}",side="legacy"} 1`);
    expect(metrics).toContain(`v2bridge_compare_side_duration_seconds_count{route="${LIST}",side="translated"} 1`);
    const report = store.report();
    expect(report.totals).toEqual({ requests: 3, outcomes: { match: 1, mismatch: 1, noise: 0, error: 0, dropped: 2, dry_run: 0 } });
    expect(report.generatedAt).toBe(new Date(NOW).toISOString());
  });

  it('folds unknown routes into `unmapped` and unknown methods into OTHER, so labels stay bounded', async () => {
    const { store, registry } = setup();
    for (let i = 0; i < 50; i += 1) store.noteUsage(`/v2/made_up_${i}.json`, i % 2 ? 'BREW' : 'get', 'passthrough');
    store.record(comparison({ route: '/v2/nothing/{id}.{format}', outcome: 'error', error: 'x' }));
    const report = store.report();
    const unmapped = report.routes.filter((r) => r.route === UNMAPPED_ROUTE);
    expect(unmapped.map((r) => [r.method, r.requests]).sort()).toEqual([
      ['GET', 25],
      ['OTHER', 25],
    ]);
    expect(unmapped[0]).toMatchObject({ fidelity: UNMAPPED_ROUTE, readiness: 'unsupported' });
    const metrics = await registry.metrics();
    expect(metrics).not.toContain('made_up');
    expect(metrics).toContain('v2bridge_route_usage_total{route="unmapped",method="OTHER",mode="passthrough"} 25');
    // Every declared route is in the report, seen or not.
    const declared = new Set(mappings.map((m) => m.route));
    expect(new Set(report.routes.map((r) => r.route))).toEqual(new Set([...declared, UNMAPPED_ROUTE]));
  });

  it(`keeps at most ${MAX_PATTERNS_PER_ROUTE} patterns per route and counts the rest in one row`, () => {
    const { store } = setup();
    const patterns = Array.from({ length: MAX_PATTERNS_PER_ROUTE + 50 }, (_, i) => `widgets[].extra_${i}`);
    store.record(comparison({ outcome: 'mismatch', differences: patterns.slice(0, 50).map((p) => difference(p, 'mismatch')) }));
    for (let start = 50; start < patterns.length; start += 50) {
      store.record(comparison({ outcome: 'mismatch', differences: patterns.slice(start, start + 50).map((p) => difference(p, 'mismatch')) }));
    }
    const apps = routeOf(store, LIST);
    expect(apps.patternsTracked).toBe(MAX_PATTERNS_PER_ROUTE + 1);
    expect(apps.worstPatterns[0]).toMatchObject({ pattern: OTHER_PATTERNS, mismatch: 50 });
  });

  it('keeps a ring of the last non-match records, newest first', () => {
    const { store } = setup(3);
    for (let i = 0; i < 5; i += 1) {
      store.record(comparison({ id: `m${i}`, outcome: 'mismatch', differences: [difference('widgets[].name', 'mismatch')] }));
      store.record(comparison({ id: `ok${i}` }));
    }
    const report = store.report();
    expect(report.recent.map((r) => r.id)).toEqual(['m4', 'm3', 'm2']);
    expect(report).toMatchObject({ recordsKept: 3, maxRecords: 3 });
    expect(store.report({ recent: 1 }).recent.map((r) => r.id)).toEqual(['m4']);
    expect(store.report({ recent: 0 }).recent).toEqual([]);
    // Patterns still count every record, kept or not.
    expect(routeOf(store, LIST).worstPatterns[0]).toMatchObject({ pattern: 'widgets[].name', mismatch: 5 });
  });

  it('keeps a mismatch as the example of a pattern rather than later noise', () => {
    const { store } = setup();
    store.record(comparison({ outcome: 'noise', differences: [difference('widgets[].name', 'noise', 'a', 'b')] }));
    store.record(comparison({ request: '/v2/fixture_widgets.json?page=2', outcome: 'mismatch', differences: [difference('widgets[].name', 'mismatch', 'Shop', 'shop')] }));
    store.record(comparison({ outcome: 'noise', differences: [difference('widgets[].name', 'noise', 'c', 'd')] }));
    const [pattern] = routeOf(store, LIST).worstPatterns;
    expect(pattern).toMatchObject({
      pattern: 'widgets[].name',
      mismatch: 1,
      noise: 2,
      kinds: { value: 3 },
      example: { request: '/v2/fixture_widgets.json?page=2', path: 'widgets[id=5].name', verdict: 'mismatch', legacy: 'Shop', translated: 'shop' },
    });
  });
});

describe('usage', () => {
  it('lists the routes callers use by requests, with fidelity and what a switch would change', () => {
    const { store } = setup();
    for (let i = 0; i < 3; i += 1) store.noteUsage(COMPARED, 'GET', 'compare');
    store.noteUsage(PASSTHROUGH_ONLY, 'POST', 'passthrough');
    for (let i = 0; i < 5; i += 1) store.noteUsage(LIST, 'GET', 'translate');
    store.record(comparison({ route: COMPARED, outcome: 'mismatch', differences: [difference('sprockets[].call_count', 'mismatch')] }));

    const usage = store.report().usage;
    expect(usage.map((u) => [u.method, u.route, u.requests])).toEqual([
      ['GET', LIST, 5],
      ['GET', COMPARED, 3],
      ['POST', PASSTHROUGH_ONLY, 1],
    ]);
    const data = mappings.find((m) => m.route === COMPARED && m.method === 'GET');
    expect(usage[1]).toMatchObject({ fidelity: 'approximate', mode: 'compare', byMode: { compare: 3 }, readiness: 'differs' });
    expect(usage[1]?.knownGaps).toHaveLength(data?.knownGaps?.length ?? -1);
    expect(usage[1]?.ifSwitched).toContain('fidelity approximate');
    expect(usage[1]?.ifSwitched).toContain('differs in sprockets[].call_count');
    expect(usage[0]?.ifSwitched).toMatch(/^already answered by the translation/);
    expect(usage[2]?.ifSwitched).toMatch(/stays on the legacy API/);
  });
});

describe('memory bounds', () => {
  it('keeps every stored value to a known size, however large the answer', () => {
    const { store } = setup();
    const huge = Array.from({ length: 5_000 }, (_, i) => ({ id: i, name: 'x'.repeat(2_000), nested: { deeper: Array.from({ length: 50 }, () => 'y'.repeat(100)) } }));
    store.record(
      comparison({
        outcome: 'mismatch',
        request: `/v2/fixture_widgets.json?${'q'.repeat(10_000)}`,
        differences: Array.from({ length: 120 }, (_, i) => ({ ...difference(`widgets[].f${i}`, 'mismatch'), legacy: huge, translated: 'z'.repeat(100_000) })),
        dryRun: { side: 'translated', calls: Array.from({ length: 40 }, () => ({ operation: 'op', variables: { huge } })) },
      }),
    );
    const report = store.report();
    const [record] = report.recent;
    expect(record?.differences).toHaveLength(50);
    expect(record?.dryRun?.calls).toHaveLength(10);
    expect(record?.request.length).toBeLessThanOrEqual(501);
    expect(JSON.stringify(record).length).toBeLessThan(150_000);
    expect(JSON.stringify(report.routes.find((r) => r.route === LIST)).length).toBeLessThan(30_000);
  });
});

describe('no key anywhere', () => {
  it('redacts key-shaped text in every string a record carries', async () => {
    const { store, registry } = setup();
    const leaky: ComparisonRecord = comparison({
      id: `id-${SENTINEL}`,
      request: `/v2/fixture_widgets.json?api_key=${SENTINEL}`,
      outcome: 'mismatch',
      differences: [
        { path: `widgets[id=5].${SENTINEL}`, pattern: `widgets[].${SENTINEL}`, kind: 'value', verdict: 'mismatch', legacy: { [SENTINEL]: [SENTINEL] }, translated: `key ${SENTINEL.toLowerCase()}` },
      ],
      dryRun: { side: 'translated', calls: [{ operation: `op${SENTINEL}`, variables: { key: SENTINEL, nested: { deeper: [SENTINEL] } } }] },
      error: `failed for ${SENTINEL}`,
    });
    store.record(leaky);
    store.record({ ...leaky, id: 'again', outcome: 'error' });
    store.noteUsage(`/v2/${SENTINEL}.json`, 'GET', 'passthrough');
    store.dropped(`/v2/${SENTINEL}.json`, SENTINEL);
    store.observeSide(`/v2/${SENTINEL}.json`, 'legacy', 0.1);

    const text = JSON.stringify(store.report({ recent: 100 }));
    expect(text).toContain('[redacted]');
    expect(text.toLowerCase()).not.toContain(SENTINEL.toLowerCase());
    expect((await registry.metrics()).toLowerCase()).not.toContain(SENTINEL.toLowerCase());
  });

  it('cleanValue leaves no key in any JSON value, and bounds it', () => {
    const withKeys = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(SENTINEL, `x${SENTINEL}y`, null, 1, true),
        fc.string(),
        fc.array(tie('value'), { maxLength: 30 }),
        fc.dictionary(fc.oneof(fc.string(), fc.constant(SENTINEL)), tie('value'), { maxKeys: 30 }),
      ),
    })).value;
    fc.assert(
      fc.property(withKeys, (value) => {
        expect(JSON.stringify(cleanValue(value)) ?? '').not.toContain(SENTINEL);
        const bounded = boundedValue(value, 512);
        const text = JSON.stringify(bounded) ?? '';
        expect(text).not.toContain(SENTINEL);
        // Either the cleaned value, under the bound, or its JSON text cut at the bound.
        expect(typeof bounded === 'string' && bounded.endsWith('…') ? bounded.length : text.length).toBeLessThanOrEqual(513);
      }),
    );
  });
});

describe('counts from the comparison tally', () => {
  it('counts every difference a comparison found, not only the ones it kept, and names them in the verdict', () => {
    const store = createParityStore({ mappings, registry: new Registry(), maxRecords: 10, now: () => NOW });
    store.record(
      comparison({
        outcome: 'mismatch',
        differences: [difference('widgets[].name', 'mismatch', 'a', 'b')],
        tally: [
          { pattern: 'widgets[].name', kind: 'value', verdict: 'mismatch', count: 60 },
          { pattern: 'widgets[].settings.x', kind: 'value', verdict: 'mismatch', count: 1 },
        ],
      }),
    );
    const route = store.report().routes.find((r) => r.route === LIST && r.method === 'GET') as RouteParity;
    expect(route.verdict).toBe('differs in widgets[].name, widgets[].settings.x');
    const name = route.worstPatterns.find((p) => p.pattern === 'widgets[].name');
    expect(name).toMatchObject({ mismatch: 60, example: { legacy: 'a', translated: 'b' } });
    expect(route.worstPatterns.find((p) => p.pattern === 'widgets[].settings.x')?.mismatch).toBe(1);
  });
});

describe('readiness needs successful answers, and HEAD counts with GET', () => {
  it('a route compared only on error answers (both sides 401) is not called safe to translate', () => {
    const store = createParityStore({ mappings, registry: new Registry(), maxRecords: 10, now: () => NOW });
    store.record(comparison({ outcome: 'match', status: { legacy: 401, translated: 401 } }));
    const route = (): RouteParity => store.report().routes.find((r) => r.route === LIST && r.method === 'GET') as RouteParity;
    expect(route()).toMatchObject({ readiness: 'not compared yet', verdict: 'compared on error answers only (1)' });
    store.record(comparison({ outcome: 'match', status: { legacy: 200, translated: 200 } }));
    expect(route().readiness).toBe('safe to translate');
  });

  it('counts a HEAD with the route GET, not as an unsupported HEAD row', () => {
    const store = createParityStore({ mappings, registry: new Registry(), maxRecords: 10, now: () => NOW });
    store.noteUsage(LIST, 'HEAD', 'compare');
    store.record(comparison({ method: 'HEAD', outcome: 'match' }));
    const report = store.report();
    expect(report.routes.some((r) => r.method === 'HEAD')).toBe(false);
    expect(report.routes.find((r) => r.route === LIST && r.method === 'GET')).toMatchObject({ requests: 1, readiness: 'safe to translate' });
  });
});

describe("Diffy's rule per field", () => {
  it('a field whose mismatches do not outnumber its noise by 20 % does not make the route differ', () => {
    const store = createParityStore({ mappings, registry: new Registry(), maxRecords: 10, now: () => NOW });
    const rate = 'sprockets[].calls_per_minute';
    for (let i = 0; i < 5; i++) store.record(comparison({ route: COMPARED, outcome: 'noise', differences: [difference(rate, 'noise')] }));
    store.record(comparison({ route: COMPARED, outcome: 'mismatch', differences: [difference(rate, 'mismatch')] }));
    const route = (): RouteParity => store.report().routes.find((r) => r.route === COMPARED && r.method === 'GET') as RouteParity;
    expect(route()).toMatchObject({ readiness: 'safe to translate' });
    expect(route().worstPatterns[0]).toMatchObject({ pattern: rate, mismatch: 1, noise: 5, reportable: false });
    // A field that never moves on the legacy side differs from its first mismatch.
    store.record(comparison({ route: COMPARED, outcome: 'mismatch', differences: [difference('sprockets[].name', 'mismatch')] }));
    expect(route()).toMatchObject({ readiness: 'differs', verdict: 'differs in sprockets[].name' });
  });
});
