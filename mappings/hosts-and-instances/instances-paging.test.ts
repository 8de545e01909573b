import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { fleetApp } from '../../sandbox/data.ts';
import { currentHosts } from '../../sandbox/hosts.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway, type TestGateway } from '../../test/support/harness.ts';
import { syntheticHostId } from '../common/app-instances.ts';

/**
 * applicationInstancesV2 is paged (the sandbox's behaviour instancePageSize,
 * 50 by default): the gateway reads every page, bounded, and keeps the walked list briefly, so a
 * host or instance on a later page is listed, shown and measured like one on the first, the
 * application's links are whole, and an app past the bound answers a v2 error naming it.
 */
const HEADERS = { 'X-Api-Key': DEMO_KEY };
/** The gateway's bound (mappings/common/app-instances.ts MAX_INSTANCE_PAGES), as its mappings document it. */
const MAX_INSTANCE_PAGES = 20;

async function world(instancePageSize: number) {
  const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { instancePageSize } });
  const server = await sandbox.listen(0, '127.0.0.1');
  const gateway = await createTestGateway({ nerdgraphUrl: `${server.url}/graphql` });
  const fleet = fleetApp(sandbox.data.apps) as SandboxApp;
  return { sandbox, server, gateway, fleet };
}

const instancesOf = (app: SandboxApp) => currentHosts(app).flatMap((host) => host.instances);

async function get(gateway: TestGateway, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await gateway.app.request(path, { headers: HEADERS });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('every page of applicationInstancesV2', () => {
  let env: Awaited<ReturnType<typeof world>>;
  beforeAll(async () => {
    env = await world(50);
  });
  afterAll(async () => {
    await env.server.close();
  });

  it('the fleet app spans several pages of instances', () => {
    expect(instancesOf(env.fleet).length).toBeGreaterThan(3 * 50);
  });

  it('lists and shows a host and an instance from the last page (200, not 404)', async () => {
    const { gateway, fleet } = env;
    const host = currentHosts(fleet).at(-1)!;
    const instance = instancesOf(fleet).at(-1)!;
    const hosts = await get(gateway, `/v2/applications/${fleet.id}/hosts.json?filter[ids]=${syntheticHostId(fleet.id, host.name)}`);
    expect(hosts.status).toBe(200);
    expect((hosts.body.application_hosts as Array<{ id: number; host: string }>).map((h) => [h.id, h.host])).toEqual([[syntheticHostId(fleet.id, host.name), host.name]]);
    const instances = await get(gateway, `/v2/applications/${fleet.id}/instances.json?filter[ids]=${instance.id}`);
    expect((instances.body.application_instances as Array<{ id: number }>).map((i) => i.id)).toEqual([instance.id]);
    expect((await get(gateway, `/v2/applications/${fleet.id}/hosts/${syntheticHostId(fleet.id, host.name)}.json`)).status).toBe(200);
    expect((await get(gateway, `/v2/applications/${fleet.id}/instances/${instance.id}.json`)).status).toBe(200);
  });

  it('serves the metric routes of a host and an instance from the last page', async () => {
    const { gateway, fleet } = env;
    const host = currentHosts(fleet).at(-1)!;
    const instance = instancesOf(fleet).at(-1)!;
    expect((await get(gateway, `/v2/applications/${fleet.id}/hosts/${syntheticHostId(fleet.id, host.name)}/metrics.json`)).status).toBe(200);
    expect((await get(gateway, `/v2/applications/${fleet.id}/instances/${instance.id}/metrics.json`)).status).toBe(200);
    const data = await get(gateway, `/v2/applications/${fleet.id}/instances/${instance.id}/metrics/data.json?names[]=HttpDispatcher&summarize=true`);
    expect(data.status).toBe(200);
    // An id on no page is still a 404.
    expect((await get(gateway, `/v2/applications/${fleet.id}/instances/1/metrics.json`)).status).toBe(404);
  });

  it("gives the application's show every instance and host id", async () => {
    const { gateway, fleet } = env;
    const shown = await get(gateway, `/v2/applications/${fleet.id}.json`);
    expect(shown.status).toBe(200);
    const links = (shown.body.application as { links: { application_instances: number[]; application_hosts: number[] } }).links;
    expect(links.application_instances).toEqual(instancesOf(fleet).map((i) => i.id).sort((a, b) => a - b));
    expect(links.application_hosts).toEqual(currentHosts(fleet).map((h) => syntheticHostId(fleet.id, h.name)).sort((a, b) => a - b));
  });

  it('walks the pages once per app while the list is kept, whichever route asks', async () => {
    const { gateway, fleet } = env;
    const pages = Math.ceil(instancesOf(fleet).length / 50);
    const instance = instancesOf(fleet).at(-2)!;
    const before = await gateway.upstreamCount('ApplicationInstancesPage');
    // The earlier tests of this world walked the fleet app's pages once, between all their routes.
    expect(before).toBe(pages - 1);
    await get(gateway, `/v2/applications/${fleet.id}/instances/${instance.id}.json`);
    await get(gateway, `/v2/applications/${fleet.id}.json`);
    expect(await gateway.upstreamCount('ApplicationInstancesPage')).toBe(before);
  });
});

describe('the bound on pages of instances', () => {
  let env: Awaited<ReturnType<typeof world>>;
  beforeAll(async () => {
    // Pages of 5: the fleet app spans far more than the gateway reads.
    env = await world(5);
  });
  afterAll(async () => {
    await env.server.close();
  });

  it('answers a v2 error naming the bound, not a cut list, and does not walk again while it is kept', async () => {
    const { gateway, fleet } = env;
    expect(Math.ceil(instancesOf(fleet).length / 5)).toBeGreaterThan(MAX_INSTANCE_PAGES);
    const hosts = await get(gateway, `/v2/applications/${fleet.id}/hosts.json`);
    expect(hosts.status).toBe(503);
    const title = (hosts.body as { error: { title: string } }).error.title;
    expect(title).toContain(`more than ${MAX_INSTANCE_PAGES} pages`);
    const walked = await gateway.upstreamCount('ApplicationInstancesPage');
    expect(walked).toBe(MAX_INSTANCE_PAGES - 1);
    const shown = await get(gateway, `/v2/applications/${fleet.id}.json`);
    expect(shown).toEqual({ status: 503, body: { error: { title } } });
    expect(await gateway.upstreamCount('ApplicationInstancesPage')).toBe(walked);
  });

  it('still serves an app whose instances fit the bound', async () => {
    const { gateway, sandbox } = env;
    const small = sandbox.data.apps.find((app) => app.reporting && app.id !== env.fleet.id && instancesOf(app).length > 5)!;
    const shown = await get(gateway, `/v2/applications/${small.id}.json`);
    expect(shown.status).toBe(200);
    expect((shown.body.application as { links: { application_instances: number[] } }).links.application_instances).toEqual(
      instancesOf(small).map((i) => i.id).sort((a, b) => a - b),
    );
  });
});
