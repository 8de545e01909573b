import { afterAll, beforeAll } from 'vitest';
import type { Explanation, ExplainedCall } from '../../src/bridge/explanation.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import type { TestRoutes } from './fixture-routes.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from './harness.ts';

/** A key that is not New Relic-shaped, so only the explain route's own masking can hide it. */
export const SENTINEL_KEY = 'sentinel-KEY-7f3a9c2e';

/** What an explain test reads once its sandbox listens (fields are set in beforeAll). */
export interface ExplainSandbox {
  sandbox: ReturnType<typeof createSandbox>;
  graphqlUrl: string;
  gateway: TestGateway;
  /** A reporting application of the primary account. */
  live: SandboxApp;
}

/**
 * The explain tests' sandbox (seed 7, 40 apps, fixed clock; DEMO_KEY and SENTINEL_KEY see the
 * primary account) and a gateway on it serving `routes`, started in beforeAll and stopped in
 * afterAll of the calling file.
 */
export function explainSandbox(routes: TestRoutes): ExplainSandbox {
  const sandbox = createSandbox({
    seed: 7,
    apmApps: 40,
    now: () => FIXED_NOW,
    apiKeys: new Map([
      [DEMO_KEY, [PRIMARY_ACCOUNT]],
      [SENTINEL_KEY, [PRIMARY_ACCOUNT]],
    ]),
  });
  // Filled in by beforeAll, before any test reads them.
  const state = { sandbox } as ExplainSandbox;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const upstream = await sandbox.listen(0, '127.0.0.1');
    close = upstream.close;
    state.graphqlUrl = `${upstream.url}/graphql`;
    state.gateway = await createTestGateway({ routes, nerdgraphUrl: state.graphqlUrl });
    const found = sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT && a.reporting);
    if (!found) throw new Error('the sandbox has no reporting app in the primary account');
    state.live = found;
  });
  afterAll(async () => {
    await close?.();
  });
  return state;
}

/** The call of `operation` in an explanation; throws naming the calls there were. */
export function callOf(explanation: Explanation, operation: string): ExplainedCall {
  const call = explanation.calls.find((c) => c.operation === operation);
  if (!call) throw new Error(`no ${operation} call in ${explanation.calls.map((c) => c.operation).join(', ')}`);
  return call;
}

/** The GUID of a primary-account APM application. */
export const appGuid = (id: number): string => entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', id);
