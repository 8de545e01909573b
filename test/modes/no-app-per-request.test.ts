import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appsBuiltSoFar } from '../../src/app.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { DEMO_KEY } from '../support/harness.ts';

/**
 * An app is built once, at start-up. Building one per request cost about 7 MB each (explain
 * took the gateway down in a few dozen requests): every request path that once did so, and the
 * others, served by the app they arrived at. Checked on the production wiring (buildGateway on
 * the embedded sandbox) with every mode in play: explain of a read and of a write, a compared
 * read, a compared write (its dry run), a candidate read, a passthrough read, a translation.
 */
let gateway: BuiltGateway;

beforeAll(async () => {
  const config = loadConfig({
    SANDBOX_APM_APPS: '10',
    ROUTE_MODES: 'GET /v2/applications=compare;GET /v2/applications/{id}=candidate;POST /v2/applications/{id}/deployments=compare;*=translate',
    // Shadow work always runs here: this test is about what it builds, not when it is shed.
    COMPARE_MAX_LOOP_UTILISATION: '1',
    LOG_LEVEL: 'silent',
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

describe('no request builds an app', () => {
  it('explain, dry runs, comparisons, passthrough and translation all run through the one app', async () => {
    const built = appsBuiltSoFar();
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
    expect(appsBuiltSoFar()).toBe(built);
  });
});
