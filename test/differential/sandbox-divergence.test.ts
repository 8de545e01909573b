import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import applicationsList from '../../mappings/applications.list.ts';
import applicationsShow from '../../mappings/applications.show.ts';
import deploymentsList from '../../mappings/applications.deployments.list.ts';
import hostsList from '../../mappings/applications.hosts.list.ts';
import hostsShow from '../../mappings/applications.hosts.show.ts';
import instancesList from '../../mappings/applications.instances.list.ts';
import instancesShow from '../../mappings/applications.instances.show.ts';
import type { KnownGap } from '../../src/routes/mapping.ts';
import { DIVERGENCE_NAMES, SANDBOX_DIVERGENCES, parseDivergences, renamedInNerdgraph, type DivergenceName } from '../../sandbox/divergence.ts';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../sandbox/server.ts';
import { fleetApp } from '../../sandbox/data.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { semanticLink, withoutGaps } from '../support/compare.ts';
import { TOPOLOGY_ID_PATHS, hostKey, idToken, normaliseIds, resolveTokens, unresolveTokens, worldSides } from '../support/derived-ids.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../support/harness.ts';

/**
 * The sandbox's known divergences: with one switched on, the gateway's translation (over the
 * NerdGraph face) differs from the legacy face exactly at the divergence's declared v2 field
 * patterns, on its declared routes, and nowhere else (the mappings' documented gaps left out,
 * as the differential tests do). Without any, the same requests show no difference at all.
 */

interface Probe {
  path: string;
  route: string;
  gaps: readonly KnownGap[];
}

/** Field patterns where two v2 bodies differ; arrays of objects with `id` are matched by id. */
function differingPatterns(legacy: JsonValue, translated: JsonValue, pattern = '', found = new Set<string>()): Set<string> {
  const join = (key: string): string => (pattern === '' ? key : `${pattern}.${key}`);
  if (Array.isArray(legacy) && Array.isArray(translated)) {
    const keyed = [...legacy, ...translated].every((item) => typeof item === 'object' && item !== null && !Array.isArray(item) && 'id' in item);
    const itemPattern = `${pattern}[]`;
    if (keyed) {
      const byId = (items: JsonValue[]) => new Map(items.map((item) => [JSON.stringify((item as Record<string, JsonValue>).id), item]));
      const [left, right] = [byId(legacy), byId(translated)];
      for (const id of new Set([...left.keys(), ...right.keys()])) {
        if (!left.has(id) || !right.has(id)) found.add(`${itemPattern} (missing or extra item)`);
        else differingPatterns(left.get(id) as JsonValue, right.get(id) as JsonValue, itemPattern, found);
      }
    } else {
      if (legacy.length !== translated.length) found.add(`${pattern} (length)`);
      legacy.forEach((item, i) => i < translated.length && differingPatterns(item, translated[i] as JsonValue, itemPattern, found));
    }
    return found;
  }
  const isObject = (value: JsonValue): value is Record<string, JsonValue> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(legacy) && isObject(translated)) {
    for (const key of new Set([...Object.keys(legacy), ...Object.keys(translated)])) {
      if (!(key in legacy) || !(key in translated)) found.add(`${join(key)} (missing or extra)`);
      else differingPatterns(legacy[key] as JsonValue, translated[key] as JsonValue, join(key), found);
    }
    return found;
  }
  if (JSON.stringify(legacy) !== JSON.stringify(translated)) found.add(pattern);
  return found;
}

