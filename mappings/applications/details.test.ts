import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { forwardTo, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_KEY, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { appInstancesQuery, hostIndexQuery } from '../common/topology-queries.ts';
import { browserGuidOf } from './application.ts';

/**
 * The application list's extra reads (links, browser apdex, filter[host]) as the differential
 * test cannot see them: how many upstream requests each answer costs, what the documents
 * carry, that client text never reaches a query, and that list and show agree app for app.
 */
const demo = { 'X-Api-Key': DEMO_KEY };

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
/** A recording proxy in front of the sandbox's /graphql: what the gateway really sent. */
let proxy: Awaited<ReturnType<typeof startFakeUpstream>>;

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 450 });
  proxy = await startFakeUpstream(async (request, res) => {
    await forwardTo(sandbox.graphqlUrl, request, res);
  });
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

const primaryApps = (): SandboxApp[] => sandbox.sandbox.data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
/** v2's filter[host]: a case-insensitive substring of a current (reporting) host's name. */
const appsWithHost = (text: string): SandboxApp[] =>
  primaryApps().filter((app) => app.reporting && app.hosts.some((host) => host.name.toLowerCase().includes(text.toLowerCase())));

interface ListedApp {
  id: number;
  links?: { application_instances: number[]; application_hosts: number[]; servers: number[] };
  settings: Record<string, unknown>;
}

async function list(gateway: TestGateway, query: string, headers: Record<string, string> = demo) {
  const response = await gateway.app.request(`/v2/applications.json${query}`, { headers });
  expect(response.status).toBe(200);
  return { body: (await response.json()) as { applications: ListedApp[] }, link: response.headers.get('link') ?? '' };
}

/** Upstream requests per operation made by `action`. */
async function countsOf(gateway: TestGateway, action: () => Promise<unknown>): Promise<Record<string, number>> {
  const operations = ['AccessibleAccounts', 'ApplicationsSearch', 'ApplicationsPageDetails', 'ApplicationsBrowserApdex', 'ApplicationHostIndex', 'ApplicationByGuid'];
  const before = await Promise.all(operations.map((op) => gateway.upstreamCount(op)));
  const totalBefore = await gateway.upstreamCount();
  await action();
  const after = await Promise.all(operations.map((op) => gateway.upstreamCount(op)));
  const counts: Record<string, number> = {};
  operations.forEach((op, i) => {
    const delta = after[i]! - before[i]!;
    if (delta > 0) counts[op] = delta;
  });
  // Nothing else was called.
  expect((await gateway.upstreamCount()) - totalBefore).toBe(Object.values(counts).reduce((a, b) => a + b, 0));
  return counts;
}

async function warmGateway(now: () => number = () => FIXED_NOW): Promise<TestGateway> {
  const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, now });
  await gateway.app.request('/v2/applications/1.json', { headers: demo }); // warm the accounts cache
  await gateway.app.request('/v2/applications/1.json', { headers: { 'X-Api-Key': SECONDARY_KEY } });
  return gateway;
}

