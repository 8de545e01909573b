import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../sandbox/server.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../support/harness.ts';

/**
 * `sandbox.writes()`: every write either face executed, by `METHOD template` (legacy) and by
 * mutation field (NerdGraph), with the total. Reads and refused writes are not counted; a
 * write through the gateway is one NerdGraph write and no legacy one.
 */

const DEMO = { 'X-Api-Key': DEMO_KEY };
const JSON_DEMO = { ...DEMO, 'Content-Type': 'application/json' };
const fresh = (): Sandbox => createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW });
const primaryApps = (sandbox: Sandbox): SandboxApp[] => sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);

async function graphql(sandbox: Sandbox, query: string, variables: Record<string, unknown>): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'Api-Key': DEMO_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

const SETTINGS = `mutation ($guid: EntityGuid!, $settings: AgentApplicationSettingsUpdateInput!) {
  agentApplicationSettingsUpdate(guid: $guid, settings: $settings) { guid errors { errorClass } }
}`;
const DELETE = 'mutation ($guid: EntityGuid!) { agentApplicationDelete(guid: $guid) { success } }';
const CREATE_MOBILE = 'mutation ($accountId: Int!, $name: String!) { agentApplicationCreateMobile(accountId: $accountId, name: $name) { guid } }';

describe('write counts, face by face', () => {
  it('starts at zero', () => {
    expect(fresh().writes()).toEqual({ legacy: {}, nerdgraph: {}, total: 0 });
  });

  it('counts executed legacy writes by method and template; reads and refused writes are not counted', async () => {
    const sandbox = fresh();
    const app = primaryApps(sandbox)[0] as SandboxApp;
    const deployments = `/v2/applications/${app.id}/deployments.json`;
    // Reads, including a POST that reads (metric data), count nothing.
    expect((await sandbox.app.request(`/v2/applications/${app.id}.json`, { headers: DEMO })).status).toBe(200);
    expect((await sandbox.app.request(deployments, { headers: DEMO })).status).toBe(200);
    expect((await sandbox.app.request(`/v2/applications/${app.id}/metrics/data.json`, { method: 'POST', headers: DEMO, body: '' })).status).toBe(422);
    expect((await sandbox.app.request('/v2/alerts_policies.json', { headers: DEMO })).status).toBe(200);
    // Refused writes: nothing was written.
    expect((await sandbox.app.request(deployments, { method: 'POST', headers: JSON_DEMO, body: '{}' })).status).toBe(400);
    expect((await sandbox.app.request('/v2/alerts_policies.json', { method: 'POST', headers: JSON_DEMO, body: '{"policy":{"name":""}}' })).status).toBe(422);
    expect((await sandbox.app.request('/v2/alerts_policies/1.json', { method: 'DELETE', headers: DEMO })).status).toBe(404);
    // A refusal answered (not thrown) by its route: still nothing written.
    expect((await sandbox.app.request(`/v2/applications/${app.id}.json`, { method: 'PUT', headers: JSON_DEMO, body: '{"application":{"name":" "}}' })).status).toBe(422);
    expect(sandbox.writes().total).toBe(0);

    // Executed writes.
    const deploy = (revision: string) => sandbox.app.request(deployments, { method: 'POST', headers: JSON_DEMO, body: JSON.stringify({ deployment: { revision } }) });
    expect((await deploy('r1')).status).toBe(201);
    expect((await deploy('r2')).status).toBe(201);
    expect((await sandbox.app.request(`/v2/applications/${app.id}.xml`, { method: 'PUT', headers: JSON_DEMO, body: '{"application":{"name":"Renamed"}}' })).status).toBe(200);
    const created = await sandbox.app.request('/v2/alerts_policies.json', { method: 'POST', headers: JSON_DEMO, body: '{"policy":{"name":"Counted"}}' });
    expect(created.status).toBe(201);
    const { policy } = (await created.json()) as { policy: { id: number } };
    expect((await sandbox.app.request(`/v2/alerts_policies/${policy.id}.json`, { method: 'DELETE', headers: DEMO })).status).toBe(200);

    expect(sandbox.writes()).toEqual({
      legacy: {
        'DELETE /v2/alerts_policies/{policy_id}.{format}': 1,
        'POST /v2/alerts_policies.{format}': 1,
        'POST /v2/applications/{id}/deployments.{format}': 2,
        'PUT /v2/applications/{id}.{format}': 1,
      },
      nerdgraph: {},
      total: 5,
    });
  });

  it('counts executed NerdGraph mutations by field; payload errors and GraphQL errors are not counted', async () => {
    const sandbox = fresh();
    const reporting = primaryApps(sandbox).find((app) => app.reporting) as SandboxApp;
    // Payload error (INVALID_INPUT): nothing applied.
    const refused = await graphql(sandbox, SETTINGS, { guid: reporting.guid, settings: { alias: ' ' } });
    expect(JSON.stringify(refused.data)).toContain('INVALID_INPUT');
    // GraphQL error: a reporting app cannot be deleted.
    expect((await graphql(sandbox, DELETE, { guid: reporting.guid })).errors).toBeDefined();
    expect(sandbox.writes().total).toBe(0);

    expect((await graphql(sandbox, SETTINGS, { guid: reporting.guid, settings: { alias: 'Renamed by NerdGraph' } })).errors).toBeUndefined();
    expect((await graphql(sandbox, CREATE_MOBILE, { accountId: PRIMARY_ACCOUNT, name: 'Counted mobile' })).errors).toBeUndefined();
    expect((await graphql(sandbox, CREATE_MOBILE, { accountId: PRIMARY_ACCOUNT, name: 'Counted mobile 2' })).errors).toBeUndefined();
    expect(sandbox.writes()).toEqual({ legacy: {}, nerdgraph: { agentApplicationCreateMobile: 2, agentApplicationSettingsUpdate: 1 }, total: 3 });
  });

  it('hands out snapshots: later writes do not change an earlier answer', async () => {
    const sandbox = fresh();
    const before = sandbox.writes();
    await graphql(sandbox, CREATE_MOBILE, { accountId: PRIMARY_ACCOUNT, name: 'Later' });
    expect(before.total).toBe(0);
    expect(sandbox.writes().total).toBe(1);
  });
});

describe('write counts through the gateway (loopback)', () => {
  let sandbox: Sandbox;
  let running: RunningSandbox;
  let gateway: TestGateway;

  beforeAll(async () => {
    sandbox = fresh();
    running = await sandbox.listen(0, '127.0.0.1');
    gateway = await createTestGateway({ nerdgraphUrl: `${running.url}/graphql` });
  });

  afterAll(async () => {
    await running.close();
  });

  it('a v2 write through the gateway is one NerdGraph write and no legacy write', async () => {
    const app = primaryApps(sandbox).find((candidate) => candidate.reporting) as SandboxApp;
    const response = await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, {
      method: 'POST',
      headers: JSON_DEMO,
      body: JSON.stringify({ deployment: { revision: 'via-gateway', user: 'ci' } }),
    });
    expect(response.status).toBe(201);
    expect(sandbox.writes()).toEqual({ legacy: {}, nerdgraph: { changeTrackingCreateEvent: 1 }, total: 1 });
    // A refused one (no revision) writes nothing on either face.
    const refused = await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, { method: 'POST', headers: JSON_DEMO, body: '{"deployment":{}}' });
    expect(refused.status).toBe(400);
    expect(sandbox.writes().total).toBe(1);
  });
});
