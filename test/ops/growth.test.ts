import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIMENSIONS, measureRoute, type Dimension, type Measurement } from '../../bench/growth-measure.ts';
import { GROWTH_NOW, startCountingSandbox } from '../../bench/growth-sandbox.ts';
import { FLEET_EXTRA_HOSTS, fleetApp, generateSandboxData, type WorldSize } from '../../sandbox/data.ts';
import { allIssuesOf } from '../../sandbox/ai-issues.ts';

/**
 * no route costs more than linearly in what it returns. For every dimension
 * of bench/growth.ts (apps, hosts per app, names per request, events in the window), each route
 * is measured on a fresh gateway at two scales, 10 times apart (1x and 10x; 10x and 100x for
 * hosts, whose 10x still fits one v2 page), and from the smaller to the larger:
 * - its NerdGraph calls and NRQL queries grow at most as much as the items it returns, plus one
 *   per v2 page sent (a part-filled page);
 * - the bytes it reads from NerdGraph grow at most as much as the items it returns (within
 *   UPSTREAM_SLACK: items differ in size), so no route reads data it does not return at a
 *   growing rate.
 * Counts only, never time. Events at 100x stay in `npm run growth` (its walk alone takes a minute).
 *
 * Routes known to grow faster today are listed in KNOWN_SUPERLINEAR with what grows; a listed
 * route that stops doing so fails too, so the list can only shrink.
 */

/** Items differ in size (a host with more instances, a longer name): bytes may vary this much per item. */
const UPSTREAM_SLACK = 1.25;

type Check = 'calls' | 'nrql' | 'upstream bytes';

/**
 * Routes that grow faster than what they return, as measured today (bench figures in
 * docs/performance.md "## Growth").
 * - alerts_events' page 1 reads the 30-day window (up to its 3 NerdGraph calls) and keeps it
 *   for the later pages of the walk (mappings/alerts-issues/events.list.ts): page 1 reads more per
 *   event returned as the window fills, and the walk reads nothing more (once per page before
 *   an earlier version: 1,363 calls and 42 MB for 29 pages at 100x).
 * - An app's hosts and instances lists read every applicationInstancesV2 page (50 instances) for
 *   any v2 page, as its show does (links list every instance), and each v2 page's summary NRQL
 *   facets every host or instance of the app (mappings/hosts-and-instances/app-topology.ts): page 1 of 200
 *   costs 19 calls and 410 KB at 900 hosts, and a walk reads the summaries once per page. The
 *   instance pages are kept 30 s, so a walk reads them once.
 */
const KNOWN_SUPERLINEAR: Record<string, Check[]> = {
  'events in window / alerts_events, page 1': ['upstream bytes'],
  'hosts per app / hosts list, page 1': ['calls', 'upstream bytes'],
  'hosts per app / hosts list, every page': ['upstream bytes'],
  'hosts per app / instances list, page 1': ['calls', 'upstream bytes'],
  'hosts per app / instances list, every page': ['upstream bytes'],
};

/** The checks a route fails from `from` (the smaller scale) to `to` (10 times the data). */
function superlinear(from: Measurement, to: Measurement): Check[] {
  // Fewer items at 10x (another app's show) allow no growth at all.
  const itemGrowth = Math.max(1, to.items / from.items);
  const failed: Check[] = [];
  // Calls come per page: one more per v2 page sent at the larger scale (a part-filled page).
  if (to.calls > from.calls * itemGrowth + to.requests) failed.push('calls');
  if (to.nrql > from.nrql * itemGrowth + to.requests) failed.push('nrql');
  if (to.upstreamBytes > from.upstreamBytes * itemGrowth * UPSTREAM_SLACK) failed.push('upstream bytes');
  return failed;
}

async function measureAt(dimension: Dimension, scale: number): Promise<Measurement[]> {
  const world = dimension.worldAt(scale);
  const sandbox = await startCountingSandbox(world);
  try {
    const rows: Measurement[] = [];
    for (const route of dimension.routes(world, scale)) rows.push(...(await measureRoute(dimension.name, scale, route, { origin: sandbox.origin, graphqlUrl: sandbox.graphqlUrl, cpu: false })));
    return rows;
  } finally {
    await sandbox.close();
  }
}