describe('upstream requests per answer', () => {
  it('a list page costs two requests: the search and one page-details request (never one per app)', async () => {
    const gateway = await warmGateway();
    expect(await countsOf(gateway, () => list(gateway, ''))).toEqual({ ApplicationsSearch: 1, ApplicationsPageDetails: 1 });
    expect(await countsOf(gateway, () => list(gateway, '?page=2'))).toEqual({ ApplicationsSearch: 1, ApplicationsPageDetails: 1 });
  });

  it('exclude_links=true drops the links and the NRQL, still reading the browser apdex in one request', async () => {
    const gateway = await warmGateway();
    let body: { applications: ListedApp[] } = { applications: [] };
    const counts = await countsOf(gateway, async () => ({ body } = await list(gateway, '?exclude_links=true')));
    expect(counts).toEqual({ ApplicationsSearch: 1, ApplicationsBrowserApdex: 1 });
    expect(body.applications).toHaveLength(200);
    expect(body.applications.every((app) => app.links === undefined && typeof app.settings.end_user_apdex_threshold === 'number')).toBe(true);
    // The same page with links right after is not served from the rendering without them.
    const withLinks = await list(gateway, '');
    expect(withLinks.body.applications.every((app) => Array.isArray(app.links?.application_instances))).toBe(true);
  });

  it('an empty page costs the search alone', async () => {
    const gateway = await warmGateway();
    expect(await countsOf(gateway, () => list(gateway, '?filter[name]=no-such-application-anywhere'))).toEqual({ ApplicationsSearch: 1 });
  });

  it('a show costs one request, browser app included', async () => {
    const gateway = await warmGateway();
    const app = primaryApps().find((a) => a.browser !== null)!;
    expect(await countsOf(gateway, async () => gateway.app.request(`/v2/applications/${app.id}.json`, { headers: demo }))).toEqual({ ApplicationByGuid: 1 });
  });

  it('filter[host]: 3 requests cold, 2 per page warm; the host index is shared by texts and kept 60 s per caller and account', async () => {
    let now = FIXED_NOW;
    const gateway = await warmGateway(() => now);
    const many = 'ip-10';
    expect(appsWithHost(many).length).toBeGreaterThan(200);
    expect(await countsOf(gateway, () => list(gateway, `?filter[host]=${many}`))).toEqual({ ApplicationHostIndex: 1, ApplicationsSearch: 1, ApplicationsPageDetails: 1 });
    expect(await countsOf(gateway, () => list(gateway, `?filter[host]=${many}&page=2`))).toEqual({ ApplicationsSearch: 1, ApplicationsPageDetails: 1 });
    expect(await countsOf(gateway, () => list(gateway, '?filter[host]=WORKER'))).toEqual({ ApplicationsSearch: 1, ApplicationsPageDetails: 1 });
    // No app has the host: no search at all.
    expect(await countsOf(gateway, () => list(gateway, '?filter[host]=no-such-host'))).toEqual({});
    // Another caller does not share the index.
    expect(await countsOf(gateway, () => list(gateway, '?filter[host]=no-such-host', { 'X-Api-Key': SECONDARY_KEY }))).toEqual({ ApplicationHostIndex: 1 });
    // Within 60 s the index is reused; after, it is read again.
    now += 59_000;
    expect(await countsOf(gateway, () => list(gateway, '?filter[host]=no-such-host'))).toEqual({});
    now += 2_000;
    expect(await countsOf(gateway, () => list(gateway, '?filter[host]=no-such-host'))).toEqual({ ApplicationHostIndex: 1 });
  });
});

describe('filter[host]', () => {
  it('matches a case-insensitive substring of a current host name, across pages', async () => {
    const gateway = await warmGateway();
    for (const text of ['ip-10', 'IP-10-3', 'Worker-1', '.example.', 'example.internal']) {
      const expected = appsWithHost(text).map((a) => a.id);
      const seen: number[] = [];
      for (let page = 1; page <= Math.ceil(expected.length / 200) + 1; page++) seen.push(...(await list(gateway, `?filter[host]=${encodeURIComponent(text)}&page=${page}`)).body.applications.map((a) => a.id));
      expect(seen.sort()).toEqual(expected.sort());
    }
  });

  it('combines with filter[ids] and filter[name]', async () => {
    const gateway = await warmGateway();
    const matching = appsWithHost('worker');
    const ids = [...matching.slice(0, 3).map((a) => a.id), primaryApps().find((a) => !a.reporting)!.id];
    expect((await list(gateway, `?filter[host]=worker&filter[ids]=${ids.join(',')}`)).body.applications.map((a) => a.id).sort()).toEqual(ids.slice(0, 3).sort());
    const name = matching[0]!.name;
    const byName = (await list(gateway, `?filter[host]=worker&filter[name]=${encodeURIComponent(name)}`)).body.applications.map((a) => a.id);
    expect(byName).toContain(matching[0]!.id);
  });

  it("reaches NerdGraph only as app ids: a hostile text is never sent, LIKE's % and _ included", async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: proxy.url });
    for (const text of ["' OR 1=1 --", '%', '_', 'ip\\-10', "ip-10'", '%ip%']) {
      proxy.received.length = 0;
      await list(gateway, `?filter[host]=${encodeURIComponent(text)}`);
      const sent = JSON.stringify(proxy.received.map((r) => r.variables));
      expect(sent).not.toContain(JSON.stringify(text).slice(1, -1));
    }
    // `%` and `_` match only host names holding them (none does): no application.
    expect((await list(gateway, '?filter[host]=%25')).body.applications).toEqual([]);
    expect((await list(gateway, '?filter[host]=_')).body.applications).toEqual([]);
  });

  it('sends the fixed host-index query, then the matching ids as domainId IN (...)', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: proxy.url });
    proxy.received.length = 0;
    await list(gateway, '?filter[host]=worker-14');
    const index = proxy.received.find((r) => r.operationName === 'ApplicationHostIndex')!;
    // timeout: the NRQL timeout from the request's deadline (5 s here: NerdGraph's least; src/upstream/nrql-timeout.ts).
    expect(index.variables).toEqual({ accountId: PRIMARY_ACCOUNT, hosts: hostIndexQuery({ since: Date.UTC(2026, 10, 22, 11, 50), until: Date.UTC(2026, 10, 22, 12, 0) }), timeout: 5 });
    const search = proxy.received.find((r) => r.operationName === 'ApplicationsSearch')!;
    const ids = appsWithHost('worker-14').map((a) => a.id).sort((a, b) => a - b);
    expect(search.variables.query).toBe(`domain = 'APM' AND type = 'APPLICATION' AND accountId = ${PRIMARY_ACCOUNT} AND domainId IN (${ids.map((id) => `'${id}'`).join(', ')})`);
  });
});

