import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountResolver } from '../../src/caller/accounts.ts';
import { KeyGuard } from '../../src/caller/key-guard.ts';
import { KeyUsers } from '../../src/caller/key-users.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { KEY_GUARD_DEFAULTS, loadConfig } from '../../src/ops/config.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { localState } from '../../src/state/open.ts';
import type { NerdGraph } from '../../src/upstream/client.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/server.ts';

/**
 * NerdGraph limits concurrency per user, whatever key the user sends
 * ("NerdGraph usage limits"), and the sandbox answers 429 beyond 25 in flight per user. The
 * gateway learns each key's user with its accounts and keys its budgets by the user: two keys
 * of one user share 25 slots (and every other budget), so the sandbox never refuses them.
 */
const ONE = 'NRAK-PER-USER-ONE';
const TWO = 'NRAK-PER-USER-TWO';
const ACCOUNT = 1000001;
const FROZEN = Date.UTC(2026, 10, 22, 12, 0, 30);

let sandbox: RunningSandbox;
let gateway: BuiltGateway;
let apps: { id: number; name: string }[] = [];

/**
 * Once armed, the sandbox holds its NerdGraph answers, and lets them all go only once every call
 * of the burst is accounted for: 25 held at the sandbox (in flight: a 26th is the sandbox's 429),
 * the rest either queued in the gateway's concurrency budget (its `nerdgraphQueued` gauge) or
 * already answered (a 429 reaches the client at once: UPSTREAM_RETRIES 0). No timer: a gateway
 * whose budget lets more than 25 of the user's calls go has sent them (and had them refused)
 * before the release, however slow the machine, and one that queues them is released only once
 * they wait in its queue.
 */
