import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { createTestGateway } from '../../test/support/harness.ts';

/** The application list keeps to the caller's account whatever NerdGraph answers. */
describe('account scoping of the application list', () => {
  const MINE = 1000001;
  const OTHER = 1000002;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;

  const apm = (accountId: number, id: number, guidAccount = accountId) =>
    apmEntity(accountId, id, { guid: entityGuid(guidAccount, 'APM', 'APPLICATION', id) });

  beforeAll(async () => {
    // An upstream that ignores the account condition and mixes in other accounts' entities,
    // including one whose accountId field lies but whose GUID tells the truth.
    upstream = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([MINE]));
      if (req.operationName === 'ApplicationsSearch') {
        return json(res, 200, { data: { actor: { entitySearch: { count: 3, results: { nextCursor: null, entities: [apm(MINE, 1), apm(OTHER, 2), apm(MINE, 3, OTHER)] } } } } });
      }
      if (req.operationName === 'ApplicationsPageDetails') {
        // Browser apps with app 1's id: the caller's (apdex 3), another account's, and one whose accountId lies (an upstream that ignores the GUIDs asked).
        const browser = (accountId: number, apdexTarget: number, guidAccount = accountId) => ({
          guid: entityGuid(guidAccount, 'BROWSER', 'APPLICATION', 1),
          accountId,
          applicationId: 1,
          servingApmApplicationId: 1,
          settings: { apdexTarget },
        });
        const entities = [browser(MINE, 3), browser(OTHER, 9), browser(MINE, 8, OTHER)];
        return json(res, 200, { data: { actor: { account: { nrql: { results: [] } }, b0: entities } } });
      }
      return json(res, 200, { errors: [{ message: `unexpected ${String(req.operationName)}` }] });
    });
  });
  afterAll(() => upstream.close());

  it('drops every entity of another account from a list, and counts it', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const response = await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    const body = (await response.json()) as { applications: Array<{ id: number }> };
    expect(body.applications.map((a) => a.id)).toEqual([1]);
    expect(await (await gateway.app.request('/metrics')).text()).toMatch(/v2bridge_account_scope_violations_total\{operation="ApplicationsSearch"\} 2/);
  });

  it("drops browser apps of another account from a list page's details, and counts them", async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const response = await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    const body = (await response.json()) as { applications: Array<{ id: number; settings: { end_user_apdex_threshold: number } }> };
    expect(body.applications.map((a) => [a.id, a.settings.end_user_apdex_threshold])).toEqual([[1, 3]]);
    expect(await (await gateway.app.request('/metrics')).text()).toMatch(/v2bridge_account_scope_violations_total\{operation="ApplicationsPageDetails"\} 2/);
  });

  it('sends the resolved account in every entity search', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    await gateway.app.request('/v2/applications.json?filter[name]=x', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    const searches = upstream.received.filter((r) => r.operationName === 'ApplicationsSearch');
    expect(searches.at(-1)?.variables.query).toBe(`domain = 'APM' AND type = 'APPLICATION' AND accountId = ${MINE} AND name LIKE 'x'`);
  });
});