describe('page details', () => {
  it("carry exactly the page's app ids, in one NRQL query and the browser sides' computed GUIDs", async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: proxy.url });
    proxy.received.length = 0;
    const page = (await list(gateway, '?page=2')).body.applications.map((a) => a.id);
    const details = proxy.received.filter((r) => r.operationName === 'ApplicationsPageDetails');
    expect(details).toHaveLength(1);
    const variables = details[0]!.variables as Record<string, unknown> & { instances: string; accountId: number };
    const { instances, accountId } = variables;
    expect(accountId).toBe(PRIMARY_ACCOUNT);
    const sentIds = /appId IN \(([^)]*)\)/.exec(instances)![1]!.split(', ').map(Number);
    expect([...sentIds].sort()).toEqual([...page].sort());
    expect(instances).toBe(appInstancesQuery({ appIds: sentIds, since: Date.UTC(2026, 10, 22, 11, 50), until: Date.UTC(2026, 10, 22, 12, 0) }));
    expect(instances).toContain('FACET appId LIMIT MAX');
    // The browser side of each app of the page, by the GUID the show computes: 8 batches of 25.
    const batches = Array.from({ length: 8 }, (_, call) => variables[`b${call}`] as string[]);
    expect(batches.map((batch) => batch.length)).toEqual(Array(8).fill(25));
    expect(batches.flat().sort()).toEqual(page.map((id) => browserGuidOf(PRIMARY_ACCOUNT, id)).sort());
  });

  it('list items and show agree, app for app, reporting or not, with or without a browser app', async () => {
    const gateway = await warmGateway();
    const listed = new Map<number, ListedApp>();
    for (let page = 1; page <= 3; page++) for (const app of (await list(gateway, `?page=${page}`)).body.applications) listed.set(app.id, app);
    const apps = primaryApps();
    expect(listed.size).toBe(apps.length);
    const sample = apps.filter((_, i) => i % 3 === 0);
    expect(sample.filter((a) => a.reporting).length).toBeGreaterThan(20);
    expect(sample.filter((a) => !a.reporting).length).toBeGreaterThan(5);
    expect(sample.filter((a) => a.browser !== null).length).toBeGreaterThan(10);
    let withLinks = 0;
    for (const app of sample) {
      const shown = (await (await gateway.app.request(`/v2/applications/${app.id}.json`, { headers: demo })).json()) as { application: ListedApp };
      expect(listed.get(app.id)).toEqual(shown.application);
      if ((shown.application.links?.application_instances.length ?? 0) > 0) withLinks++;
    }
    expect(withLinks).toBeGreaterThan(20);
  });

  it("sends end_user_apdex_threshold always: the browser app's target, else v2's default 7", async () => {
    const gateway = await warmGateway();
    const listed = new Map<number, ListedApp>();
    for (let page = 1; page <= 3; page++) for (const app of (await list(gateway, `?page=${page}`)).body.applications) listed.set(app.id, app);
    const withBrowser = primaryApps().filter((a) => a.browser !== null);
    expect(withBrowser.some((a) => a.browser!.apdexTarget !== 7)).toBe(true);
    for (const app of primaryApps()) expect(listed.get(app.id)!.settings.end_user_apdex_threshold).toBe(app.browser?.apdexTarget ?? 7);
  });
});