const gate = {
  armed: false,
  held: 0,
  /** Calls of the burst (each request makes one NerdGraph call at a time). */
  expected: 0,
  /** Requests of the burst answered so far. */
  answered: 0,
  open: (): void => undefined,
  opened: Promise.resolve(),
  arm(expected: number): void {
    this.armed = true;
    this.held = 0;
    this.answered = 0;
    this.expected = expected;
    this.opened = new Promise((resolve) => (this.open = resolve));
  },
  async hold(): Promise<void> {
    if (!this.armed) return;
    this.held++;
    return this.opened;
  },
  /** Polls until the held, queued and answered calls make the whole burst, then releases them. */
  async releaseWhenAccountedFor(queued: () => Promise<number>): Promise<{ held: number; queued: number; answered: number }> {
    for (;;) {
      const waiting = await queued();
      if (this.held >= 25 && this.held + waiting + this.answered >= this.expected) {
        const seen = { held: this.held, queued: waiting, answered: this.answered };
        this.armed = false;
        this.open();
        return seen;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  },
};

beforeAll(async () => {
  sandbox = await createSandbox({
    seed: 42,
    apmApps: 20,
    now: () => FROZEN,
    apiKeys: new Map([[ONE, [ACCOUNT]], [TWO, [ACCOUNT]]]),
    keyUsers: new Map([[ONE, 4242], [TWO, 4242]]),
    nerdgraphHold: async () => gate.hold(),
  }).listen(0, '127.0.0.1');
  const list = (await (await fetch(`${sandbox.url}/v2/applications.json`, { headers: { 'x-api-key': ONE } })).json()) as { applications: { id: number; name: string }[] };
  apps = list.applications;
  expect(apps.length).toBeGreaterThan(10);
  gateway = await gatewayWith({ IDENTICAL_QUERY_PER_MINUTE: '2' });
});
afterAll(async () => {
  await gateway.close();
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

const get = async (key: string, path: string): Promise<Response> => gateway.app.request(path, { headers: { 'x-api-key': key } });

describe('budgets per user', () => {
  it("keeps two keys of one user within the user's 25 concurrent NerdGraph requests: 30 at once each, no 429, right answers", async () => {
    // Each key's accounts (and user) are looked up once, before the burst.
    for (const key of [ONE, TWO]) expect((await get(key, `/v2/applications/${apps[0]?.id}.json`)).status).toBe(200);
    gate.arm(60);
    const burst = [ONE, TWO].flatMap((key) =>
      Array.from({ length: 30 }, async (_, i) => {
        const app = apps[i % apps.length] as { id: number; name: string };
        const answer = await get(key, `/v2/applications/${app.id}.json`);
        gate.answered++;
        return { status: answer.status, expected: app, body: (await answer.json()) as { application?: { id: number; name: string } } };
      }),
    );
    const queued = async (): Promise<number> => (await gateway.metrics.nerdgraphQueued.get()).values[0]?.value ?? 0;
    // With the user's budget: exactly 25 held, the other 35 queued, none answered before the release.
    expect(await gate.releaseWhenAccountedFor(queued)).toEqual({ held: 25, queued: 35, answered: 0 });
    const answers = await Promise.all(burst);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body])).toEqual([]);
    for (const answer of answers) expect(answer.body.application).toMatchObject({ id: answer.expected.id, name: answer.expected.name });
  }, 30_000);

  it("shares the NRQL budgets between a user's keys: an identical query sent with one key counts for the other", async () => {
    const deployments = `/v2/applications/${apps[1]?.id}/deployments.json`;
    expect((await get(ONE, deployments)).status).toBe(200);
    expect((await get(ONE, deployments)).status).toBe(200);
    const over = await get(TWO, deployments);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { title: string } }).error.title).toMatch(/already sent 2 times this minute/);
    // Another query still goes.
    expect((await get(TWO, `/v2/applications/${apps[2]?.id}/deployments.json`)).status).toBe(200);
  });

  it("learns a key's user with its accounts, once, and from another replica's stored accounts; an entry stored without a user is looked up again", async () => {
    const shared = localState();
    const identity = shared.identityOf(ONE);
    const caller = { apiKey: ONE, identity };
    const replica = (answer: unknown) => {
      const keyUsers = new KeyUsers();
      let calls = 0;
      const nerdgraph: NerdGraph = {
        async call<T>(): Promise<T> {
          calls++;
          return answer as T;
        },
      };
      const resolver = createAccountResolver({ nerdgraph, metrics: createMetrics(), defaultAccountId: undefined, ttlMs: 60_000, keyGuard: new KeyGuard(KEY_GUARD_DEFAULTS), shared: { state: shared.state, keyOf: shared.keyOf }, keyUsers });
      return { keyUsers, resolver, calls: () => calls };
    };
    const a = replica({ actor: { accounts: [{ id: ACCOUNT }], user: { id: 4242 } } });
    expect(a.keyUsers.callerOf(identity)).toBe(identity);
    for (let i = 0; i < 3; i++) expect(await a.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    expect(a.calls()).toBe(1);
    expect(a.keyUsers.callerOf(identity)).toBe('user:4242');
    // Another replica reads the stored accounts, user included: no look-up of its own.
    const b = replica({ actor: { accounts: [{ id: ACCOUNT }], user: { id: 9999 } } });
    expect(await b.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    expect(b.calls()).toBe(0);
    expect(b.keyUsers.callerOf(identity)).toBe('user:4242');
    // Stored by a replica that did not read users yet: looked up again, for the user.
    await shared.state.set(shared.keyOf('accounts', identity), JSON.stringify({ ids: [ACCOUNT], expiresAt: Date.now() + 60_000 }), 60_000);
    const c = replica({ actor: { accounts: [{ id: ACCOUNT }], user: { id: 4242 } } });
    expect(await c.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    expect(c.calls()).toBe(1);
    expect(c.keyUsers.callerOf(identity)).toBe('user:4242');
    // The key itself is in no stored value.
    expect(await shared.state.get(shared.keyOf('accounts', identity))).not.toContain(ONE);
  });
});
