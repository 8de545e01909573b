import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { routeTable } from '../../src/routes/compat-report.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { loadDocuments } from '../../src/upstream/documents.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT } from '../support/harness.ts';
import { FIXTURE_OPERATIONS, GADGETS, SPROCKETS, WIDGET, WIDGET_NOTE, WIDGET_NOTES, WIDGETS, loadTestMappings, startFixtureLegacy } from '../support/fixture-routes.ts';
import { createModesGateway } from '../support/modes.ts';

/**
 * The stage tests' fixture routes (test/support/fixture-routes.ts): the translation of each
 * agrees with the fixture legacy face over the same sandbox, the write reaches the sandbox's
 * NerdGraph face as one mutation, and none of them is ever part of the real table.
 */
describe('the fixture routes of the stage tests', () => {
  let sandbox: Sandbox;
  let running: { url: string; close: () => Promise<void> };
  let legacy: Awaited<ReturnType<typeof startFixtureLegacy>>;
  let appIds: number[];
  const headers = { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' };
  const gatewayWith = (routeModes = '') => createModesGateway({ nerdgraphUrl: `${legacy.origin}/graphql`, legacyUrl: legacy.origin, routeModes, routes: 'fixtures' });
  const fromLegacy = (path: string, init: RequestInit = {}) => fetch(`${legacy.origin}${path}`, { ...init, headers });

  beforeAll(async () => {
    sandbox = createSandbox({ seed: 7, apmApps: 25, now: () => FIXED_NOW });
    running = await sandbox.listen(0, '127.0.0.1');
    legacy = await startFixtureLegacy(sandbox, running.url);
    appIds = sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT).map((app) => app.id).sort((a, b) => a - b);
  });
  afterAll(async () => {
    await legacy.close();
    await running.close();
  });

  it('are not in the real mapping table, its documents or the compatibility report', async () => {
    const real = await loadMappings();
    expect(real.filter((mapping) => mapping.route.includes('fixture'))).toEqual([]);
    expect([...loadDocuments().keys()].filter((name) => name.startsWith('Fixture'))).toEqual([]);
    expect(routeTable(real)).not.toMatch(/fixture/i);
    const routes = (await loadTestMappings('fixtures')).map((mapping) => `${mapping.method} ${mapping.route}`);
    expect(routes).toEqual(expect.arrayContaining([`GET ${WIDGETS}`, `GET ${WIDGET}`, `POST ${WIDGET_NOTES}`, `DELETE ${WIDGET_NOTE}`, `GET ${GADGETS}`, `GET ${SPROCKETS}`]));
  });

  it.each([
    ['the list', '/v2/fixture_widgets.json'],
    ['page 2 of the list', '/v2/fixture_widgets.json?page=2'],
    ['a filtered list', '/v2/fixture_widgets.json?filter[name]=a'],
    ['a page past the end', '/v2/fixture_widgets.json?page=9'],
  ])('widgets, %s: the translation answers what the fixture legacy face answers', async (_name, path) => {
    const gateway = await gatewayWith();
    const translated = await gateway.app.request(path, { headers });
    const expected = await fromLegacy(path);
    expect(translated.status).toBe(expected.status);
    const body = (await translated.json()) as { widgets: unknown[] };
    expect(body).toEqual(await expected.json());
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetsSearch)).toBeGreaterThan(0);
    if (path === '/v2/fixture_widgets.json') expect(body.widgets.length).toBe(10);
  });

  it('widgets, show (JSON and XML) and an unknown id: the same answers on both sides', async () => {
    const gateway = await gatewayWith();
    for (const path of [`/v2/fixture_widgets/${appIds[3]}.json`, `/v2/fixture_widgets/${appIds[3]}.xml`, '/v2/fixture_widgets/999999999.json']) {
      const translated = await gateway.app.request(path, { headers });
      const expected = await fromLegacy(path);
      expect({ path, status: translated.status, body: await translated.text() }).toEqual({ path, status: expected.status, body: await expected.text() });
    }
  });

  it('the note write: one FixtureWidgetNote mutation the sandbox applies, answered as the legacy face answers', async () => {
    const gateway = await gatewayWith();
    const before = sandbox.writes();
    const body = JSON.stringify({ note: { text: 'fixture write' } });
    const translated = await gateway.app.request(`/v2/fixture_widgets/${appIds[0]}/notes.json`, { method: 'POST', headers, body });
    expect(translated.status).toBe(201);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(1);
    expect(JSON.stringify(sandbox.writes())).not.toBe(JSON.stringify(before));
    const expected = await fromLegacy(`/v2/fixture_widgets/${appIds[0]}/notes.json`, { method: 'POST', body });
    expect(expected.status).toBe(201);
    expect(await translated.json()).toEqual(await expected.json());
    // A refused note sends nothing.
    const refused = await gateway.app.request(`/v2/fixture_widgets/${appIds[0]}/notes.json`, { method: 'POST', headers, body: '{"note":{}}' });
    expect(refused.status).toBe(422);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(1);
  });

  it('gadgets are forwarded to the legacy API; sprockets too unless a rule names them, then translated alike', async () => {
    const gateway = await gatewayWith('*=translate');
    const gadgets = await gateway.app.request('/v2/fixture_gadgets.json', { headers });
    expect(await gadgets.json()).toEqual(await (await fromLegacy('/v2/fixture_gadgets.json')).json());
    const forwarded = legacy.received.length;
    await gateway.app.request('/v2/fixture_sprockets.json', { headers });
    expect(legacy.received.length).toBe(forwarded + 1);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.sprockets)).toBe(0);
    const named = await gatewayWith('/v2/fixture_sprockets*=translate');
    const translated = await named.app.request('/v2/fixture_sprockets.json', { headers });
    expect(await named.upstreamCount(FIXTURE_OPERATIONS.sprockets)).toBe(1);
    expect(await translated.json()).toEqual(await (await fromLegacy('/v2/fixture_sprockets.json')).json());
  });

  it('the unsupported DELETE is a 422 that sends nothing', async () => {
    const gateway = await gatewayWith();
    const response = await gateway.app.request(`/v2/fixture_widgets/${appIds[0]}/notes/1.json`, { method: 'DELETE', headers });
    expect(response.status).toBe(422);
    // Only the caller's accounts are read (the key's check); nothing for the route.
    expect(await gateway.upstreamCount()).toBe(await gateway.upstreamCount('AccessibleAccounts'));
  });
});
