import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../../sandbox/model.ts';
import { deploymentsOf } from '../../../sandbox/writes.ts';
import { NO_REVISION_VERSION } from '../../../mappings/deployments/deployment.ts';
import { startFaultProxy, type Fault, type FaultProxy } from '../../support/fault-proxy.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../support/harness.ts';

/**
 * Fault tests for the one write that matters most in CI/CD: recording a deployment. A proxy
 * between the gateway and the sandbox's NerdGraph breaks the DeploymentCreate exchange in each
 * way a network can (before or after the sandbox applied it), and the sandbox's own record
 * count says what really happened: never a duplicate, never a 2xx without a record.
 */
let fault: Fault = 'none';
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
/** The sandbox's ingest clock (behaviour ingestLagMs), stepped by hand. */
let ingestAt = 0;
let gateway: TestGateway;
let app: SandboxApp;
let proxy: FaultProxy;
let clock = Date.UTC(2026, 10, 22, 12, 0, 30);

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20, ingestClock: () => ingestAt });
  app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT) as SandboxApp;
  proxy = await startFaultProxy(sandbox.graphqlUrl, ({ operation }) => (operation === 'DeploymentCreate' ? fault : 'none'));
  // Retries on: mutations must still go out once.
  gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 3, timeoutMs: 500, now: () => clock });
  // Warm (the key's accounts, the first connections), so the first write is not a cold call
  // racing the 500 ms bound on a loaded machine.
  await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

async function recordDeployment(revision: string): Promise<{ status: number; title?: string }> {
  clock += 60_000; // each deployment later than the last
  const response = await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, {
    method: 'POST',
    headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ deployment: { revision } }),
  });
  const body = (await response.json()) as { error?: { title: string } };
  return { status: response.status, ...(body.error ? { title: body.error.title } : {}) };
}

const records = (revision: string): number => deploymentsOf(sandbox.sandbox.data, app).filter((d) => d.revision === revision).length;

describe('a deployment create under faults', () => {
  it('without a fault: 201 and exactly one record', async () => {
    fault = 'none';
    expect((await recordDeployment('clean')).status).toBe(201);
    expect(records('clean')).toBe(1);
  });

  const UNKNOWN = 'The deployment may have been recorded, but New Relic did not confirm it: list the deployments before retrying';
  // Before the sandbox applied it or after, the gateway cannot tell: both say "unknown".
  it.each([
    ['refuse-500', 0, 502],
    ['reset-before', 0, 502],
    ['applied-then-500', 1, 502],
    ['applied-then-reset', 1, 502],
    ['applied-then-silence', 1, 504],
  ] as const)('%s: never a 2xx, never a duplicate, and %i record', async (which, expected, status) => {
    fault = which;
    const revision = `fault-${which}`;
    const sentBefore = await gateway.upstreamCount('DeploymentCreate');
    const answer = await recordDeployment(revision);
    // One mutation sent, whatever the fault, with retries switched on (from /metrics' counter).
    expect((await gateway.upstreamCount('DeploymentCreate')) - sentBefore).toBe(1);
    expect(answer).toEqual({ status, title: UNKNOWN });
    // Let a silenced exchange finish on the sandbox's side before counting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(records(revision)).toBe(expected);
  });

  // v0's documented form sends no revision: the deployments are told apart by nothing the
  // gateway could de-duplicate on, so each request is one mutation, whatever befalls it.
  it.each([
    ['none', 1, 201],
    ['refuse-500', 0, 502],
    ['applied-then-500', 1, 502],
    ['applied-then-reset', 1, 502],
  ] as const)('v0 without a revision, fault %s: one mutation, %i record', async (which, expected, status) => {
    fault = which;
    const description = `v0-${which}`;
    const sentBefore = await gateway.upstreamCount('DeploymentCreate');
    clock += 60_000;
    const response = await gateway.app.request('/deployments.xml', {
      method: 'POST',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body: `deployment[application_id]=${app.id}&deployment[description]=${description}`,
    });
    expect(response.status).toBe(status);
    expect((await gateway.upstreamCount('DeploymentCreate')) - sentBefore).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(deploymentsOf(sandbox.sandbox.data, app).filter((d) => d.description === description && d.revision === NO_REVISION_VERSION)).toHaveLength(expected);
  });

  it('v0 without a revision, twice in the same second: two deployments', async () => {
    fault = 'none';
    clock += 60_000;
    for (let i = 0; i < 2; i += 1) {
      const response = await gateway.app.request('/deployments.xml', {
        method: 'POST',
        headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/x-www-form-urlencoded' },
        body: `deployment[application_id]=${app.id}&deployment[description]=v0-twice`,
      });
      expect(response.status).toBe(201);
    }
    expect(deploymentsOf(sandbox.sandbox.data, app).filter((d) => d.description === 'v0-twice')).toHaveLength(2);
  });

  it('refuses a changelog change tracking would cut (a documented gap: v2 took 65,535 characters)', async () => {
    fault = 'none';
    clock += 60_000;
    const response = await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, {
      method: 'POST',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'long', changelog: 'c'.repeat(5000) } }),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { error: { title: string } }).error.title).toMatch(/^New Relic refused the change: .*4096/);
    expect(records('long')).toBe(0);
  });

  it('after the faults, once NerdGraph has indexed them, the deployments listing shows each applied record once', async () => {
    fault = 'none';
    // A write whose answer was lost is not remembered by the gateway (it cannot know it
    // applied): it shows once NerdGraph has ingested it; the clean one, remembered, not twice.
    ingestAt += 60_000;
    const response = await gateway.app.request(`/v2/applications/${app.id}/deployments.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
    const revisions = ((await response.json()) as { deployments: Array<{ revision: string }> }).deployments.map((d) => d.revision);
    for (const [revision, count] of [['clean', 1], ['fault-refuse-500', 0], ['fault-applied-then-500', 1], ['fault-applied-then-reset', 1], ['fault-applied-then-silence', 1]] as const) {
      expect(revisions.filter((r) => r === revision), revision).toHaveLength(count);
    }
  });
});
