import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, json, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox } from '../../test/support/harness.ts';

/** GET /v2/mobile_applications(/{id}): upstream request counts and what the differential cannot see. */
const demo = { 'X-Api-Key': DEMO_KEY };
const NOT_FOUND = { error: { title: 'No Mobile Application found with the given ID' } };

describe('mobile applications: upstream requests', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 450 });
  });
  afterAll(() => sandbox.close());

  const warmGateway = async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    await gateway.app.request('/v2/mobile_applications/abc.json', { headers: demo }); // warms the accounts cache only
    return gateway;
  };

  it('a list page costs one MobileApplicationsSearch; walking every page, one per page', async () => {
    const gateway = await warmGateway();
    const before = await gateway.upstreamCount();
    const seen: number[] = [];
    let next: string | undefined = 'http://localhost/v2/mobile_applications.json';
    let pages = 0;
    while (next) {
      const response = await gateway.app.request(next, { headers: demo });
      expect(response.status).toBe(200);
      seen.push(...((await response.json()) as { applications: Array<{ id: number }> }).applications.map((a) => a.id));
      pages++;
      expect((await gateway.upstreamCount()) - before).toBe(pages);
      next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    const expected = sandbox.sandbox.data.mobileApps.filter((a) => a.accountId === PRIMARY_ACCOUNT).map((a) => a.id);
    expect(pages).toBe(Math.ceil(expected.length / 200));
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen.sort()).toEqual(expected.sort());
    expect(await gateway.upstreamCount('MobileApplicationsSearch')).toBe(pages);
  });

  it('a show costs one MobileApplicationByGuid (no GUID lookup); malformed ids and empty filter[ids] cost none', async () => {
    const gateway = await warmGateway();
    const before = await gateway.upstreamCount();
    const app = sandbox.sandbox.data.mobileApps.find((a) => a.accountId === PRIMARY_ACCOUNT)!;
    expect((await gateway.app.request(`/v2/mobile_applications/${app.id}.json`, { headers: demo })).status).toBe(200);
    expect(await gateway.upstreamCount('MobileApplicationByGuid')).toBe(1);
    expect((await gateway.upstreamCount()) - before).toBe(1);
    for (const path of ['/v2/mobile_applications/0.json', '/v2/mobile_applications/1e3.xml', '/v2/mobile_applications.json?filter[ids]=']) {
      await gateway.app.request(path, { headers: demo });
    }
    expect((await gateway.upstreamCount()) - before).toBe(1);
  });

  it('GET on the list path answers instead of 405, and POST still creates', async () => {
    const gateway = await warmGateway();
    expect((await gateway.app.request('/v2/mobile_applications.json', { headers: demo })).status).toBe(200);
    const created = await gateway.app.request('/v2/mobile_applications.json', {
      method: 'POST',
      headers: { ...demo, 'Content-Type': 'application/json' },
      body: JSON.stringify({ mobile_application: { name: 'Counted App' } }),
    });
    expect(created.status).toBe(201);
    const patch = await gateway.app.request('/v2/mobile_applications.json', { method: 'PATCH', headers: demo });
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
  });
});

