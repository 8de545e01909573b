import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserGuidOf } from './application.ts';
import { apmEntity, json, startFakeUpstream, forwardTo } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * A malformed browser entity beside an application (ApplicationByGuid's `browser`) is a malformed
 * upstream answer like any other: 502, not the generic 500 of an unhandled ZodError.
 */
const APP_ID = 424_242;
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;
let browser: Record<string, unknown> | null = null;

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 5 });
  upstream = await startFakeUpstream(async (request, res) => {
    if (request.operationName === 'ApplicationByGuid') {
      return json(res, 200, { data: { actor: { entity: apmEntity(PRIMARY_ACCOUNT, APP_ID), browser } } });
    }
    await forwardTo(sandbox.graphqlUrl, request, res);
  });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
});
afterAll(async () => {
  await upstream.close();
  await sandbox.close();
});

const show = () => gateway.app.request(`/v2/applications/${APP_ID}.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
const browserEntity = (overrides: Record<string, unknown>) => ({
  guid: browserGuidOf(PRIMARY_ACCOUNT, APP_ID),
  accountId: PRIMARY_ACCOUNT,
  applicationId: APP_ID,
  servingApmApplicationId: APP_ID,
  settings: { apdexTarget: 2 },
  ...overrides,
});

describe('GET /v2/applications/{id} with a browser side', () => {
  it('shows a well-formed browser side (the scripted answer is accepted)', async () => {
    browser = browserEntity({});
    const response = await show();
    expect(response.status).toBe(200);
    expect(((await response.json()) as { application: { settings: { end_user_apdex_threshold: number } } }).application.settings.end_user_apdex_threshold).toBe(2);
  });

  it('answers 502 for a malformed browser entity, not an unhandled 500', async () => {
    browser = browserEntity({ settings: { apdexTarget: 'high' } });
    const response = await show();
    expect(response.status).toBe(502);
  });
});
