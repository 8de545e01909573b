import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, type BuiltGateway } from '../src/gateway.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { createSandbox, type RunningSandbox } from '../sandbox/server.ts';

/**
 * Issue 20, point 8: NerdGraph limits concurrency per user, whatever key the user sends
 * ("NerdGraph usage limits"), and the sandbox answers 429 beyond 25 in flight per user. The
 * gateway learns each key's user with its accounts and keys its budgets by the user: two keys
 * of one user share 25 slots (and every other budget), so the sandbox never refuses them.
 */
const ONE = 'NRAK-PER-USER-ONE';
const TWO = 'NRAK-PER-USER-TWO';
const ACCOUNT = 1000001;
const FROZEN = Date.UTC(2026, 10, 22, 12, 0, 30);

let sandbox: RunningSandbox;
let apps: { id: number; name: string }[] = [];

beforeAll(async () => {
  sandbox = await createSandbox({
    seed: 42,
    apmApps: 20,
    now: () => FROZEN,
    apiKeys: new Map([[ONE, [ACCOUNT]], [TWO, [ACCOUNT]]]),
    keyUsers: new Map([[ONE, 4242], [TWO, 4242]]),
    // Every NerdGraph answer takes a while, so the burst's calls are in flight together.
    nerdgraphLatencyMs: 40,
  }).listen(0, '127.0.0.1');
  const list = (await (await fetch(`${sandbox.url}/v2/applications.json`, { headers: { 'x-api-key': ONE } })).json()) as { applications: { id: number; name: string }[] };
  apps = list.applications;
  expect(apps.length).toBeGreaterThan(10);
});
afterAll(async () => {
  await sandbox.close();
});

async function gatewayWith(env: Record<string, string> = {}): Promise<BuiltGateway> {
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const config = loadConfig({
    NERDGRAPH_URL: `${sandbox.url}/graphql`,
    LEGACY_REST_URL: sandbox.url,
    MICRO_CACHE_MS: '0',
    // A 429 from the sandbox reaches the client instead of being retried away.
    UPSTREAM_RETRIES: '0',
    REQUEST_DEADLINE_MS: '20000',
    ...env,
  });
  return buildGateway(config, { logger: createLogger('silent', quiet), now: () => FROZEN });
}

const get = async (gateway: BuiltGateway, key: string, path: string): Promise<Response> => gateway.app.request(path, { headers: { 'x-api-key': key } });

describe('budgets per user', () => {
  it("keeps two keys of one user within the user's 25 concurrent NerdGraph requests: 30 at once each, no 429, right answers", async () => {
    const gateway = await gatewayWith();
    try {
      // Each key's accounts (and user) are looked up once, before the burst.
      for (const key of [ONE, TWO]) expect((await get(gateway, key, `/v2/applications/${apps[0]?.id}.json`)).status).toBe(200);
      const burst = [ONE, TWO].flatMap((key) =>
        Array.from({ length: 30 }, async (_, i) => {
          const app = apps[i % apps.length] as { id: number; name: string };
          const answer = await get(gateway, key, `/v2/applications/${app.id}.json`);
          return { status: answer.status, expected: app, body: (await answer.json()) as { application?: { id: number; name: string } } };
        }),
      );
      const answers = await Promise.all(burst);
      expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body])).toEqual([]);
      for (const answer of answers) expect(answer.body.application).toMatchObject({ id: answer.expected.id, name: answer.expected.name });
    } finally {
      await gateway.close();
    }
  });

  it("shares the NRQL budgets between a user's keys: an identical query sent with one key counts for the other", async () => {
    const gateway = await gatewayWith({ IDENTICAL_QUERY_PER_MINUTE: '2' });
    try {
      const deployments = `/v2/applications/${apps[1]?.id}/deployments.json`;
      expect((await get(gateway, ONE, deployments)).status).toBe(200);
      expect((await get(gateway, ONE, deployments)).status).toBe(200);
      const over = await get(gateway, TWO, deployments);
      expect(over.status).toBe(429);
      expect(((await over.json()) as { error: { title: string } }).error.title).toMatch(/already sent 2 times this minute/);
      // Another query still goes.
      expect((await get(gateway, TWO, `/v2/applications/${apps[2]?.id}/deployments.json`)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
