import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topologySummaryQuery } from './app-topology.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream, type FakeRequest } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { syntheticHostId } from '../common/app-instances.ts';
import { facetedSummaryQuery } from '../common/topology-queries.ts';

/**
 * What the differential test cannot see: the upstream request count per call, the NRQL and
 * variables sent, account scoping of the returned entity, and how odd NerdGraph answers read.
 */
const MINUTE_START = Math.floor(FIXED_NOW / 60_000) * 60_000;

describe('the summary NRQL', () => {
  it('is one query over the 10 whole minutes before the request minute, faceted by host or realAgentId', () => {
    const hosts = topologySummaryQuery('hosts', 4242, FIXED_NOW);
    expect(hosts).toContain('FROM Metric WHERE appId = 4242 AND metricTimesliceName IN (');
    expect(hosts).toContain(`FACET host LIMIT MAX SINCE ${MINUTE_START - 600_000} UNTIL ${MINUTE_START}`);
    expect(hosts).toContain("filter(average(newrelic.timeslice.value) * 1000, WHERE metricTimesliceName IN ('HttpDispatcher')) AS response_time");
    expect(hosts).toContain("filter(count(newrelic.timeslice.value), WHERE metricTimesliceName IN ('HttpDispatcher', 'OtherTransaction/all')) AS transactions");
    expect(topologySummaryQuery('instances', 4242, FIXED_NOW)).toContain('FACET realAgentId LIMIT MAX');
  });

  it('quotes metric names as literals and refuses a bad facet or alias', () => {
    const query = facetedSummaryQuery({
      scope: [{ attribute: 'appId', value: 1 }],
      facet: 'host',
      items: [{ alias: 'x', metrics: ["a'b\\c"], expression: 'count({v})' }],
      since: 0,
      until: 60_000,
    });
    expect(query).toContain("IN ('a\\'b\\\\c')");
    const base = { scope: [], since: 0, until: 60_000 };
    expect(() => facetedSummaryQuery({ ...base, facet: 'host; DROP', items: [] })).toThrow(/attribute/);
    expect(() => facetedSummaryQuery({ ...base, facet: 'host', items: [{ alias: 'X Y', metrics: ['m'], expression: 'count({v})' }] })).toThrow(/alias/);
  });
});

describe('upstream requests against the sandbox', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let gateway: TestGateway;
  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 40 });
    gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  });
  afterAll(() => sandbox.close());

  const get = (path: string) => gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });

  it('costs exactly one request per read once the account is known, and none for what is refused locally', async () => {
    const app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT && a.reporting && a.hosts.length > 0)!;
    const host = app.hosts[0]!;
    const instance = host.instances[0]!;
    await get(`/v2/applications/${app.id}/hosts.json`); // warms the caller's account cache
    const reads: Array<[string, string, number]> = [
      [`/v2/applications/${app.id}/hosts.json?filter[hostname]=a&page=2`, 'ApplicationTopology', 200],
      [`/v2/applications/${app.id}/hosts/${syntheticHostId(app.id, host.name)}.xml`, 'ApplicationTopology', 200],
      [`/v2/applications/${app.id}/instances.xml`, 'ApplicationTopology', 200],
      [`/v2/applications/${app.id}/instances/${instance.id}.json`, 'ApplicationTopology', 200],
      [`/v2/applications/123/hosts.json`, 'ApplicationTopology', 404],
      [`/v2/applications/${app.id}/instances/123.json`, 'ApplicationTopology', 404],
    ];
    for (const [path, operation, status] of reads) {
      const before = await gateway.upstreamCount();
      const beforeOperation = await gateway.upstreamCount(operation);
      expect((await get(path)).status, path).toBe(status);
      expect((await gateway.upstreamCount()) - before, path).toBe(1);
      expect((await gateway.upstreamCount(operation)) - beforeOperation, path).toBe(1);
    }
    const refused: Array<[string, number]> = [
      [`/v2/applications/abc/hosts.json`, 404],
      [`/v2/applications/${app.id}/instances.json?filter[ids]=x`, 422],
      [`/v2/applications/${app.id}/hosts.json?page=0`, 422],
    ];
    // A malformed host or instance id still asks whether the app exists (its 404 comes first).
    for (const path of [`/v2/applications/${app.id}/hosts/abc.json`, `/v2/applications/${app.id}/instances/0.xml`, `/v2/applications/123/hosts/abc.json`]) {
      const before = await gateway.upstreamCount();
      expect((await get(path)).status, path).toBe(404);
      expect((await gateway.upstreamCount()) - before, path).toBe(1);
    }
    for (const [path, status] of refused) {
      const before = await gateway.upstreamCount();
      expect((await get(path)).status, path).toBe(status);
      expect((await gateway.upstreamCount()) - before, path).toBe(0);
    }
  });
});

