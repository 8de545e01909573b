import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KnownGap, Mapping, UnsupportedMapping } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { RETIRED, RETIRED_ROUTES } from '../../src/v2/retired.ts';
import { compareFaces } from '../../test/support/compare.ts';
import { serveOnLoopback } from '../../test/support/http.ts';
import { decodeRailsXml } from '../../test/support/rails-xml.ts';
import { DEMO_KEY, SECONDARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * Retired products (plugins, components, servers, usages, legacy alert_policies and
 * notification_channels, dashboards, plugin conditions) and the password reset: every
 * (method, route) answers its status and v2 error body, JSON and XML, in-process and through
 * the sandbox's legacy face, and never calls NerdGraph.
 */
const demo = { 'X-Api-Key': DEMO_KEY };

/** A concrete path for a template: ids 123, product apm, policy 7. */
function pathOf(route: string, format: string): string {
  return route.replace('{product}', 'apm').replace('{policy_id}', '7').replace(/\{[a-z_]+\}/g, (p) => (p === '{format}' ? format : '123')).replace('.{format}', `.${format}`);
}

describe('retired routes: answered on purpose', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let gateway: TestGateway;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;
  let mappings: Mapping[];

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 20 });
    gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    served = await serveOnLoopback(gateway.app.fetch);
    mappings = await loadMappings();
    // The caller's accounts are read once per key (AccessibleAccounts) and cached: warm that up,
    // so the counts below show that a retired route itself never calls NerdGraph.
    await gateway.app.request('/v2/applications.json', { headers: demo });
  });
  afterAll(async () => {
    await served.close();
    await sandbox.close();
  });

  it('declares one unsupported mapping per retired (method, route), with its family\'s status, title, reason and replacement', () => {
    expect(RETIRED_ROUTES.length).toBe(28);
    for (const declared of RETIRED_ROUTES) {
      const mapping = mappings.find((m) => m.id === declared.id) as UnsupportedMapping | undefined;
      expect(mapping, declared.id).toBeDefined();
      expect(mapping).toMatchObject({ kind: 'unsupported', fidelity: 'unsupported', method: declared.method, route: declared.route, ...RETIRED[declared.family] });
    }
  });

  it('titles say what is gone, since when where known, and what to use instead', () => {
    expect(RETIRED.plugins.title).toMatch(/June 16, 2021.*integrations/);
    expect(RETIRED.components.title).toMatch(/June 16, 2021/);
    expect(RETIRED.servers.title).toMatch(/May 15, 2018.*INFRA/);
    expect(RETIRED.dashboards.title).toMatch(/410 Gone.*dashboardCreate, dashboardUpdate and dashboardDelete/);
    expect(RETIRED.usages.title).toMatch(/NrConsumption.*NrMTDConsumption/);
    expect(RETIRED.alertPolicies.title).toMatch(/alerts_policies/);
    expect(RETIRED.notificationChannels.title).toMatch(/aiNotificationsCreateDestination.*aiWorkflowsCreateWorkflow/);
    expect(RETIRED.pluginsConditions.title).toMatch(/alerts_nrql_conditions/);
    expect(RETIRED.resetPassword.title).toMatch(/NerdGraph has no password-reset mutation/);
    // 410 where the live API is known to answer it, and for the retired products chosen so.
    for (const family of ['plugins', 'components', 'dashboards', 'servers', 'usages', 'alertPolicies', 'notificationChannels', 'pluginsConditions'] as const) expect(RETIRED[family].status).toBe(410);
    expect(RETIRED.resetPassword.status).toBe(422);
  });

  it.each(RETIRED_ROUTES.map((r) => [`${r.method} ${r.route}`, r] as const))('%s answers its status and title in JSON and XML, without NerdGraph', async (_name, declared) => {
    const { status, title } = RETIRED[declared.family];
    const before = await gateway.upstreamCount();
    for (const format of ['json', 'xml']) {
      const body = declared.method === 'GET' || declared.method === 'DELETE' ? undefined : JSON.stringify({ anything: { name: 'x' } });
      const response = await gateway.app.request(pathOf(declared.route, format), {
        method: declared.method,
        headers: { ...demo, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body } : {}),
      });
      expect(response.status).toBe(status);
      const text = await response.text();
      if (format === 'json') {
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        expect(JSON.parse(text)).toEqual({ error: { title } });
      } else {
        expect(response.headers.get('content-type')).toMatch(/^application\/xml/);
        expect(decodeRailsXml(text).value).toEqual({ error: { title } });
      }
    }
    expect(await gateway.upstreamCount()).toBe(before);
  });

  it('asks for a key first, as every v2 route does (401 before the retired answer)', async () => {
    const response = await gateway.app.request('/v2/plugins.json');
    expect(response.status).toBe(401);
    const wrongMethod = await gateway.app.request('/v2/plugins.json', { method: 'DELETE', headers: demo });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
  });

  it('the legacy face answers every retired route as the gateway does, in its own words (differential)', async () => {
    const TITLE: KnownGap[] = [{ path: 'error.title', description: 'each side words a retired answer its own way' }];
    const mismatches: string[] = [];
    let compared = 0;
    for (const declared of RETIRED_ROUTES) {
      for (const format of ['json', 'xml']) {
        const path = pathOf(declared.route, format);
        const cases = [
          // The retired answers' wording is each side's own (the live titles are UNCONFIRMED):
          // status, format, Allow and the order of checks are compared, not the title.
          { name: 'demo', path, method: declared.method, headers: demo, gaps: TITLE },
          { name: 'with query', path: `${path}?page=2&filter[name]=x`, method: declared.method, headers: demo, gaps: TITLE },
          { name: 'no key', path, method: declared.method, headers: {}, gaps: [] },
          { name: 'account not allowed', path, method: declared.method, headers: { ...demo, 'X-Account-Id': String(SECONDARY_ACCOUNT) }, gaps: [] },
          { name: 'wrong method', path, method: 'PATCH', headers: demo, gaps: TITLE },
        ];
        for (const testCase of cases) {
          const { mismatch } = await compareFaces(served.url, sandbox.url, testCase);
          compared += 1;
          if (mismatch) mismatches.push(mismatch);
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(compared).toBe(RETIRED_ROUTES.length * 10);
    // Nothing was written on either side.
    expect(sandbox.sandbox.writes().total).toBe(0);
  }, 60_000);
});
