import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox } from '../../test/support/harness.ts';
import { serveOnLoopback } from '../../test/support/http.ts';
import { eventually, openRequest, seriesSum, startLatencyProxy } from '../../test/support/lifecycle.ts';

/**
 * PUT /v2/applications/{id} sends the settings update, then reads the application back for its
 * answer: a client that leaves once the update was sent stops neither the read nor the record
 * of the write, under 2 s of NerdGraph latency per call.
 */
describe('an application update whose client left after the mutation was sent', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let app: SandboxApp;
  let proxy: Awaited<ReturnType<typeof startLatencyProxy>>;

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 10 });
    app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT) as SandboxApp;
    proxy = await startLatencyProxy(sandbox.graphqlUrl, 2_000);
  });
  afterAll(async () => {
    await proxy.close();
    await sandbox.close();
  });

  it('reads back the renamed application, and records the write as done', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 2, timeoutMs: 60_000, deadlineMs: 10_000 });
    // The accounts read is a call too: made once, by a request of its own.
    expect((await gateway.app.request('/v2/applications/x.json', { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(404);
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const { req } = openRequest(`${served.url}/v2/applications/${app.id}.json`, { 'X-Api-Key': DEMO_KEY }, { method: 'PUT', body: { application: { name: 'renamed-after-leaving' } } });
      await eventually(() => app.name === 'renamed-after-leaving', 'the rename reached NerdGraph');
      req.destroy();
      await eventually(async () => (await seriesSum(gateway, 'v2bridge_http_requests_total', { method: 'PUT' })) === 1, 'the write was logged');
      expect(await seriesSum(gateway, 'v2bridge_http_requests_total', { method: 'PUT', status: '200' })).toBe(1);
      expect(await seriesSum(gateway, 'v2bridge_upstream_requests_total', { operation: 'ApplicationByGuid', outcome: 'ok' })).toBe(1);
    } finally {
      await served.close();
    }
  }, 20_000);
});
