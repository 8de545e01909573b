import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../server.ts';
import { fleetApp, generateSandboxData } from '../data.ts';
import { currentHosts } from '../hosts.ts';
import type { SandboxApp } from '../model.ts';

/**
 * The sandbox's own behaviours for instance pages and browser loaders: applicationInstancesV2 pages
 * (instancePageSize) and the browser loader setting (browserLoaderConfig), and both switched off.
 */
const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const KEY = 'NRAK-SANDBOX-DEMO';

const PAGE = `query ($guid: EntityGuid!, $cursor: String) { actor { entity(guid: $guid) { ... on ApmApplicationEntity {
  applicationInstancesV2(cursor: $cursor) { applicationInstances { details { id } } nextCursor } } } } }`;
const LOADER = `query ($guid: EntityGuid!) { actor { entity(guid: $guid) { ... on BrowserApplicationEntity {
  servingApmApplicationId browserSettings { browserMonitoring { loader } } } } } }`;

type Answer = { data?: { actor: { entity: Record<string, unknown> | null } }; errors?: Array<{ message: string }> };

function serve(behave: { instancePageSize?: number; browserLoaderConfig?: boolean }) {
  const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => NOW, behave });
  const listening = sandbox.listen(0, '127.0.0.1');
  async function post(query: string, variables: Record<string, unknown>): Promise<Answer> {
    const { url } = await listening;
    const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'API-Key': KEY }, body: JSON.stringify({ query, variables }) });
    return (await response.json()) as Answer;
  }
  return { sandbox, post, close: async () => (await listening).close() };
}

async function walk(post: ReturnType<typeof serve>['post'], guid: string): Promise<{ pages: number; ids: string[] }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const answer = await post(PAGE, { guid, cursor });
    const page = (answer.data?.actor.entity as { applicationInstancesV2: { applicationInstances: Array<{ details: { id: string } }>; nextCursor: string | null } }).applicationInstancesV2;
    ids.push(...page.applicationInstances.map((instance) => instance.details.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null);
  return { pages, ids };
}

describe('applicationInstancesV2 pages', () => {
  const paged = serve({});
  const whole = serve({ instancePageSize: 0 });
  let fleet: SandboxApp;
  beforeAll(() => {
    fleet = fleetApp(paged.sandbox.data.apps) as SandboxApp;
  });
  afterAll(async () => {
    await paged.close();
    await whole.close();
  });

  it('hands out pages of 50 and a cursor to the next, every instance once', async () => {
    const expected = currentHosts(fleet).flatMap((host) => host.instances.map((instance) => String(instance.id)));
    const { pages, ids } = await walk(paged.post, fleet.guid);
    expect(pages).toBe(Math.ceil(expected.length / 50));
    expect(pages).toBeGreaterThan(1);
    expect(ids).toEqual(expected);
  });

  it('puts every instance on one page when the behaviour is off (0)', async () => {
    const { pages, ids } = await walk(whole.post, fleet.guid);
    expect(pages).toBe(1);
    expect(ids.length).toBeGreaterThan(400);
  });

  it("refuses another app's cursor and a made-up one", async () => {
    const first = (await paged.post(PAGE, { guid: fleet.guid, cursor: null })).data?.actor.entity as { applicationInstancesV2: { nextCursor: string } };
    const other = paged.sandbox.data.apps.find((app) => app.reporting && app !== fleet) as SandboxApp;
    for (const cursor of [first.applicationInstancesV2.nextCursor, 'bm90IGEgY3Vyc29y']) {
      const answer = await paged.post(PAGE, { guid: cursor === 'bm90IGEgY3Vyc29y' ? fleet.guid : other.guid, cursor });
      expect(answer.errors?.[0]?.message).toBe('Invalid cursor');
    }
  });
});

describe('the browser loader setting', () => {
  it('is held by each app, traffic or not, and shown on its browser side', async () => {
    const { sandbox, post, close } = serve({});
    try {
      const apps = sandbox.data.apps;
      const configuredIdle = apps.find((app) => app.browser === null && app.browserLoader !== 'NONE') as SandboxApp;
      const side = sandbox.data.browserApps.find((browserApp) => browserApp.servingApmApplicationId === configuredIdle.id);
      expect(side?.id).toBe(configuredIdle.id);
      const browser = (await post(LOADER, { guid: side?.guid })).data?.actor.entity;
      expect(browser).toEqual({ servingApmApplicationId: configuredIdle.id, browserSettings: { browserMonitoring: { loader: configuredIdle.browserLoader } } });
    } finally {
      await close();
    }
  });

  it('follows traffic when the behaviour is off: SPA with page views, NONE without', () => {
    const data = generateSandboxData({ seed: 7, apmApps: 20, now: NOW, behave: { browserLoaderConfig: false } });
    for (const app of data.apps) expect(app.browserLoader).toBe(app.browser === null ? 'NONE' : 'SPA');
    const on = generateSandboxData({ seed: 7, apmApps: 20, now: NOW });
    // The switch moves nothing but the loaders (and the browser sides they bring).
    expect(on.apps.map(({ browserLoader: _l, ...app }) => app)).toEqual(data.apps.map(({ browserLoader: _l, ...app }) => app));
  });
});
