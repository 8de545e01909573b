import { registerBridgeRoutes } from '../../src/bridge/parity.ts';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { seenCaller } from '../../src/caller/seen-caller.ts';
import { createParityStore, type ParityStore } from '../../src/compare/parity-store.ts';
import type { ComparisonRecord, JudgedDifference } from '../../src/compare/types.ts';
import { GADGETS, loadTestMappings, SPROCKETS, WIDGET, WIDGET_NOTE, WIDGETS } from './fixture-routes.ts';
import { FIXED_NOW, createTestGateway, type TestGateway } from './harness.ts';

/**
 * A gateway with a parity store and the /bridge/ routes, and a store filled with known
 * comparisons: what the /bridge/ page and parity.json tests check the page shows. The store is
 * filled directly (record(), noteUsage()): the modes' shadow work is tested on its own. Its
 * routes are the fixture routes (test/support/fixture-routes.ts), never real ones.
 */
export const PARITY_SENTINEL_KEY = 'NRAK-BRIDGESENTINEL0123456789ABCDEF';
/** A translated list, compared: its comparisons differ. */
export const LIST = WIDGETS;
/** A translated show, in candidate mode: its comparisons match. */
export const SHOW = WIDGET;
/** A translated read, compared: its comparisons are noise. */
export const COMPARED = SPROCKETS;
/** An unsupported route (a fixed v2 error). */
export const UNSUPPORTED = WIDGET_NOTE;
/** A route NerdGraph cannot serve: passthrough only. */
export const PASSTHROUGH_ONLY = GADGETS;
/** Caller data that must reach the page as text, never as markup. */
export const HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">Checkout & "Co"';

/** The integrations fillStore makes: three keys, three User-Agents (one of them hostile markup). */
export const DASHBOARD_KEY = 'NRAK-UFBV52YJNT6AQ7BGF94B5YDPCZM';
export const SLA_KEY = 'NRAK-PZZUWF8M86LMMWNHFG5CTTXGZUV';
export const DEPLOY_KEY = 'NRAK-7PSKGH9RXKG2L6CD43BLQAQD6FY';
export const DASHBOARD_AGENT = 'Grafana/10.2 newrelic-datasource/4.1';
export const SLA_AGENT = 'python-requests/2.31 sla-report';
export const HOSTILE_AGENT = '<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3">deploy-hook & "co"';
/** The fingerprints the fixture's store records (its own HMAC secret, as a gateway has). */
export const fixtureFingerprintOf = createIdentityHasher();
/** Where the fixture's comparisons fall in time: each record's hours before FIXED_NOW's. */
const HOUR = 3_600_000;

export async function createBridgeGateway(options: { bridgeToken?: string; maxRecords?: number; /** The page's clock (days left). */ now?: () => number } = {}): Promise<{ gateway: TestGateway; store: ParityStore }> {
  // Nothing here calls NerdGraph: a closed port is enough.
  const gateway = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: 'http://127.0.0.1:9/graphql' });
  const mappings = await loadTestMappings('fixtures');
  const store = createParityStore({ mappings, registry: gateway.metrics.registry, maxRecords: options.maxRecords ?? 1000, now: () => FIXED_NOW });
  const now = options.now ?? (() => FIXED_NOW);
  registerBridgeRoutes(gateway.app, { store, now, ...(options.bridgeToken === undefined ? {} : { bridgeToken: options.bridgeToken }) });
  return { gateway, store };
}

let ids = 0;
function record(route: string, outcome: ComparisonRecord['outcome'], differences: JudgedDifference[], request: string, extra: Partial<ComparisonRecord> = {}, hoursAgo = 0): ComparisonRecord {
  ids += 1;
  return {
    id: `rec-${ids}`,
    at: FIXED_NOW - hoursAgo * HOUR - 60_000 + ids,
    route,
    method: 'GET',
    mode: 'compare',
    request,
    outcome,
    status: { legacy: 200, translated: 200 },
    differences,
    ms: { legacy: 20, translated: 45 },
    ...extra,
  };
}

const diff = (path: string, pattern: string, verdict: JudgedDifference['verdict'], legacy: unknown, translated: unknown): JudgedDifference => ({
  path,
  pattern,
  kind: 'value',
  verdict,
  legacy,
  translated,
});

function times(n: number, fn: () => void): void {
  for (let i = 0; i < n; i += 1) fn();
}

