import type { SandboxApp } from '../sandbox/model.ts';
import { syntheticHostId } from '../mappings/common/app-instances.ts';
import type { Scenario } from './scenarios.ts';
import { DEMO_KEY, RANGE, namesQuery } from './request-parts.ts';

/**
 * The distinct-request scenarios, the bench's primary rows: each request of a run asks another
 * app, host or name set, walked in order from a set large enough that neither the gateway's
 * 1 s micro-cache (MICRO_CACHE_MS) nor its identical-query budget (IDENTICAL_QUERY_PER_MINUTE,
 * 120 identical NRQL a minute) can answer it: a path comes back only after the whole set, so
 * a set larger than the fastest target's req/s × 1 s never repeats inside the micro-cache
 * window (bench/run.ts checks this and the upstream calls per request on every row).
 * Sizes: only the gateway has a cache, so a set must exceed the gateway's own req/s × 1 s (with
 * room to grow); bench/run.ts checks that on every gateway row and fails the run when a request
 * came back inside the micro-cache window, so a gateway that outgrows these sets says so. Issue
 * 22's runs saw the gateway at most near 1,500 req/s on the show, 300 on the list, 600 on metric
 * data, 1,000 on the hosts list. Larger sets cost capture time (every request once through the
 * sandbox: a list request of 200 apps takes 0.1 to 0.4 s there) and canned memory.
 */
const FULL_SET_SIZES = {
  show: 4_000,
  list: 800,
  metricData: 2_000,
  hostsList: 3_000,
  hostMetricData: 2_000,
} as const;

/**
 * BENCH_SET_SCALE (default 1) shrinks every set, for quick trials of the bench itself: the run's
 * check then says whether the smaller sets still held.
 */
const SET_SCALE = Number(process.env.BENCH_SET_SCALE ?? 1);
if (!(SET_SCALE > 0 && SET_SCALE <= 1)) throw new Error(`BENCH_SET_SCALE must be in (0, 1], got "${process.env.BENCH_SET_SCALE}"`);
export const SET_SIZES = Object.fromEntries(Object.entries(FULL_SET_SIZES).map(([name, size]) => [name, Math.max(1, Math.round(size * SET_SCALE))])) as Record<
  keyof typeof FULL_SET_SIZES,
  number
>;

/** Applications per list request: a full v2 page. */
const LIST_WINDOW = 200;

/** Eight metric names every APM app in the sandbox reports; a request asks four of them, a window rotating over the eight. */
const NAME_POOL = ['HttpDispatcher', 'Apdex', 'Errors/all', 'WebTransaction/Uri/api/items[id]', 'WebTransaction', 'Datastore/all', 'External/all', 'Memory/Physical'];
const NAME_SETS = NAME_POOL.map((_, i) => namesQuery([0, 1, 2, 3].map((k) => NAME_POOL[(i + k) % NAME_POOL.length] as string)));

function take<T>(pool: readonly T[], size: number, what: string): T[] {
  if (pool.length < size) throw new Error(`bench: ${what} needs ${size} distinct entries, the sandbox has ${pool.length} (raise SANDBOX_APM_APPS)`);
  return pool.slice(0, size);
}

export function distinctScenarios(apps: readonly SandboxApp[]): Scenario[] {
  const headers = { 'X-Api-Key': DEMO_KEY };
  const reporting = apps.filter((app) => app.reporting && app.hosts.length > 0);
  const ids = apps.map((app) => app.id);
  const hosts = reporting.flatMap((app) => app.hosts.map((host) => ({ app, host })));
  const scenario = (name: string, mainOperation: string, varies: string, paths: string[]): Scenario => ({
    name,
    path: paths[0] as string,
    paths,
    varies: `${paths.length} distinct requests, ${varies}`,
    headers,
    mainOperation,
  });
  // The sets interleave the name sets with the apps (8 and an app count that is not their
  // multiple), so consecutive requests differ in both.
  return [
    scenario(
      'applications list',
      'ApplicationsSearch',
      `each filter[ids] a window of ${LIST_WINDOW} consecutive app ids starting one app further`,
      take(ids, SET_SIZES.list, 'the list').map((_, start) => {
        const window = Array.from({ length: LIST_WINDOW }, (_unused, k) => ids[(start + k) % ids.length]);
        return `/v2/applications.json?filter[ids]=${window.join(',')}`;
      }),
    ),
    scenario('application show', 'ApplicationByGuid', 'one app each', take(apps, SET_SIZES.show, 'the show').map((app) => `/v2/applications/${app.id}.json`)),
    scenario(
      'metric data',
      'ApplicationMetricData',
      `one reporting app each, 4 of ${NAME_POOL.length} metric names rotating, a fixed 30-minute window`,
      take(reporting, SET_SIZES.metricData, 'metric data').map((app, i) => `/v2/applications/${app.id}/metrics/data.json?${RANGE}&${NAME_SETS[i % NAME_SETS.length]}`),
    ),
    scenario('hosts list', 'ApplicationTopology', 'one reporting app each', take(reporting, SET_SIZES.hostsList, 'the hosts list').map((app) => `/v2/applications/${app.id}/hosts.json`)),
    scenario(
      'host metric data',
      'ApplicationTopologyMetricData',
      `one host of a reporting app each, 4 of ${NAME_POOL.length} metric names rotating, a fixed 30-minute window`,
      take(hosts, SET_SIZES.hostMetricData, 'host metric data').map(
        ({ app, host }, i) => `/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host.name)}/metrics/data.json?${RANGE}&${NAME_SETS[i % NAME_SETS.length]}`,
      ),
    ),
  ];
}