describe('mobile applications: what reaches NerdGraph, and what comes back', () => {
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  const mobile = (accountId: number, id: number, overrides: Record<string, unknown> = {}) => ({
    guid: entityGuid(accountId, 'MOBILE', 'APPLICATION', id),
    accountId,
    name: `Phone ${id}`,
    reporting: true,
    alertSeverity: 'WARNING',
    applicationId: id,
    mobileSummary: null,
    ...overrides,
  });
  let searchAnswer: unknown[] = [];
  let entityAnswer: unknown = null;

  beforeAll(async () => {
    upstream = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      if (req.operationName === 'MobileApplicationsSearch') {
        return json(res, 200, { data: { actor: { entitySearch: { count: searchAnswer.length, results: { nextCursor: null, entities: searchAnswer } } } } });
      }
      return json(res, 200, { data: { actor: { entity: entityAnswer } } });
    });
  });
  afterAll(() => upstream.close());

  it('a hostile filter[name] reaches the search only as a quoted literal, beside the account and kind conditions', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    searchAnswer = [];
    const hostile = "x' OR accountId = 1 OR name LIKE '\\";
    const response = await gateway.app.request(`/v2/mobile_applications.json?filter[name]=${encodeURIComponent(hostile)}&filter[ids]=7,8`, { headers: demo });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ applications: [] });
    const search = upstream.received.filter((r) => r.operationName === 'MobileApplicationsSearch').at(-1)!;
    expect(search.variables).toEqual({
      query: `domain = 'MOBILE' AND type = 'APPLICATION' AND accountId = ${PRIMARY_ACCOUNT} AND name LIKE 'x\\' OR accountId = 1 OR name LIKE \\'\\\\' AND domainId IN ('7', '8')`,
      cursor: null,
    });
  });

  it('a show sends the computed GUID as a variable', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    entityAnswer = mobile(PRIMARY_ACCOUNT, 42);
    expect((await gateway.app.request('/v2/mobile_applications/42.json', { headers: demo })).status).toBe(200);
    const show = upstream.received.filter((r) => r.operationName === 'MobileApplicationByGuid').at(-1)!;
    expect(show.variables).toEqual({ guid: entityGuid(PRIMARY_ACCOUNT, 'MOBILE', 'APPLICATION', 42) });
  });

  it('entities of another account are dropped from lists and 404 on show', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const foreign = mobile(PRIMARY_ACCOUNT + 1, 5);
    searchAnswer = [mobile(PRIMARY_ACCOUNT, 4), foreign, mobile(PRIMARY_ACCOUNT, 6, { guid: entityGuid(PRIMARY_ACCOUNT + 1, 'MOBILE', 'APPLICATION', 6) })];
    const list = (await (await gateway.app.request('/v2/mobile_applications.json', { headers: demo })).json()) as { applications: Array<{ id: number }> };
    expect(list.applications.map((a) => a.id)).toEqual([4]);
    entityAnswer = foreign;
    const shown = await gateway.app.request('/v2/mobile_applications/5.json', { headers: demo });
    expect(shown.status).toBe(404);
    expect(await shown.json()).toEqual(NOT_FOUND);
    // Another entity than the one asked for (same account) is no answer either.
    entityAnswer = mobile(PRIMARY_ACCOUNT, 9);
    expect((await gateway.app.request('/v2/mobile_applications/8.json', { headers: demo })).status).toBe(404);
  });

  it('every v2 key is present: gaps and missing NerdGraph values are null, crash data unsupported without crashCount', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    entityAnswer = mobile(PRIMARY_ACCOUNT, 42, {
      mobileSummary: { appLaunchCount: 10, crashCount: null, crashRate: null, httpErrorRate: 0.5, httpRequestCount: 30, httpRequestRate: 3, httpResponseTimeAverage: 0.25, mobileSessionCount: 0, networkFailureRate: null },
    });
    const response = await gateway.app.request('/v2/mobile_applications/42.json', { headers: demo });
    expect(await response.json()).toEqual({
      application: {
        id: 42,
        name: 'Phone 42',
        health_status: 'orange',
        reporting: true,
        last_reported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\+00:00$/),
        mobile_summary: {
          active_users: null,
          launch_count: 10,
          throughput: 3,
          response_time: 0.25,
          calls_per_session: null,
          interaction_time: null,
          failed_call_rate: null,
          remote_error_rate: 0.5,
        },
        crash_summary: { supports_crash_data: false, unresolved_crash_count: null, crash_count: null, crash_rate: null },
      },
    });
    const xml = await (await gateway.app.request('/v2/mobile_applications/42.xml', { headers: demo })).text();
    expect(xml).toContain('<active_users nil="true"/>');
    expect(xml).toMatch(/^<\?xml[^>]*>\s*<response><application><id type="integer">42<\/id>/);
  });

  it('an entity of a shape it cannot read is an upstream failure, never a 500', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    entityAnswer = { ...mobile(PRIMARY_ACCOUNT, 42), applicationId: 'not a number' };
    expect((await gateway.app.request('/v2/mobile_applications/42.json', { headers: demo })).status).toBe(502);
  });
});