const describeRows = (row: Measurement): string => `${row.items} items, ${row.calls} calls, ${row.nrql} NRQL, ${row.upstreamBytes} B read`;

describe.each(DIMENSIONS.map((dimension) => [dimension.name, dimension] as const))('growth with %s', (_name, dimension) => {
  let small: Measurement[] = [];
  let large: Measurement[] = [];
  beforeAll(async () => {
    small = await measureAt(dimension, dimension.scales[dimension.testedStep]);
    large = await measureAt(dimension, dimension.scales[dimension.testedStep + 1] as number);
  }, 60_000);
  afterAll(() => {
    small = [];
    large = [];
  });

  it('every route answers items at both scales', () => {
    expect(large.map((row) => row.route)).toEqual(small.map((row) => row.route));
    for (const row of [...small, ...large]) expect(row.items, `${row.route} at ${row.scale}`).toBeGreaterThan(0);
  });

  it('no route grows faster than what it returns, for 10 times the data (calls, NRQL, upstream bytes)', () => {
    const found: Record<string, Check[]> = {};
    const details: string[] = [];
    for (const [index, from] of small.entries()) {
      const to = large[index] as Measurement;
      const failed = superlinear(from, to);
      if (failed.length === 0) continue;
      found[`${dimension.name} / ${from.route}`] = failed;
      details.push(`${from.route}: ${describeRows(from)} at ${from.scale}; ${describeRows(to)} at ${to.scale}`);
    }
    const knownHere = Object.fromEntries(Object.entries(KNOWN_SUPERLINEAR).filter(([key]) => key.startsWith(`${dimension.name} / `)));
    expect(found, details.join('\n')).toEqual(knownHere);
  });
});

describe('the sandbox size knobs', () => {
  const world = (size?: WorldSize) => generateSandboxData({ seed: 7, apmApps: 60, now: GROWTH_NOW, ...(size && { size }) });
  /** The world's values (every app, host, alert) and its alert history, as comparable text. */
  const snapshot = (data: ReturnType<typeof world>) =>
    JSON.stringify({ apps: data.apps, others: [data.keyTransactions, data.mobileApps, data.browserApps], alerts: data.alerts, issues: allIssuesOf(data, data.accounts[0]?.id ?? 0, GROWTH_NOW) });

  it('at their defaults give the world without knobs, value for value', () => {
    expect(snapshot(world({ fleetExtraHosts: FLEET_EXTRA_HOSTS, primaryAlertSlots: 40 }))).toBe(snapshot(world()));
  });

  it('change how much there is, not what the rest is', () => {
    const base = world();
    const grown = world({ fleetExtraHosts: 9 });
    const fleetId = fleetApp(base.apps)?.id;
    expect(fleetApp(grown.apps)?.hosts.length).toBe((fleetApp(base.apps)?.hosts.length ?? 0) - FLEET_EXTRA_HOSTS + 9);
    expect(JSON.stringify(grown.apps.filter((app) => app.id !== fleetId))).toBe(JSON.stringify(base.apps.filter((app) => app.id !== fleetId)));
    const fewer = allIssuesOf(world({ primaryAlertSlots: 1 }), base.accounts[0]?.id ?? 0, GROWTH_NOW).length;
    const more = allIssuesOf(world({ primaryAlertSlots: 10 }), base.accounts[0]?.id ?? 0, GROWTH_NOW).length;
    expect(fewer).toBeGreaterThan(0);
    expect(more).toBeGreaterThan(5 * fewer);
  });

  it('refuse sizes that are not counts', () => {
    expect(() => world({ fleetExtraHosts: -1 })).toThrow(/fleetExtraHosts must be a non-negative integer/);
    expect(() => world({ primaryAlertSlots: 1.5 })).toThrow(/primaryAlertSlots/);
  });
});
