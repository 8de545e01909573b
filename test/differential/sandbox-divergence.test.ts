import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIVERGENCE_NAMES, SANDBOX_DIVERGENCES, parseDivergences, renamedInNerdgraph, type DivergenceName } from '../../sandbox/divergence.ts';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { fleetApp } from '../../sandbox/data.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { withoutGaps } from '../support/compare.ts';
import { TOPOLOGY_ID_PATHS, hostKey, idToken } from '../support/derived-ids.ts';
import { openFaces, type Faces } from '../support/differential.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT } from '../support/harness.ts';

/**
 * The sandbox's known divergences: with one switched on, the gateway's translation (over the
 * NerdGraph face) differs from the legacy face exactly at the divergence's declared v2 field
 * patterns, on its declared routes, and nowhere else (the mappings' documented gaps left out,
 * as the differential tests do). Without any, the same requests show no difference at all.
 */

interface Probe {
  path: string;
  /** The v2 route, as the divergences name it. */
  route: string;
  /** Its mapping: the known gaps left out. */
  mapping: string;
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
    { path: '/v2/applications.json', route: '/v2/applications.{format}', mapping: 'applications.list' },
    { path: '/v2/applications.json?filter[language]=java', route: '/v2/applications.{format}', mapping: 'applications.list' },
  ];
  for (const app of chosen) {
    const base = `/v2/applications/${app.id}`;
    list.push({ path: `${base}.json`, route: '/v2/applications/{id}.{format}', mapping: 'applications.show' });
    // The fleet app's hosts fill several pages, and each side pages them in the order of its own
    // host ids (support/derived-ids.ts): its first page is not the same hosts on both sides.
    if (app !== fleetApp(data.apps)) list.push({ path: `${base}/hosts.json`, route: '/v2/applications/{id}/hosts.{format}', mapping: 'applications.hosts.list' });
    list.push({ path: `${base}/instances.json`, route: '/v2/applications/{id}/instances.{format}', mapping: 'applications.instances.list' });
    const host = currentHosts(app)[0];
    if (host) {
      list.push({ path: `${base}/hosts/${idToken('host', hostKey(app.id, host.name))}.json`, route: '/v2/applications/{id}/hosts/{host_id}.{format}', mapping: 'applications.hosts.show' });
      list.push({
        path: `${base}/instances/${host.instances[0]?.id}.json`,
        route: '/v2/applications/{id}/instances/{instance_id}.{format}',
        mapping: 'applications.instances.show',
      });
    }
    list.push({ path: `${base}/deployments.json`, route: '/v2/applications/{id}/deployments.{format}', mapping: 'applications.deployments.list' });
  }
  for (const app of [withUser, withoutUser]) {
    if (app) list.push({ path: `/v2/applications/${app.id}/deployments.json`, route: '/v2/applications/{id}/deployments.{format}', mapping: 'applications.deployments.list' });
  }
  return list;
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
async function differences(faces: Faces): Promise<Map<string, Set<string>>> {
  const byRoute = new Map<string, Set<string>>();
  for (const probe of probes(faces.legacy.data)) {
    // Host and deployment ids are each side's own, put back to tokens (support/derived-ids.ts).
    const { gateway: translated, legacy } = await faces.send({ name: probe.route, path: probe.path, gaps: [] });
    const found = byRoute.get(probe.route) ?? new Set<string>();
    byRoute.set(probe.route, found);
    if (legacy.status !== translated.status) found.add(`(status) ${probe.path}`);
    if (legacy.link !== translated.link) found.add('(link)');
    const gaps = faces.gapsOf(probe.mapping);
    differingPatterns(withoutGaps(hostsInOrder(legacy.body), gaps), withoutGaps(hostsInOrder(translated.body), gaps), '', found);
  }
  return byRoute;
}

const allPatterns = (byRoute: Map<string, Set<string>>): string[] => [...new Set([...byRoute.values()].flatMap((set) => [...set]))].sort();
const routesWith = (byRoute: Map<string, Set<string>>): string[] => [...byRoute].filter(([, set]) => set.size > 0).map(([route]) => route).sort();

describe('sandbox divergences', () => {
  /** One world per divergence (the gateway over its NerdGraph face, its own legacy face), one with none, one with all. */
  const worlds = new Map<string, Faces>();
  const world = (name: string): Faces => worlds.get(name) as Faces;

  beforeAll(async () => {
    const open = (diverge: readonly DivergenceName[]) => openFaces({ apmApps: 60, diverge, ids: TOPOLOGY_ID_PATHS });
    worlds.set('none', await open([]));
    for (const name of DIVERGENCE_NAMES) worlds.set(name, await open([name]));
    worlds.set('all', await open(DIVERGENCE_NAMES));
  }, 120_000);

  afterAll(async () => {
    for (const faces of worlds.values()) await faces.close();
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
    expect(allPatterns(await differences(world('none')))).toEqual([]);
  });

  it.each(DIVERGENCE_NAMES)('%s: the translation differs at exactly the declared patterns, on declared routes only', async (name) => {
    const found = await differences(world(name));
    const spec = SANDBOX_DIVERGENCES[name];
    // Every pattern reached by the probes is declared, and every declared one is reached.
    expect(allPatterns(found)).toEqual([...spec.patterns].sort());
    for (const route of routesWith(found)) expect(spec.routes).toContain(route);
  });

  it('all at once: the union of the declared patterns and nothing else', async () => {
    const found = await differences(world('all'));
    expect(allPatterns(found)).toEqual([...new Set(DIVERGENCE_NAMES.flatMap((name) => SANDBOX_DIVERGENCES[name].patterns))].sort());
  });

  it('leaves the legacy face alone: both faces still share one world for writes', async () => {
    const sandbox = world('all').legacy;
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
