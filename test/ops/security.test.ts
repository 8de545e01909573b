import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from '../support/fake-upstream.ts';
import { FIXED_NOW, createTestGateway } from '../support/harness.ts';

const SENTINEL = 'NRAK-SENTINEL7Q2W9E4R6T8Y1U3I5O0P';

describe('the API key never leaves the request', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('never appears in logs, bodies, headers or metrics, whatever the route or failure', async () => {
    // Enough apps for several pages, so Link headers (which echo parameters) are produced.
    const sandbox = createSandbox({ seed: 3, apmApps: 450, now: () => FIXED_NOW, apiKeys: new Map([[SENTINEL, [1000001]]]) });
    const running = await sandbox.listen(0, '127.0.0.1');
    closers.push(running.close);
    // A hostile upstream that lets the key in, then echoes it in every error message, once
    // at the start and once straddling the point where long messages are cut.
    const echo = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([1000001]));
      const key = String(req.headers['api-key']);
      return json(res, 200, { errors: [{ message: `denied for ${key}` }, { message: `${'x'.repeat(290)}${key}`, extensions: { errorClass: 'TIMEOUT' } }] });
    });
    closers.push(echo.close);

    const app = sandbox.data.apps[0]!;
    const paths = [
      '/v2/applications.json',
      '/v2/applications.xml?page=2&filter[name]=a',
      `/v2/applications/${app.id}.json`,
      `/v2/applications/${app.id}.xml`,
      '/v2/applications/abc.json',
      '/v2/applications.json?filter[ids]=x',
      '/v2/applications.json?page=-1',
      '/v2/nothing-here.json',
      '/v2/applications.html',
      `/v2/applications.json?api_key=${SENTINEL}&page=1`,
      `/v2/applications.json?api_key[]=${SENTINEL}&page=2`,
      `/v2/${SENTINEL}/applications.json`,
    ];
    for (const upstreamUrl of [`${running.url}/graphql`, echo.url]) {
      const gateway = await createTestGateway({ nerdgraphUrl: upstreamUrl });
      const seen: string[] = [];
      for (const path of paths) {
        for (const header of ['X-Api-Key', 'Api-Key']) {
          const response = await gateway.app.request(path, { headers: { [header]: SENTINEL, 'X-Account-Id': 'not-a-number' } });
          seen.push(await response.text(), JSON.stringify([...response.headers]));
          const pinned = await gateway.app.request(path, { headers: { [header]: SENTINEL } });
          seen.push(await pinned.text(), JSON.stringify([...pinned.headers]));
        }
      }
      seen.push(await (await gateway.app.request('/metrics')).text());
      seen.push(...gateway.logs);
      expect(gateway.logs.length).toBeGreaterThan(20);
      const leaks = seen.filter((text) => text.includes(SENTINEL) || text.includes(SENTINEL.slice(5)));
      expect(leaks).toEqual([]);
    }
  });
});

describe('account scoping', () => {
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
      return json(res, 200, { data: { actor: { entity: apm(OTHER, 2) } } });
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

  it('answers 404 rather than show an entity of another account', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const response = await gateway.app.request('/v2/applications/2.json', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { title: 'No Application found with the given ID' } });
  });

  it('sends the resolved account in every entity search', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    await gateway.app.request('/v2/applications.json?filter[name]=x', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    const searches = upstream.received.filter((r) => r.operationName === 'ApplicationsSearch');
    expect(searches.at(-1)?.variables.query).toBe(`domain = 'APM' AND type = 'APPLICATION' AND accountId = ${MINE} AND name LIKE 'x'`);
  });
});