/** The requests: apps the divergences touch and apps they leave alone, on every affected route. */
function probes(data: SandboxData): Probe[] {
  const primary = data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
  const reporting = primary.filter((app) => app.reporting && currentHosts(app).length > 0);
  const chosen: SandboxApp[] = [
    reporting.find((app) => renamedInNerdgraph(app)) as SandboxApp,
    reporting.find((app) => !renamedInNerdgraph(app)) as SandboxApp,
    primary.find((app) => !app.reporting && renamedInNerdgraph(app)) as SandboxApp,
  ];
  const withUser = primary.find((app) => deploymentsOf(data, app).some((d) => d.user !== null)) as SandboxApp;
  const withoutUser = primary.find((app) => deploymentsOf(data, app).length > 0 && deploymentsOf(data, app).every((d) => d.user === null));
  expect(chosen.every(Boolean) && withUser !== undefined).toBe(true);
  const list: Probe[] = [
    { path: '/v2/applications.json', route: '/v2/applications.{format}', gaps: applicationsList.knownGaps },
    { path: '/v2/applications.json?filter[language]=java', route: '/v2/applications.{format}', gaps: applicationsList.knownGaps },
  ];
  for (const app of chosen) {
    const base = `/v2/applications/${app.id}`;
    list.push({ path: `${base}.json`, route: '/v2/applications/{id}.{format}', gaps: applicationsShow.knownGaps });
    // The fleet app's hosts fill several pages, and each side pages them in the order of its own
    // host ids (support/derived-ids.ts): its first page is not the same hosts on both sides.
    if (app !== fleetApp(data.apps)) list.push({ path: `${base}/hosts.json`, route: '/v2/applications/{id}/hosts.{format}', gaps: hostsList.knownGaps });
    list.push({ path: `${base}/instances.json`, route: '/v2/applications/{id}/instances.{format}', gaps: instancesList.knownGaps });
    const host = currentHosts(app)[0];
    if (host) {
      list.push({ path: `${base}/hosts/${idToken('host', hostKey(app.id, host.name))}.json`, route: '/v2/applications/{id}/hosts/{host_id}.{format}', gaps: hostsShow.knownGaps });
      list.push({
        path: `${base}/instances/${host.instances[0]?.id}.json`,
        route: '/v2/applications/{id}/instances/{instance_id}.{format}',
        gaps: instancesShow.knownGaps,
      });
    }
    list.push({ path: `${base}/deployments.json`, route: '/v2/applications/{id}/deployments.{format}', gaps: deploymentsList.knownGaps });
  }
  for (const app of [withUser, withoutUser]) {
    if (app) list.push({ path: `/v2/applications/${app.id}/deployments.json`, route: '/v2/applications/{id}/deployments.{format}', gaps: deploymentsList.knownGaps });
  }
  return list;
}

interface World {
  sandbox: Sandbox;
  running: RunningSandbox;
  gateway: TestGateway;
}

async function world(diverge: readonly DivergenceName[]): Promise<World> {
  const sandbox = createSandbox({ seed: 7, apmApps: 60, now: () => FIXED_NOW, diverge });
  const running = await sandbox.listen(0, '127.0.0.1');
  const gateway = await createTestGateway({ nerdgraphUrl: `${running.url}/graphql` });
  return { sandbox, running, gateway };
}

/**
 * Each side lists hosts in the order of its own host ids: once the ids are put back to their
 * hosts (support/derived-ids.ts), host id lists and host lists are sorted by host.
 */
function hostsInOrder(value: JsonValue): JsonValue {
  if (Array.isArray(value)) {
    const items = value.map(hostsInOrder);
    const hostOf = (item: JsonValue): string | undefined =>
      typeof item === 'string' && item.startsWith('host:') ? item : item !== null && typeof item === 'object' && !Array.isArray(item) && typeof item.id === 'string' && item.id.startsWith('host:') ? item.id : undefined;
    if (items.length > 0 && items.every((item) => hostOf(item) !== undefined)) return [...items].sort((x, y) => ((hostOf(x) as string) < (hostOf(y) as string) ? -1 : 1));
    return items;
  }
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, hostsInOrder(child)]));
  return value;
}

