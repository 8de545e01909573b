import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { DEMO_KEY } from '../support/harness.ts';

/**
 * The gateway's own requests (a comparison's translated side, a dry run, an explained request)
 * are served and never seen as callers' requests: the request metrics (and the access log
 * beside them) and the usage counts hold the callers' requests alone. Checked on the
 * production wiring (buildGateway on the embedded sandbox) with every mode in play: explain of a
 * read and of a write, a compared read, a compared write (its dry run), a candidate read, a
 * passthrough read, a translation. (That no request builds an app, which once took the
 * gateway down, is test/modes/explain-memory.test.ts's heap bound.)
 */
let gateway: BuiltGateway;

beforeAll(async () => {
  const config = loadConfig({
    SANDBOX_APM_APPS: '10',
    ROUTE_MODES: 'GET /v2/applications=compare;GET /v2/applications/{id}=candidate;POST /v2/applications/{id}/deployments=compare;*=translate',
    // Shadow work always runs here: this test is about what it builds, not when it is shed.
    COMPARE_MAX_LOOP_UTILISATION: '1',
    LOG_LEVEL: 'silent',
    // The parity page's usage counts, to read back.
    BRIDGE_TOKEN: 'shadow-unseen-bridge-token',
  });
  gateway = await buildGateway(config, { logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await gateway.close();
});

const headers = { 'X-Api-Key': DEMO_KEY };

async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await gateway.app.request(path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
  await response.arrayBuffer();
  return response;
}

/** Resolves once the store holds `count` finished comparisons (the test's timeout bounds it). */
async function comparisons(count: number): Promise<void> {
  for (;;) {
    const { outcomes } = gateway.store.report().totals;
    if (outcomes.match + outcomes.mismatch + outcomes.noise + outcomes.error + outcomes.dry_run >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Requests the gateway's metrics counted, by route label. */
async function countedRequests(): Promise<Record<string, number>> {
  const counted: Record<string, number> = {};
  for (const value of (await gateway.metrics.httpRequests.get()).values) {
    const route = String(value.labels.route);
    counted[route] = (counted[route] ?? 0) + value.value;
  }
  return counted;
}

describe('the gateway\'s own requests are not callers\' requests', () => {
  it('explain, dry runs and comparisons are served, and only the callers\' six requests are counted', async () => {
    const list = await gateway.app.request('/v2/applications.json', { headers });
    expect(list.status).toBe(200);
    const { applications } = (await list.json()) as { applications: Array<{ id: number }> };
    const id = applications[0]?.id;
    expect(id).toBeDefined();

    expect((await send(`/v2/applications/${id}.json`)).status).toBe(200);
    const deployment = await send(`/v2/applications/${id}/deployments.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'no-app-per-request' } }),
    });
    expect(deployment.status).toBe(201);
    expect((await send('/v2/alerts_policies.json')).status).toBe(200);
    const explainRead = await send(`/bridge/explain?request=${encodeURIComponent('/v2/applications.json?filter[name]=a')}`);
    expect(explainRead.status).toBe(200);
    const write = new URLSearchParams({ request: `/v2/applications/${id}/deployments.json`, method: 'POST', body: '{"deployment":{"revision":"v9"}}' });
    expect((await send(`/bridge/explain?${write.toString()}`)).status).toBe(200);

    // The compared list, the candidate show and the compared write's dry run have all run.
    await comparisons(3);
    const recent = gateway.store.report({ recent: 10 }).recent;
    const dryRun = recent.find((record) => record.outcome === 'dry_run');
    expect(dryRun?.dryRun?.calls.map((call) => call.operation)).toEqual(['DeploymentCreate']);
    // Six requests sent; the three shadow requests and the two explained ones are in no count.
    expect(await countedRequests()).toEqual({
      '/v2/applications.{format}': 1,
      '/v2/applications/{id}.{format}': 1,
      '/v2/applications/{id}/deployments.{format}': 1,
      '/v2/alerts_policies.{format}': 1,
      '/bridge/explain': 2,
    });
    const used = gateway.store.report().routes.filter((route) => route.requests > 0);
    expect(used.map((route) => [route.route, route.method, route.requests]).sort()).toEqual([
      ['/v2/alerts_policies.{format}', 'GET', 1],
      ['/v2/applications.{format}', 'GET', 1],
      ['/v2/applications/{id}.{format}', 'GET', 1],
      ['/v2/applications/{id}/deployments.{format}', 'POST', 1],
    ]);
  });
});
