import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from '../support/fake-upstream.ts';
import { WidgetTitles } from '../support/fixture-mappings/widgets/widgets.ts';
import { FIXTURE_OPERATIONS } from '../support/fixture-routes.ts';
import { FIXED_NOW, createTestGateway } from '../support/harness.ts';

const SENTINEL = 'NRAK-SENTINEL7Q2W9E4R6T8Y1U3I5O0P';

describe('the API key never leaves the request', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('never appears in logs, bodies, headers or metrics, whatever the route or failure', async () => {
    // Enough apps for several pages of widgets, so Link headers (which echo parameters) are produced.
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
      '/v2/fixture_widgets.json',
      '/v2/fixture_widgets.xml?page=2&filter[name]=a',
      `/v2/fixture_widgets/${app.id}.json`,
      `/v2/fixture_widgets/${app.id}.xml`,
      '/v2/fixture_widgets/abc.json',
      `/v2/fixture_widgets/${app.id}/notes.json`,
      '/v2/fixture_widgets.json?page=-1',
      '/v2/nothing-here.json',
      '/v2/fixture_widgets.html',
      `/v2/fixture_widgets.json?api_key=${SENTINEL}&page=1`,
      `/v2/fixture_widgets.json?api_key[]=${SENTINEL}&page=2`,
      `/v2/${SENTINEL}/fixture_widgets.json`,
    ];
    for (const upstreamUrl of [`${running.url}/graphql`, echo.url]) {
      const gateway = await createTestGateway({ nerdgraphUrl: upstreamUrl, routes: 'fixtures' });
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
  /** What the fake answers FixtureWidget with, per test. */
  let shown: unknown = null;

  beforeAll(async () => {
    // An upstream that answers a show with whatever entity the test puts there.
    upstream = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([MINE]));
      return json(res, 200, { data: { actor: { entity: shown } } });
    });
  });
  afterAll(() => upstream.close());

  it('answers 404 rather than show an entity of another account, or one whose GUID names another account, and counts each', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures' });
    const cases = [
      apmEntity(OTHER, 2),
      // The accountId field lies; the GUID tells the truth.
      apmEntity(MINE, 2, { guid: entityGuid(OTHER, 'APM', 'APPLICATION', 2) }),
    ];
    for (const entity of cases) {
      shown = entity;
      const response = await gateway.app.request('/v2/fixture_widgets/2.json', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { title: WidgetTitles.notFound } });
    }
    expect(upstream.received.filter((r) => r.operationName === FIXTURE_OPERATIONS.widget).map((r) => r.variables.guid)).toEqual([
      entityGuid(MINE, 'APM', 'APPLICATION', 2),
      entityGuid(MINE, 'APM', 'APPLICATION', 2),
    ]);
    expect(await (await gateway.app.request('/metrics')).text()).toMatch(/v2bridge_account_scope_violations_total\{operation="entity"\} 2\n/);
    // Not vacuous: the caller's own widget is shown.
    shown = apmEntity(MINE, 2);
    const own = await gateway.app.request('/v2/fixture_widgets/2.json', { headers: { 'X-Api-Key': 'NRAK-ANY' } });
    expect(await own.json()).toEqual({ widget: { id: 2, name: 'App 2' } });
  });
});
