import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { fleetApp } from '../../sandbox/data.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway } from '../../test/support/harness.ts';

/**
 * The writes of an app past the instance bound (mappings/common/app-instances.ts: 20 pages):
 * the read before a write needs the entity and its browser side only, and the read-back after a
 * confirmed write answers the first page's links rather than an error (the write happened).
 */
const HEADERS = { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/json' };
const MAX_INSTANCE_PAGES = 20;
const PAGE = 5;

type Shown = { application: { name: string; settings: { app_apdex_threshold: number }; links: { application_instances: number[] } } };

describe('writes on an application past the instance bound', () => {
  let sandbox: ReturnType<typeof createSandbox>;
  let server: Awaited<ReturnType<ReturnType<typeof createSandbox>['listen']>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  let fleet: SandboxApp;
  beforeAll(async () => {
    sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { instancePageSize: PAGE } });
    server = await sandbox.listen(0, '127.0.0.1');
    gateway = await createTestGateway({ nerdgraphUrl: `${server.url}/graphql` });
    fleet = fleetApp(sandbox.data.apps) as SandboxApp;
  });
  afterAll(async () => {
    await server.close();
  });

  const firstPageIds = () =>
    currentHosts(fleet)
      .flatMap((host) => host.instances)
      .map((instance) => instance.id)
      .slice(0, PAGE);

  it('the fleet app is past the bound: its show answers 503', async () => {
    expect(Math.ceil(currentHosts(fleet).flatMap((host) => host.instances).length / PAGE)).toBeGreaterThan(MAX_INSTANCE_PAGES);
    expect((await gateway.app.request(`/v2/applications/${fleet.id}.json`, { headers: HEADERS })).status).toBe(503);
  });

  it('a PUT with enable_real_user_monitoring (the Go client) writes, and answers the app with its first page of links', async () => {
    const writes = sandbox.writes().nerdgraph.agentApplicationSettingsUpdate ?? 0;
    const response = await gateway.app.request(`/v2/applications/${fleet.id}.json`, {
      method: 'PUT',
      headers: HEADERS,
      body: JSON.stringify({ application: { name: 'renamed', settings: { app_apdex_threshold: 0.7, enable_real_user_monitoring: true } } }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Shown;
    expect(body.application.name).toBe('renamed');
    expect(body.application.settings.app_apdex_threshold).toBe(0.7);
    expect(body.application.links.application_instances).toEqual([...firstPageIds()].sort((a, b) => a - b));
    expect(sandbox.writes().nerdgraph.agentApplicationSettingsUpdate).toBe(writes + 1);
  });

  it('a PUT without the flag writes and answers 200, not 502 "may have been applied"', async () => {
    const writes = sandbox.writes().nerdgraph.agentApplicationSettingsUpdate ?? 0;
    const response = await gateway.app.request(`/v2/applications/${fleet.id}.json`, {
      method: 'PUT',
      headers: HEADERS,
      body: JSON.stringify({ application: { settings: { app_apdex_threshold: 0.9 } } }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Shown).application.settings.app_apdex_threshold).toBe(0.9);
    expect(sandbox.writes().nerdgraph.agentApplicationSettingsUpdate).toBe(writes + 1);
  });

  it('a DELETE of the reporting app answers v2\'s 409, not the bound\'s 503', async () => {
    const response = await gateway.app.request(`/v2/applications/${fleet.id}.json`, { method: 'DELETE', headers: HEADERS });
    expect(response.status).toBe(409);
  });
});
