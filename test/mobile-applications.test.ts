import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityGuid } from '../src/v2/ids.ts';
import { accountsAnswer, json, startFakeUpstream } from './support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox } from './support/harness.ts';

/** GET /v2/mobile_applications(/{id}): upstream request counts and what the differential cannot see. */
const demo = { 'X-Api-Key': DEMO_KEY };

describe('mobile applications: upstream requests', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 450 });
  });
  afterAll(() => sandbox.close());

  const warmGateway = async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    await gateway.app.request('/v2/mobile_applications.json?filter[ids]=', { headers: demo }); // warms the accounts cache only
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

  beforeAll(async () => {
    upstream = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      if (req.operationName === 'MobileApplicationsSearch') {
        return json(res, 200, { data: { actor: { entitySearch: { count: searchAnswer.length, results: { nextCursor: null, entities: searchAnswer } } } } });
      }
      return json(res, 500, { errors: [{ message: `unexpected ${req.operationName ?? 'operation'}` }] });
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

  it('entities of another account are dropped from lists', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const foreign = mobile(PRIMARY_ACCOUNT + 1, 5);
    searchAnswer = [mobile(PRIMARY_ACCOUNT, 4), foreign, mobile(PRIMARY_ACCOUNT, 6, { guid: entityGuid(PRIMARY_ACCOUNT + 1, 'MOBILE', 'APPLICATION', 6) })];
    const list = (await (await gateway.app.request('/v2/mobile_applications.json', { headers: demo })).json()) as { applications: Array<{ id: number }> };
    expect(list.applications.map((a) => a.id)).toEqual([4]);
  });
});