/** Every differing pattern, by route, over all probes. */
async function differences({ sandbox, gateway }: World): Promise<Map<string, Set<string>>> {
  const byRoute = new Map<string, Set<string>>();
  // Host and deployment ids are each side's own (support/derived-ids.ts).
  const sides = worldSides(sandbox.data, sandbox.data, () => FIXED_NOW);
  for (const probe of probes(sandbox.data)) {
    const init = { headers: { 'X-Api-Key': DEMO_KEY } };
    const [legacy, translated] = [await sandbox.app.request(resolveTokens(probe.path, sides.legacy), init), await gateway.app.request(resolveTokens(probe.path, sides.gateway), init)];
    const found = byRoute.get(probe.route) ?? new Set<string>();
    byRoute.set(probe.route, found);
    if (legacy.status !== translated.status) found.add(`(status) ${probe.path}`);
    const link = (response: Response, side: typeof sides.legacy) => unresolveTokens(semanticLink(response.headers.get('link'), 'http://localhost'), probe.path, side);
    if (link(legacy, sides.legacy) !== link(translated, sides.gateway)) found.add('(link)');
    const [left, right] = [
      hostsInOrder(normaliseIds((await legacy.json()) as JsonValue, TOPOLOGY_ID_PATHS, sides.legacy)),
      hostsInOrder(normaliseIds((await translated.json()) as JsonValue, TOPOLOGY_ID_PATHS, sides.gateway)),
    ];
    differingPatterns(withoutGaps(left, probe.gaps), withoutGaps(right, probe.gaps), '', found);
  }
  return byRoute;
}

const allPatterns = (byRoute: Map<string, Set<string>>): string[] => [...new Set([...byRoute.values()].flatMap((set) => [...set]))].sort();
const routesWith = (byRoute: Map<string, Set<string>>): string[] => [...byRoute].filter(([, set]) => set.size > 0).map(([route]) => route).sort();

describe('sandbox divergences', () => {
  const worlds = new Map<string, World>();

  beforeAll(async () => {
    worlds.set('none', await world([]));
    for (const name of DIVERGENCE_NAMES) worlds.set(name, await world([name]));
    worlds.set('all', await world(DIVERGENCE_NAMES));
  });

  afterAll(async () => {
    for (const { running } of worlds.values()) await running.close();
  });

  it('declares at least three, each with a description, patterns and routes', () => {
    expect(DIVERGENCE_NAMES.length).toBeGreaterThanOrEqual(3);
    for (const spec of Object.values(SANDBOX_DIVERGENCES)) {
      expect(spec.description.length).toBeGreaterThan(20);
      expect(spec.patterns.length).toBeGreaterThan(0);
      expect(spec.routes.length).toBeGreaterThan(0);
    }
  });

  it('shows no difference without a divergence (the control)', async () => {
    expect(allPatterns(await differences(worlds.get('none') as World))).toEqual([]);
  });

  it.each(DIVERGENCE_NAMES)('%s: the translation differs at exactly the declared patterns, on declared routes only', async (name) => {
    const found = await differences(worlds.get(name) as World);
    const spec = SANDBOX_DIVERGENCES[name];
    // Every pattern reached by the probes is declared, and every declared one is reached.
    expect(allPatterns(found)).toEqual([...spec.patterns].sort());
    for (const route of routesWith(found)) expect(spec.routes).toContain(route);
  });

  it('all at once: the union of the declared patterns and nothing else', async () => {
    const found = await differences(worlds.get('all') as World);
    expect(allPatterns(found)).toEqual([...new Set(DIVERGENCE_NAMES.flatMap((name) => SANDBOX_DIVERGENCES[name].patterns))].sort());
  });

  it('leaves the legacy face alone: both faces still share one world for writes', async () => {
    const { sandbox } = worlds.get('all') as World;
    const app = sandbox.data.apps.find((candidate) => renamedInNerdgraph(candidate) && candidate.accountId === PRIMARY_ACCOUNT) as SandboxApp;
    const shown = (await (await sandbox.app.request(`/v2/applications/${app.id}.json`, { headers: { 'X-Api-Key': DEMO_KEY } })).json()) as {
      application: { name: string };
    };
    expect(shown.application.name).toBe(app.name);
  });

  it('parses SANDBOX_DIVERGE: names, all, empty; an unknown name is refused with the known ones', () => {
    expect(parseDivergences('app-names, deployment-user')).toEqual(['app-names', 'deployment-user']);
    expect(parseDivergences('all')).toEqual(DIVERGENCE_NAMES);
    expect(parseDivergences(' ')).toEqual([]);
    expect(() => parseDivergences('app-names,nope')).toThrow(/Unknown divergence "nope".*app-names, response-time, deployment-user/);
  });
});

