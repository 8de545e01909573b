import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { buildGateway } from '../src/gateway.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { createSandbox } from '../sandbox/server.ts';
import { defaultApiKeys } from '../sandbox/world/accounts.ts';
import { serveV2 } from '../src/v2/client-error.ts';

/**
 * The fair share of an account's NRQL budget, measured (`node load/fair-share.ts [late|oneshot]`): one
 * account, two API keys over HTTP, for 10 s. A heavy key sends one application's deployments
 * list (one NRQL query) after another on 8 loops; a light key sends one every 500 ms, from the
 * start or (`late`) only once the heavy key was first refused. NRQL_PER_ACCOUNT_PER_MINUTE is 300
 * so the heavy key spends it within the run. Prints each key's answers by status and the light
 * key's share of the 200s. `oneshot`: four more keys of the account send one request each
 * first, then the heavy key polls as above with no light key (what is held back for keys that
 * asked once: the heavy key's 200s are the budget less what the share rule keeps).
 */
const mode = process.argv[2];
const late = mode === 'late';
const oneshot = mode === 'oneshot';
const ONCE = ['NRAK-SANDBOX-ONCE-1', 'NRAK-SANDBOX-ONCE-2', 'NRAK-SANDBOX-ONCE-3', 'NRAK-SANDBOX-ONCE-4'];
const HEAVY = 'NRAK-SANDBOX-DEMO';
const LIGHT = 'NRAK-SANDBOX-MULTI';
const ACCOUNT = '1000001';
const DURATION_MS = 10_000;
const Applications = z.object({ applications: z.array(z.object({ id: z.number() })) });

const sandbox = await createSandbox({ seed: 42, apmApps: 20, apiKeys: new Map([...defaultApiKeys(), ...ONCE.map((key): [string, number[]] => [key, [Number(ACCOUNT)]])]) }).listen(0, '127.0.0.1');
const apps = Applications.parse(await (await fetch(`${sandbox.url}/v2/applications.json`, { headers: { 'x-api-key': HEAVY } })).json()).applications.map((app) => app.id);
const config = loadConfig({
  NERDGRAPH_URL: `${sandbox.url}/graphql`,
  LEGACY_REST_URL: sandbox.url,
  MICRO_CACHE_MS: '0',
  UPSTREAM_RETRIES: '0',
  NRQL_PER_ACCOUNT_PER_MINUTE: '300',
  IDENTICAL_QUERY_PER_MINUTE: '1000000',
});
const gateway = await buildGateway(config, { logger: createLogger('silent', new Writable({ write: (_chunk, _encoding, done) => done() })) });
const server = serveV2({ fetch: gateway.app.fetch, port: 0, hostname: '127.0.0.1' });
await new Promise<void>((resolve) => server.once('listening', () => resolve()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

type Who = 'heavy' | 'light' | 'once';
const tally: Record<Who, Map<number, number>> = { heavy: new Map(), light: new Map(), once: new Map() };
let sent = 0;
async function one(who: Who, onceKey = ''): Promise<void> {
  const id = apps[sent++ % apps.length] as number;
  const headers: Record<string, string> = who === 'heavy' ? { 'x-api-key': HEAVY } : who === 'once' ? { 'x-api-key': onceKey } : { 'x-api-key': LIGHT, 'x-account-id': ACCOUNT };
  const answer = await fetch(`${url}/v2/applications/${id}/deployments.json`, { headers });
  await answer.arrayBuffer();
  tally[who].set(answer.status, (tally[who].get(answer.status) ?? 0) + 1);
}
for (const key of oneshot ? ONCE : []) await one('once', key);
const started = performance.now();
const running = (): boolean => performance.now() - started < DURATION_MS;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const heavy = async (): Promise<void> => {
  while (running()) await one('heavy');
};
let lightStartedAfterMs = 0;
const light = async (): Promise<void> => {
  while (late && !tally.heavy.has(429) && running()) await pause(10);
  lightStartedAfterMs = Math.round(performance.now() - started);
  while (running()) {
    await one('light');
    await pause(500);
  }
};
await Promise.all([...Array.from({ length: 8 }, heavy), ...(oneshot ? [] : [light()])]);
const ok = (who: Who): number => tally[who].get(200) ?? 0;
const total = (who: Who): number => [...tally[who].values()].reduce((sum, n) => sum + n, 0);
process.stdout.write(
  `${JSON.stringify({
    mode: mode ?? 'light',
    ...(oneshot && { once: Object.fromEntries(tally.once) }),
    lightStartedAfterMs,
    light: Object.fromEntries(tally.light),
    heavy: Object.fromEntries(tally.heavy),
    lightAnswered200: `${ok('light')}/${total('light')}`,
    lightShareOf200: (ok('light') / Math.max(1, ok('light') + ok('heavy'))).toFixed(3),
  })}\n`,
);
server.closeAllConnections();
server.close();
await gateway.close();
await sandbox.close();
process.exit(0);