/**
 * The story the page must tell:
 * - GET LIST: 6 requests in compare mode; `widgets[].name` mismatches twice
 *   (example: HOSTILE_NAME vs "checkout"), `widgets[].health_status` once ("green" vs
 *   "gray"), throughput is noise; one comparison dropped -> "differs in widgets[].name,
 *   widgets[].health_status".
 * - GET SHOW: 3 in candidate mode, 3 matches -> "safe to translate".
 * - GET COMPARED: 2 in compare mode, 2 noise -> "safe to translate".
 * - DELETE UNSUPPORTED: 1 translated request -> "unsupported".
 * - GET PASSTHROUGH_ONLY: 7 passthrough requests -> "passthrough only".
 * So 2 of the 5 routes in use are safe to translate.
 * Integrations, most calls to routes not ready first: SLA_AGENT (SLA_KEY): SHOW 3,
 * PASSTHROUGH_ONLY 7 (7 not ready); DASHBOARD_AGENT (DASHBOARD_KEY): LIST 6, COMPARED 2 (6 not
 * ready); HOSTILE_AGENT (DEPLOY_KEY): the DELETE once (1 not ready).
 * Comparisons per hour (the chart): 3 hours ago a mismatch and a match, 2 and 1 hours ago a
 * match and a noise each, in FIXED_NOW's hour a mismatch and a noise.
 */
export function fillStore(store: ParityStore): void {
  times(6, () => store.noteUsage(LIST, 'GET', 'compare'));
  times(3, () => store.noteUsage(SHOW, 'GET', 'candidate'));
  times(2, () => store.noteUsage(COMPARED, 'GET', 'compare'));
  store.noteUsage(UNSUPPORTED, 'DELETE', 'translate');
  times(7, () => store.noteUsage(PASSTHROUGH_ONLY, 'GET', 'passthrough'));
  const caller = (key: string, agent: string) => seenCaller(new Headers({ 'x-api-key': key, 'user-agent': agent }), fixtureFingerprintOf);
  times(6, () => store.noteCaller(LIST, 'GET', caller(DASHBOARD_KEY, DASHBOARD_AGENT)));
  times(2, () => store.noteCaller(COMPARED, 'GET', caller(DASHBOARD_KEY, DASHBOARD_AGENT)));
  times(3, () => store.noteCaller(SHOW, 'GET', caller(SLA_KEY, SLA_AGENT)));
  times(7, () => store.noteCaller(PASSTHROUGH_ONLY, 'GET', caller(SLA_KEY, SLA_AGENT)));
  store.noteCaller(UNSUPPORTED, 'DELETE', caller(DEPLOY_KEY, HOSTILE_AGENT));

  store.record(
    record(LIST, 'mismatch', [
      diff('widgets[id=5].name', 'widgets[].name', 'mismatch', 'Shop', 'shop'),
      diff('widgets[id=5].health_status', 'widgets[].health_status', 'mismatch', 'green', 'gray'),
      diff('widgets[id=5].summary.throughput', 'widgets[].summary.throughput', 'noise', 10, 12),
    ], '/v2/fixture_widgets.json?page=1', {}, 3),
  );
  store.record(
    record(LIST, 'mismatch', [diff('widgets[id=7].name', 'widgets[].name', 'mismatch', HOSTILE_NAME, 'checkout')], `/v2/fixture_widgets.json?filter[name]=Checkout&api_key=${PARITY_SENTINEL_KEY}`),
  );
  store.record(
    record(LIST, 'noise', [diff('widgets[id=5].summary.throughput', 'widgets[].summary.throughput', 'noise', { value: PARITY_SENTINEL_KEY }, 11)], '/v2/fixture_widgets.json'),
  );
  store.dropped(LIST, 'GET');
  for (const hoursAgo of [3, 2, 1]) store.record(record(SHOW, 'match', [], '/v2/fixture_widgets/5.json', { mode: 'candidate' }, hoursAgo));
  for (const hoursAgo of [2, 1]) {
    const callCount = diff('sprockets[id=1000001].call_count', 'sprockets[].call_count', 'noise', 3, 4);
    store.record(record(COMPARED, 'noise', [callCount], '/v2/fixture_sprockets.json', {}, hoursAgo));
  }
}

let recordIds = 0;

/** A mismatching comparison of the fixture list (one name differs), for the parity store and its sharing; `overrides` win. */
export function mismatchRecord(overrides: Partial<ComparisonRecord> = {}): ComparisonRecord {
  recordIds += 1;
  return {
    id: `m${recordIds}`,
    at: Date.now() + recordIds,
    route: LIST,
    method: 'GET',
    mode: 'compare',
    request: '/v2/fixture_widgets.json',
    outcome: 'mismatch',
    status: { legacy: 200, translated: 200 },
    differences: [{ path: 'widgets[id=5].name', pattern: 'widgets[].name', kind: 'value', verdict: 'mismatch', legacy: 'a', translated: 'b' }],
    ms: { legacy: 10, translated: 20 },
    ...overrides,
  };
}