// ---------------------------------------------------------------------------------------------
// Legacy jitter

interface MetricAnswer {
  metric_data: { metrics: Array<{ name: string; timeslices: Array<{ from: string; to: string; values: Record<string, number> }> }> };
}

describe('legacy jitter', () => {
  const jittery = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, legacyJitter: true });
  const steady = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW });
  const app = jittery.data.apps.find((candidate) => candidate.reporting) as SandboxApp;
  const names = 'names[]=HttpDispatcher&names[]=Apdex&values[]=average_response_time&values[]=call_count&values[]=requests_per_minute&values[]=score';
  const get = async (sandbox: Sandbox, query: string): Promise<MetricAnswer> => {
    const response = await sandbox.app.request(`/v2/applications/${app.id}/metrics/data.json?${query}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.status).toBe(200);
    return (await response.json()) as MetricAnswer;
  };

  it('two calls differ only in the values of the newest timeslice', async () => {
    const [first, second] = [await get(jittery, names), await get(jittery, names)];
    expect(first.metric_data.metrics.length).toBe(2);
    let changed = 0;
    first.metric_data.metrics.forEach((metric, m) => {
      const other = second.metric_data.metrics[m]!;
      expect(other.timeslices.length).toBe(metric.timeslices.length);
      // Closed timeslices: identical. The newest: same window, values moved.
      expect(other.timeslices.slice(0, -1)).toEqual(metric.timeslices.slice(0, -1));
      const [a, b] = [metric.timeslices.at(-1)!, other.timeslices.at(-1)!];
      expect([b.from, b.to, Object.keys(b.values)]).toEqual([a.from, a.to, Object.keys(a.values)]);
      for (const key of Object.keys(a.values)) {
        if (a.values[key] !== b.values[key]) changed++;
        // Small: within ±2 % of each other (each call within ±1 % of the true value).
        expect(Math.abs((b.values[key] as number) - (a.values[key] as number))).toBeLessThanOrEqual(Math.abs(a.values[key] as number) * 0.021 + 1);
      }
    });
    expect(changed).toBeGreaterThan(0);
  });

  it('the newest timeslice is the true value give or take the jitter; the closed ones are exact', async () => {
    const [noisy, exact] = [await get(jittery, names), await get(steady, names)];
    const [a, b] = [noisy.metric_data.metrics[0]!.timeslices, exact.metric_data.metrics[0]!.timeslices];
    expect(a.slice(0, -1)).toEqual(b.slice(0, -1));
    const newest = b.at(-1)!.values.average_response_time as number;
    expect(Math.abs((a.at(-1)!.values.average_response_time as number) - newest)).toBeLessThanOrEqual(newest * 0.0101);
  });

  it('a summarized answer is one open timeslice: it moves too', async () => {
    const [first, second] = [await get(jittery, `${names}&summarize=true`), await get(jittery, `${names}&summarize=true`)];
    expect(first.metric_data.metrics[0]!.timeslices.length).toBe(1);
    expect(second).not.toEqual(first);
  });

  it('a window that closed minutes ago does not move, and without the option nothing moves', async () => {
    const to = new Date(FIXED_NOW - 3_600_000).toISOString();
    const from = new Date(FIXED_NOW - 5_400_000).toISOString();
    const closed = `${names}&from=${from}&to=${to}`;
    expect(await get(jittery, closed)).toEqual(await get(jittery, closed));
    expect(await get(steady, names)).toEqual(await get(steady, names));
  });
});
