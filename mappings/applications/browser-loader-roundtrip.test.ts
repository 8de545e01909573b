import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../test/support/harness.ts';

/**
 * Browser monitoring round trip (the sandbox's behaviour browserLoaderConfig):
 * browser monitoring is a loader setting (LITE, NONE, PRO, SPA), not recent traffic. GET reports
 * the configured loader as settings.enable_real_user_monitoring; the official Go client GETs and
 * PUTs every setting back (no omitempty), so a PUT of unchanged settings must change nothing:
 * PRO stays PRO, LITE stays LITE, an app configured without recent traffic stays on.
 */
const HEADERS = { 'X-Api-Key': DEMO_KEY };
const JSON_HEADERS = { ...HEADERS, 'Content-Type': 'application/json' };

let sandbox: ReturnType<typeof createSandbox>;
let close: () => Promise<void>;
let gateway: TestGateway;

beforeAll(async () => {
  sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW });
  const server = await sandbox.listen(0, '127.0.0.1');
  close = server.close;
  gateway = await createTestGateway({ nerdgraphUrl: `${server.url}/graphql` });
});
afterAll(async () => {
  await close();
});

function app(predicate: (candidate: SandboxApp) => boolean): SandboxApp {
  const found = sandbox.data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && predicate(candidate));
  if (!found) throw new Error('the sandbox world lacks an app this test needs');
  return found;
}

const proWithTraffic = () => app((candidate) => candidate.browser !== null && candidate.browserLoader === 'PRO');
const liteWithTraffic = () => app((candidate) => candidate.browser !== null && candidate.browserLoader === 'LITE');
const configuredWithoutTraffic = () => app((candidate) => candidate.browser === null && candidate.browserLoader !== 'NONE');
const notConfigured = () => app((candidate) => candidate.browserLoader === 'NONE');

interface Settings {
  app_apdex_threshold: number;
  end_user_apdex_threshold: number;
  enable_real_user_monitoring: boolean;
  use_server_side_config: boolean;
}

async function show(id: number): Promise<{ name: string; settings: Settings }> {
  const response = await gateway.app.request(`/v2/applications/${id}.json`, { headers: HEADERS });
  expect(response.status).toBe(200);
  return ((await response.json()) as { application: { name: string; settings: Settings } }).application;
}

async function put(id: number, body: unknown): Promise<Response> {
  return gateway.app.request(`/v2/applications/${id}.json`, { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

const settingsWrites = (): number => sandbox.writes().nerdgraph.agentApplicationSettingsUpdate ?? 0;

describe('GET reports the configured loader', () => {
  it('shows browser monitoring on for an app configured without recent traffic, off for NONE', async () => {
    expect((await show(configuredWithoutTraffic().id)).settings.enable_real_user_monitoring).toBe(true);
    expect((await show(proWithTraffic().id)).settings.enable_real_user_monitoring).toBe(true);
    expect((await show(notConfigured().id)).settings.enable_real_user_monitoring).toBe(false);
  });

  it('lists the same flag for every app of the page', async () => {
    const response = await gateway.app.request('/v2/applications.json', { headers: HEADERS });
    const listed = ((await response.json()) as { applications: Array<{ id: number; settings: Settings }> }).applications;
    expect(listed.length).toBeGreaterThan(10);
    for (const item of listed) {
      const model = sandbox.data.apps.find((candidate) => candidate.id === item.id)!;
      expect(item.settings.enable_real_user_monitoring, String(item.id)).toBe(model.browserLoader !== 'NONE');
    }
  });
});

describe("the Go client's GET-then-PUT of unchanged settings changes nothing", () => {
  it.each([
    ['a PRO app', proWithTraffic],
    ['a LITE app', liteWithTraffic],
    ['an app configured without recent traffic', configuredWithoutTraffic],
  ])('%s keeps its loader and its browser monitoring', async (_name, pick) => {
    const target = pick();
    const loader = target.browserLoader;
    const before = await show(target.id);
    // client-go's UpdateApplication body: every field, no omitempty.
    const response = await put(target.id, { application: { name: before.name, settings: before.settings } });
    expect(response.status).toBe(200);
    expect(target.browserLoader).toBe(loader);
    expect((await show(target.id)).settings).toEqual(before.settings);
  });

  it('sends no mutation when the flag alone equals what GET reported', async () => {
    const target = liteWithTraffic();
    const writes = settingsWrites();
    expect((await put(target.id, { application: { settings: { enable_real_user_monitoring: true } } })).status).toBe(200);
    expect((await put(notConfigured().id, { application: { settings: { enable_real_user_monitoring: false } } })).status).toBe(200);
    expect(settingsWrites()).toBe(writes);
    expect(target.browserLoader).toBe('LITE');
  });
});

describe('a real change of the flag', () => {
  it('false turns a configured app off (NONE); true turns an app without a loader on (SPA)', async () => {
    const on = app((candidate) => candidate.browser !== null && candidate.browserLoader === 'SPA');
    expect((await put(on.id, { application: { settings: { enable_real_user_monitoring: false } } })).status).toBe(200);
    expect(on.browserLoader).toBe('NONE');
    expect((await show(on.id)).settings.enable_real_user_monitoring).toBe(false);
    const off = notConfigured();
    expect((await put(off.id, { application: { settings: { enable_real_user_monitoring: true } } })).status).toBe(200);
    expect(off.browserLoader).toBe('SPA');
    expect((await show(off.id)).settings.enable_real_user_monitoring).toBe(true);
  });
});
