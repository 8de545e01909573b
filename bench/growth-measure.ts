import { z } from 'zod';
import { fleetApp, generateSandboxData } from '../sandbox/data.ts';
import { bulkMetricsApp } from '../sandbox/timeslices.ts';
import { createTestGateway, DEMO_KEY } from '../test/support/harness.ts';
import { GROWTH_NOW, takeCounts, type GrowthWorld, type UpstreamCounts } from './growth-sandbox.ts';

/**
 * what one v2 request costs as the data behind it grows. Each dimension is a
 * sandbox knob at three scales (1x, 10x, 100x); each route is sent to a fresh gateway (so nothing
 * it kept from another route helps) whose caller is already known (the account look-up is not
 * counted), and measured: NerdGraph calls, NRQL queries, bytes read from NerdGraph, the answer's
 * bytes, the items it returns and, for the bench's table only, the gateway's CPU time.
 * Shared by bench/growth.ts (the table) and test/ops/growth.test.ts (counts only).
 */

export type DimensionName = 'apps' | 'hosts per app' | 'names per request' | 'events in window';

/**
 * One v2 request, or a list a client walks (Link rel="next") from page 1: measured as two rows,
 * "<name>, page 1" and "<name>, every page", from one fresh gateway (its page 1 is cold as well).
 */
export interface RouteSpec {
  name: string;
  path: string;
  walk?: boolean;
  /** The items an answer returns (what growth is measured against). */
  items(body: unknown): number;
}

export interface Dimension {
  name: DimensionName;
  /** The knob's value at 1x, 10x, 100x (what the table's scale column shows). */
  scales: readonly [number, number, number];
  /**
   * The step test/ops/growth.test.ts checks: 1x to 10x (0) unless the 10x world still fits one
   * page everywhere, so only 10x to 100x shows how paging grows (1).
   */
  testedStep: 0 | 1;
  worldAt(scale: number): GrowthWorld;
  /** The routes to send at a scale (most read the world; metric data takes the scale as its names). */
  routes(world: GrowthWorld, scale: number): RouteSpec[];
}

export interface Measurement {
  dimension: DimensionName;
  scale: number;
  route: string;
  /** Requests sent (pages, for a walk). */
  requests: number;
  items: number;
  calls: number;
  nrql: number;
  upstreamBytes: number;
  answerBytes: number;
  /** Gateway process CPU, user + system; 0 where not measured (the sandbox shares the process). */
  cpuMicros: number;
  byOperation: Record<string, number>;
}

const KEY_HEADERS = { 'X-Api-Key': DEMO_KEY };
const SEED = 7;

const ListBody = (key: string) => z.object({ [key]: z.array(z.unknown()) });
const listItems = (key: string) => {
  const schema = ListBody(key);
  return (body: unknown): number => (schema.parse(body)[key] as unknown[]).length;
};
const ShowBody = z.object({ application: z.object({ links: z.record(z.string(), z.unknown()) }) });
/** A show returns the app and the ids its links list (hosts, instances): they grow with the app. */
const showItems = (body: unknown): number =>
  1 + Object.values(ShowBody.parse(body).application.links).reduce<number>((sum, link) => sum + (Array.isArray(link) ? link.length : 0), 0);
const MetricDataBody = z.object({ metric_data: z.object({ metrics: z.array(z.object({ timeslices: z.array(z.unknown()) })) }) });
/** Metric data returns timeslices: per name, as many as the window holds. */
const timesliceItems = (body: unknown): number => MetricDataBody.parse(body).metric_data.metrics.reduce((sum, metric) => sum + metric.timeslices.length, 0);

/** The world a dimension's scale gives (data.ts generates it the same way in every process). */
const worldData = (world: GrowthWorld) => generateSandboxData({ seed: SEED, apmApps: world.apmApps, now: GROWTH_NOW, ...(world.size && { size: world.size }) });

/** A small world for the dimensions that are not the app count: 50 apps. */
const SMALL_APPS = 50;

/** The fleet app's id in a world (the app whose hosts the knob grows). */
function fleetId(world: GrowthWorld): number {
  const app = fleetApp(worldData(world).apps);
  if (!app) throw new Error('growth: the world has no fleet app');
  return app.id;
}