describe('against a scripted NerdGraph', () => {
  const APP = 4242;
  const GUID = entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP);
  const instances = [
    { details: { id: '11', host: "web-1'; DROP", instanceName: 'web-1:8080', language: 'java', name: 'App' } },
    { details: { id: '12', host: "web-1'; DROP", instanceName: null, language: 'java', name: 'App' } },
    { details: { id: '13', host: 'quiet-host', instanceName: 'quiet-host', language: 'java', name: 'App' } },
    { details: { id: 'not-a-number', host: 'odd', instanceName: null, language: 'java', name: 'App' } },
  ];
  let entity: unknown;
  let results: unknown[] | null;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let gateway: TestGateway;
  const topologyCalls = (): FakeRequest[] => upstream.received.filter((r) => r.operationName === 'ApplicationTopology');

  beforeAll(async () => {
    upstream = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      json(res, 200, { data: { actor: { entity, account: { nrql: results === null ? null : { results } } } } });
    });
    gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
  });
  afterAll(() => upstream.close());

  const get = async (path: string) => {
    const response = await gateway.app.request(path, { headers: { 'X-Api-Key': 'NRAK-TEST-KEY' } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const row = (facet: string | number, values: Record<string, number | null> = {}) => ({
    facet,
    response_time: 120.004,
    throughput: 30,
    errors: 3,
    transactions: 400,
    apdex_score: 0.9349,
    eu_response_time: null,
    eu_throughput: null,
    eu_apdex_score: null,
    ...values,
  });

  it('sends the computed GUID, the account and the NRQL as variables; a hostile hostname filter never leaves the gateway', async () => {
    entity = apmEntity(PRIMARY_ACCOUNT, APP, { applicationInstancesV2: { applicationInstances: instances } });
    results = [row("web-1'; DROP")];
    upstream.received.length = 0;
    const hostile = "web' OR appId IS NOT NULL OR '";
    const answer = await get(`/v2/applications/${APP}/hosts.json?filter[hostname]=${encodeURIComponent(hostile)}`);
    expect(answer.status).toBe(200);
    expect(answer.body.application_hosts).toEqual([]);
    const [call] = topologyCalls();
    // timeout: the NRQL timeout from the request's deadline (5 s here: NerdGraph's least; src/upstream/nrql-timeout.ts).
    expect(call?.variables).toEqual({ accountId: PRIMARY_ACCOUNT, guid: GUID, summary: topologySummaryQuery('hosts', APP, FIXED_NOW), timeout: 5 });
    expect(JSON.stringify(upstream.received)).not.toContain('OR appId');
  });

  it('groups instances by host, parses ports, drops non-numeric instance ids, and omits the summary of a host without rows', async () => {
    entity = apmEntity(PRIMARY_ACCOUNT, APP, { applicationInstancesV2: { applicationInstances: instances } });
    results = [row("web-1'; DROP", { eu_response_time: 1234, eu_throughput: 6, eu_apdex_score: 0.5 }), row('unlisted-host')];
    const hosts = (await get(`/v2/applications/${APP}/hosts.json`)).body.application_hosts as Array<Record<string, unknown>>;
    const web = hosts.find((host) => host.host === "web-1'; DROP");
    expect(web).toEqual({
      id: syntheticHostId(APP, "web-1'; DROP"),
      application_name: `App ${APP}`,
      host: "web-1'; DROP",
      language: 'java',
      health_status: 'green',
      application_summary: { response_time: 120, throughput: 30, error_rate: 0.75, apdex_score: 0.93, instance_count: 2 },
      end_user_summary: { response_time: 1.23, throughput: 6, apdex_score: 0.5 },
      links: { application: APP, application_instances: [11, 12], server: null },
    });
    const quiet = hosts.find((host) => host.host === 'quiet-host');
    expect(quiet).not.toHaveProperty('application_summary');
    expect(hosts.map((host) => host.host)).not.toContain('odd');

    results = [row(11), row(12, { transactions: 0 })];
    const list = (await get(`/v2/applications/${APP}/instances.json`)).body.application_instances as Array<Record<string, unknown>>;
    expect(list.map((instance) => [instance.id, instance.port])).toEqual([
      [11, 8080],
      [12, 0],
      [13, 0],
    ]);
    expect((list[1]?.application_summary as Record<string, unknown>).error_rate).toBe(0);
    expect(list[0]?.links).toEqual({ application: APP, application_host: syntheticHostId(APP, "web-1'; DROP"), server: null });
  });

  it('answers 404 for an entity of another account (counted as a scope violation) and 502 for an answer without NRQL results', async () => {
    entity = apmEntity(PRIMARY_ACCOUNT + 1, APP, { guid: entityGuid(PRIMARY_ACCOUNT + 1, 'APM', 'APPLICATION', APP) });
    results = [];
    const violations = async () => (await gateway.metrics.scopeViolations.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await violations();
    const foreign = await get(`/v2/applications/${APP}/instances/11.json`);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).toContain('No Application found with the given ID');
    expect(await violations()).toBe(before + 1);

    entity = apmEntity(PRIMARY_ACCOUNT, APP, { applicationInstancesV2: { applicationInstances: instances } });
    results = null;
    expect((await get(`/v2/applications/${APP}/hosts.json`)).status).toBe(502);
  });

  it('answers the host and instance 404 titles for ids the app does not have', async () => {
    entity = apmEntity(PRIMARY_ACCOUNT, APP, { applicationInstancesV2: { applicationInstances: instances } });
    results = [];
    expect(JSON.stringify((await get(`/v2/applications/${APP}/hosts/777.json`)).body)).toContain('No application host found with the given ID');
    expect(JSON.stringify((await get(`/v2/applications/${APP}/instances/777.json`)).body)).toContain('No application instance found with the given ID');
  });
});
