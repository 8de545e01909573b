import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentHosts } from '../../../sandbox/hosts.ts';
import type { SandboxApp, SandboxMobileApp } from '../../../sandbox/model.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../support/harness.ts';

/**
 * the gateway's NRQL literals against a sandbox that compares by type
 * (strictAttributeTypes, realAgentId stored as a string) and whose mobile rows carry entityGuid
 * (mobileGuidAttribute): a client asking for an instance's or a mobile app's metric data gets
 * its rows, whichever form New Relic turns out to use.
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let app: SandboxApp;
let instanceId: number;
let mobile: SandboxMobileApp;

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  const data = sandbox.sandbox.data;
  app = data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && currentHosts(candidate).some((host) => host.instances.length > 0)) as SandboxApp;
  instanceId = (currentHosts(app).find((host) => host.instances.length > 0)?.instances[0]?.id) as number;
  mobile = data.mobileApps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting) as SandboxMobileApp;
});
afterAll(async () => {
  await sandbox.close();
});

interface MetricData {
  metric_data: { metrics_found: string[]; metrics: Array<{ name: string; timeslices: Array<{ values: Record<string, number> }> }> };
}

async function metricData(path: string): Promise<MetricData> {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as MetricData;
}

function callCount(body: MetricData, name: string): number | undefined {
  return body.metric_data.metrics.find((metric) => metric.name === name)?.timeslices[0]?.values.call_count;
}

describe('instance metric data (point 5: realAgentId of undocumented type, compared by type)', () => {
  it('finds the instance’s rows with strict attribute types on (the sandbox default)', async () => {
    expect(sandbox.sandbox.data.behaviours.strictAttributeTypes).toBe(true);
    const body = await metricData(`/v2/applications/${app.id}/instances/${instanceId}/metrics/data.json?names[]=HttpDispatcher&summarize=true`);
    expect(body.metric_data.metrics_found).toEqual(['HttpDispatcher']);
    expect(callCount(body, 'HttpDispatcher')).toBeGreaterThan(0);
  });

  it('lists the instance’s metric names', async () => {
    const response = await gateway.app.request(`/v2/applications/${app.id}/instances/${instanceId}/metrics.json?name=HttpDispatcher`, {
      headers: { 'X-Api-Key': DEMO_KEY },
    });
    const body = (await response.json()) as { metrics: Array<{ name: string }> };
    expect(body.metrics.map((metric) => metric.name)).toContain('HttpDispatcher');
  });
});

describe('mobile metric data (point 6: the GUID attribute of mobile rows)', () => {
  it.each(['entityGuid', 'entity.guid', 'both'] as const)('finds the rows when they carry %s', async (spelling) => {
    const data = sandbox.sandbox.data;
    const behaviours = data.behaviours;
    data.behaviours = { ...behaviours, mobileGuidAttribute: spelling };
    try {
      const body = await metricData(`/v2/mobile_applications/${mobile.id}/metrics/data.json?names[]=Session%2FStart&summarize=true`);
      expect(body.metric_data.metrics_found).toEqual(['Session/Start']);
      expect(callCount(body, 'Session/Start')).toBeGreaterThan(0);
    } finally {
      data.behaviours = behaviours;
    }
  });
});