export const DIMENSIONS: readonly Dimension[] = [
  {
    name: 'apps',
    scales: [50, 500, 5000],
    testedStep: 0,
    worldAt: (apmApps) => ({ apmApps }),
    routes: (world) => {
      const data = worldData(world);
      // The last app of the primary account: found by id wherever it sits in the list.
      const last = data.apps.filter((app) => app.accountId === data.accounts[0]?.id).at(-1);
      return [
        { name: 'applications list', path: '/v2/applications.json', walk: true, items: listItems('applications') },
        { name: 'applications list, filter[name]', path: `/v2/applications.json?filter[name]=${encodeURIComponent(last?.name ?? '')}`, items: listItems('applications') },
        { name: 'application show', path: `/v2/applications/${last?.id}.json`, items: showItems },
      ];
    },
  },
  {
    name: 'hosts per app',
    // Extra hosts of the fleet app, one instance each; it has 4 hosts and 9 instances of its own,
    // so about 13, 100 and 900 hosts. 900 keeps it within the gateway's bound (MAX_INSTANCE_PAGES,
    // 20 NerdGraph pages of 50 instances): past ~1000 instances its routes answer 503 by design.
    scales: [9, 90, 900],
    // At 90 hosts every list is one v2 page: only 900 shows what a walk costs.
    testedStep: 1,
    worldAt: (fleetExtraHosts) => ({ apmApps: SMALL_APPS, size: { fleetExtraHosts } }),
    routes: (world) => {
      const id = fleetId(world);
      return [
        { name: 'application show', path: `/v2/applications/${id}.json`, items: showItems },
        { name: 'hosts list', path: `/v2/applications/${id}/hosts.json`, walk: true, items: listItems('application_hosts') },
        { name: 'instances list', path: `/v2/applications/${id}/instances.json`, walk: true, items: listItems('application_instances') },
      ];
    },
  },
  {
    name: 'names per request',
    scales: [1, 10, 100],
    testedStep: 0,
    worldAt: () => ({ apmApps: SMALL_APPS }),
    routes: (world, scale) => {
      const app = bulkMetricsApp(worldData(world));
      if (!app) throw new Error('growth: the world has no bulk-metrics app');
      const names = Array.from({ length: scale }, (_, i) => `names[]=${encodeURIComponent(`Custom/Bulk/job-${String(i + 1).padStart(4, '0')}`)}`).join('&');
      return [
        { name: 'metric data, 30 min', path: `/v2/applications/${app.id}/metrics/data.json?${names}`, items: timesliceItems },
        { name: 'metric data, summarize', path: `/v2/applications/${app.id}/metrics/data.json?${names}&summarize=true`, items: timesliceItems },
      ];
    },
  },
  {
    name: 'events in window',
    // Alert slots of the primary account: each opens issues over the sandbox's 7 days of history.
    scales: [1, 10, 100],
    // 100x stays out of the test: the alerts_events walk alone takes over a minute there.
    testedStep: 0,
    worldAt: (primaryAlertSlots) => ({ apmApps: SMALL_APPS, size: { primaryAlertSlots } }),
    routes: () => [
      { name: 'alerts_events', path: '/v2/alerts_events.json', walk: true, items: listItems('recent_events') },
      { name: 'alerts_violations', path: '/v2/alerts_violations.json', walk: true, items: listItems('violations') },
    ],
  },
];

const NEXT_LINK = /<([^>]+)>;\s*rel="next"/;
/** A client walking pages stops here whatever the links say (a runaway guard, far above any scale's pages). */
const MAX_WALK_PAGES = 200;

export interface MeasureOptions {
  /** The counting sandbox's origin (its counts are read and reset there). */
  origin: string;
  graphqlUrl: string;
  /** Measure the gateway's CPU (only meaningful when the sandbox runs in another process). */
  cpu: boolean;
}

/** What the requests of a row cost so far. */
interface Tally {
  requests: number;
  items: number;
  answerBytes: number;
  cpuMicros: number;
}

/**
 * Sends one route to a fresh gateway and measures it: one row, or for a walk two (its page 1,
 * then the whole walk, page 1 included).
 */
export async function measureRoute(dimension: DimensionName, scale: number, route: RouteSpec, options: MeasureOptions): Promise<Measurement[]> {
  const gateway = await createTestGateway({ nerdgraphUrl: options.graphqlUrl, timeoutMs: 60_000 });
  // The caller's accounts, looked up once per key: not the route's cost.
  const known = await gateway.app.request('/v2/applications/1.json', { headers: KEY_HEADERS });
  await known.arrayBuffer();
  await takeCounts(options.origin);
  const row = (name: string, tally: Tally, counts: UpstreamCounts): Measurement => ({
    dimension,
    scale,
    route: name,
    ...tally,
    calls: counts.calls,
    nrql: counts.nrql,
    upstreamBytes: counts.answerBytes,
    byOperation: counts.byOperation,
  });
  const tally: Tally = { requests: 0, items: 0, answerBytes: 0, cpuMicros: 0 };
  const rows: Measurement[] = [];
  let next: string | undefined = route.path;
  while (next !== undefined && tally.requests < MAX_WALK_PAGES) {
    const before = options.cpu ? process.cpuUsage() : undefined;
    const response = await gateway.app.request(next, { headers: KEY_HEADERS });
    const body = await response.text();
    if (before) {
      const spent = process.cpuUsage(before);
      tally.cpuMicros += spent.user + spent.system;
    }
    if (response.status !== 200) throw new Error(`growth: ${route.name} at ${scale}: ${next} answered ${response.status}: ${body.slice(0, 300)}`);
    tally.requests++;
    tally.answerBytes += Buffer.byteLength(body);
    tally.items += route.items(JSON.parse(body));
    // Counts are read (not reset) after page 1, so the walk's row holds page 1 too.
    if (route.walk && tally.requests === 1) rows.push(row(`${route.name}, page 1`, { ...tally }, await takeCounts(options.origin, { reset: false })));
    const link = route.walk ? NEXT_LINK.exec(response.headers.get('link') ?? '')?.[1] : undefined;
    next = link === undefined ? undefined : new URL(link).pathname + new URL(link).search;
  }
  rows.push(row(route.walk ? `${route.name}, every page` : route.name, tally, await takeCounts(options.origin)));
  return rows;
}
