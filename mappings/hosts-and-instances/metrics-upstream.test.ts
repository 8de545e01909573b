import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_DIRECTORY_OPERATION } from './app-targets.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import { fleetApp } from '../../sandbox/data.ts';
import type { SandboxApp, SandboxData, SandboxMobileApp } from '../../sandbox/model.ts';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, json, startFakeUpstream, type FakeRequest } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { syntheticHostId } from '../common/app-instances.ts';

/**
 * What the differential cannot see: how many upstream requests the host, instance and mobile
 * metric routes make (one per read, however many names; a host's directory once, shared by
 * its names and data routes), and what they send (scopes as NRQL literals only).
 */
const HOST_DATA = 'ApplicationTopologyMetricData';
const HOST_NAMES = 'ApplicationTopologyMetricNames';
const MOBILE_DATA = 'MobileApplicationMetricData';
const manyNames = Array.from({ length: 40 }, (_, k) => `names[]=Custom/n${k}`).join('&') + '&names[]=HttpDispatcher&names[]=Apdex';

describe('host, instance and mobile metric routes: upstream requests against the sandbox', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let data: SandboxData;
  let apps: SandboxApp[];
  let mobile: SandboxMobileApp;
  const headers = { 'X-Api-Key': DEMO_KEY };

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 40 });
    data = sandbox.sandbox.data;
    // Apps whose instances fit one page of applicationInstancesV2: the fleet app's later pages
    // cost requests of their own (mappings/hosts-and-instances/instances-paging.test.ts counts those).
    const fleet = fleetApp(data.apps);
    apps = data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT && app.reporting && currentHosts(app).length > 1 && app !== fleet);
    mobile = data.mobileApps.find((app) => app.accountId === PRIMARY_ACCOUNT && app.reporting) as SandboxMobileApp;
  });
  afterAll(() => sandbox.close());

  const fresh = (): Promise<TestGateway> => createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  // Reads only: the account lookup the gateway makes once per key is not one of them.
  const reads = async (gateway: TestGateway): Promise<number> => (await gateway.upstreamCount()) - (await gateway.upstreamCount('AccessibleAccounts'));

  it('host data: 2 requests cold (directory, then data), 1 warm, however many names; the names route shares the directory', async () => {
    const gateway = await fresh();
    const app = apps[0] as SandboxApp;
    const [host, other] = currentHosts(app);
    // The gateway's host ids (the sandbox's legacy face has its own).
    const base = `/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host?.name ?? '')}`;
    expect((await gateway.app.request(`${base}/metrics/data.json?${manyNames}`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(2);
    expect(await gateway.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(1);

    expect((await gateway.app.request(`${base}/metrics/data.xml?names[]=Apdex&summarize=true`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(3);
    expect((await gateway.app.request(`${base}/metrics.json`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(4);
    // Another host of the same app: the directory is warm too.
    expect((await gateway.app.request(`/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, other?.name ?? '')}/metrics/data.json?names[]=Apdex`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(5);
    expect(await gateway.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(1);
    expect(await gateway.upstreamCount(HOST_DATA)).toBe(3);
    expect(await gateway.upstreamCount(HOST_NAMES)).toBe(1);
  });

  it('host ids: an unknown id of a known app 404s from the directory (no data request); an unknown app is negative-cached', async () => {
    const gateway = await fresh();
    const app = apps[1] as SandboxApp;
    const unknown = await gateway.app.request(`/v2/applications/${app.id}/hosts/123/metrics/data.json?names[]=Apdex`, { headers });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { title: string } }).error.title).toBe('No application host found with the given ID');
    expect(await reads(gateway)).toBe(1);
    expect((await gateway.app.request(`/v2/applications/${app.id}/hosts/124/metrics.json`, { headers })).status).toBe(404);
    expect(await reads(gateway)).toBe(1);

    for (let i = 0; i < 3; i++) {
      const noApp = await gateway.app.request(`/v2/applications/123/hosts/5/metrics/data.json?names[]=Apdex`, { headers });
      expect(noApp.status).toBe(404);
      expect(((await noApp.json()) as { error: { title: string } }).error.title).toBe('No Application found with the given ID');
    }
    expect(await reads(gateway)).toBe(2);
  });

  it('host directory: concurrent cold requests share one directory read', async () => {
    const gateway = await fresh();
    const app = apps[2] as SandboxApp;
    const hosts = currentHosts(app);
    const answers = await Promise.all(
      [...hosts, ...hosts].map((host) => gateway.app.request(`/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host.name)}/metrics/data.json?names[]=HttpDispatcher`, { headers })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await gateway.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(1);
  });

  it('instance and mobile data: exactly 1 request, however many names; an unknown instance costs its one probe', async () => {
    const gateway = await fresh();
    const app = apps[0] as SandboxApp;
    const instance = currentHosts(app)[0]?.instances[0];
    expect((await gateway.app.request(`/v2/applications/${app.id}/instances/${instance?.id}/metrics/data.json?${manyNames}`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(1);
    expect((await gateway.app.request(`/v2/mobile_applications/${mobile.id}/metrics/data.json?${manyNames}&names[]=Session/Start`, { headers })).status).toBe(200);
    expect(await reads(gateway)).toBe(2);
    expect(await gateway.upstreamCount(MOBILE_DATA)).toBe(1);
    const unknown = await gateway.app.request(`/v2/applications/${app.id}/instances/123/metrics/data.json?names[]=Apdex`, { headers });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { title: string } }).error.title).toBe('No application instance found with the given ID');
    expect(await reads(gateway)).toBe(3);
  });

  it('host answers are the host\'s, not the app\'s: two hosts of one app differ, and their call counts add up to the app\'s', async () => {
    const gateway = await fresh();
    const app = apps[0] as SandboxApp;
    const query = 'names[]=HttpDispatcher&values[]=call_count&summarize=true&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z';
    const countOf = async (path: string): Promise<number> => {
      const body = (await (await gateway.app.request(`${path}/metrics/data.json?${query}`, { headers })).json()) as { metric_data: { metrics: Array<{ timeslices: Array<{ values: { call_count: number } }> }> } };
      return body.metric_data.metrics[0]?.timeslices[0]?.values.call_count ?? Number.NaN;
    };
    const total = await countOf(`/v2/applications/${app.id}`);
    const perHost = await Promise.all(currentHosts(app).map((host) => countOf(`/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host.name)}`)));
    expect(new Set(perHost).size).toBeGreaterThan(1);
    expect(perHost.every((count) => count < total)).toBe(true);
    expect(perHost.reduce((a, b) => a + b, 0)).toBeCloseTo(total, 6);
  });
});

describe('host, instance and mobile metric routes: what they send (scripted NerdGraph)', () => {
  const APP = 4242;
  const HOSTILE_HOST = "web-1' OR appId IN (1) OR host = '\\";
  const HOST_ID = syntheticHostId(APP, HOSTILE_HOST);
  const guid = entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP);
  const instances = [
    { details: { id: '17', host: HOSTILE_HOST, instanceName: `${HOSTILE_HOST}:8080`, language: 'java', name: 'App' } },
    { details: { id: '18', host: 'web-2', instanceName: null, language: 'java', name: 'App' } },
  ];
  const appEntity = (list: unknown[]) => ({ guid, accountId: PRIMARY_ACCOUNT, applicationInstancesV2: { applicationInstances: list } });
  let probeInstances: unknown[] = instances;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let gateway: TestGateway;
  const headers = { 'x-api-key': 'NRAK-TEST-KEY' };

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      if (request.operationName === HOST_DIRECTORY_OPERATION) return json(res, 200, { data: { actor: { entity: appEntity(instances) } } });
      const mobileGuid = entityGuid(PRIMARY_ACCOUNT, 'MOBILE', 'APPLICATION', 77);
      const entity = request.operationName === MOBILE_DATA ? { guid: mobileGuid, accountId: PRIMARY_ACCOUNT } : appEntity(probeInstances);
      return json(res, 200, { data: { actor: { entity, account: { data: { results: [] }, known: { results: [{ names: [] }] }, nrql: { results: [{ names: [] }] } } } } });
    });
    gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
  });
  afterAll(() => upstream.close());

  const lastOf = (operation: string): FakeRequest => upstream.received.filter((r) => r.operationName === operation).at(-1) as FakeRequest;

  it('a host name reaches NRQL only as a quoted literal, the app id as a number', async () => {
    const response = await gateway.app.request(`/v2/applications/${APP}/hosts/${HOST_ID}/metrics/data.json?names[]=Apdex`, { headers });
    expect(response.status).toBe(200);
    const sent = lastOf(HOST_DATA);
    expect(sent.variables.guid).toBe(guid);
    expect(sent.variables.data).toContain(`WHERE appId = ${APP} AND host = ${quoteLiteral(HOSTILE_HOST)} AND metricTimesliceName IN ('Apdex')`);
    expect(sent.variables.known).toContain(`WHERE appId = ${APP} AND host = ${quoteLiteral(HOSTILE_HOST)} AND`);
  });

  it('an instance is scoped by realAgentId as a number or a string (its type is undocumented)', async () => {
    expect((await gateway.app.request(`/v2/applications/${APP}/instances/18/metrics.json`, { headers })).status).toBe(200);
    expect(lastOf(HOST_NAMES).variables.names).toContain(`WHERE appId = ${APP} AND realAgentId IN (18, '18') AND`);
  });

  it('a mobile app is scoped by its computed GUID, and a single `name` is read as a name', async () => {
    const mobileGuid = entityGuid(PRIMARY_ACCOUNT, 'MOBILE', 'APPLICATION', 77);
    const response = await gateway.app.request(`/v2/mobile_applications/77/metrics/data.json?name=Mobile/Crash/All`, { headers });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { metric_data: { metrics_not_found: string[] } };
    expect(body.metric_data.metrics_not_found).toEqual(['Mobile/Crash/All']);
    const sent = lastOf(MOBILE_DATA);
    expect(sent.variables.guid).toBe(mobileGuid);
    expect(sent.variables.data).toContain(`WHERE (entityGuid = '${mobileGuid}' OR entity.guid = '${mobileGuid}') AND metricTimesliceName IN ('Mobile/Crash/All')`);
  });

  it('a host that appears after the directory was read is found once the directory is older than the miss window', async () => {
    const NEW_HOST = 'web-3';
    let clock = FIXED_NOW;
    let directory = instances;
    const scripted = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      if (request.operationName === HOST_DIRECTORY_OPERATION) return json(res, 200, { data: { actor: { entity: appEntity(directory) } } });
      return json(res, 200, { data: { actor: { entity: appEntity(directory), account: { data: { results: [] }, known: { results: [{ names: [] }] } } } } });
    });
    try {
      const clocked = await createTestGateway({ nerdgraphUrl: scripted.url, now: () => clock });
      const path = `/v2/applications/${APP}/hosts/${syntheticHostId(APP, NEW_HOST)}/metrics/data.json?names[]=Apdex`;
      expect((await clocked.app.request(path, { headers })).status).toBe(404);
      directory = [...instances, { details: { id: '19', host: NEW_HOST, instanceName: null, language: 'java', name: 'App' } }];
      // Within the miss window the directory just read is authoritative: still 404, no new read.
      expect((await clocked.app.request(path, { headers })).status).toBe(404);
      expect(await clocked.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(1);
      clock += 10_000;
      expect((await clocked.app.request(path, { headers })).status).toBe(200);
      expect(await clocked.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(2);
    } finally {
      await scripted.close();
    }
  });

  it('walking unknown host ids costs at most one directory re-read per app and miss window', async () => {
    let clock = FIXED_NOW;
    const scripted = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      if (request.operationName === HOST_DIRECTORY_OPERATION) return json(res, 200, { data: { actor: { entity: appEntity(instances) } } });
      return json(res, 200, { data: { actor: { entity: appEntity(instances), account: { data: { results: [] }, known: { results: [{ names: [] }] } } } } });
    });
    try {
      const clocked = await createTestGateway({ nerdgraphUrl: scripted.url, now: () => clock });
      const ask = (hostId: number) => clocked.app.request(`/v2/applications/${APP}/hosts/${hostId}/metrics/data.json?names[]=Apdex`, { headers });
      expect((await ask(HOST_ID)).status).toBe(200);
      expect(await clocked.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(1);
      clock += 10_000;
      // Ten unknown ids after the window: one shared re-read, not ten.
      for (let id = 11; id <= 20; id++) expect((await ask(id)).status).toBe(404);
      expect(await clocked.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(2);
      // The next window (on the gateway's clock): one more re-read for any number of ids.
      clock += 10_000;
      for (let id = 21; id <= 25; id++) expect((await ask(id)).status).toBe(404);
      expect(await clocked.upstreamCount(HOST_DIRECTORY_OPERATION)).toBe(3);
    } finally {
      await scripted.close();
    }
  });

  it('a host that left between the directory read and the data request is a 404, not stale data', async () => {
    probeInstances = instances.slice(1);
    try {
      const response = await gateway.app.request(`/v2/applications/${APP}/hosts/${HOST_ID}/metrics/data.json?names[]=HttpDispatcher`, { headers });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { title: string } }).error.title).toBe('No application host found with the given ID');
    } finally {
      probeInstances = instances;
    }
  });
});
