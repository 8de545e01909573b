import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountResolver } from '../../src/caller/accounts.ts';
import { KeyGuard } from '../../src/caller/key-guard.ts';
import { KEY_GUARD_DEFAULTS } from '../../src/ops/config.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { openSharedState, type OpenedState } from '../../src/state/open.ts';
import type { NerdGraph } from '../../src/upstream/client.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';

/**
 * A key's accounts and refusals across replicas: a successful verification outranks a refusal
 * recorded while it ran (here or on another replica), so neither this replica nor any other
 * goes on refusing a key NerdGraph has just accepted.
 */
const hasRedis = redisAvailable();
const SECRET = 'accounts-test-secret-0123456789abcdef0123';
const KEY = 'NRAK-ACCOUNTSSHAREDTESTKEY01';
const ACCOUNT = 1000001;

async function opened(redis: TestRedis): Promise<OpenedState> {
  const state = openSharedState({ redisUrl: redis.url, secret: SECRET, timeoutMs: 2_000, probeMs: 50 }, createMetrics());
  for (let i = 0; i < 300 && state.state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(state.state.status().state).toBe('shared');
  return state;
}

describe.skipIf(!hasRedis)('accounts and refusals shared by replicas', () => {
  let redis: TestRedis;
  let states: OpenedState[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    states = await Promise.all([opened(redis), opened(redis)]);
  });
  afterAll(async () => {
    await Promise.all(states.map((opened) => opened.state.close()));
    await redis?.stop();
  });

  it('a key NerdGraph accepted is not refused afterwards for a refusal recorded while it was verified', async () => {
    const [a, c] = states as [OpenedState, OpenedState];
    const replica = (shared: OpenedState, onCall: () => void) => {
      const guard = new KeyGuard(KEY_GUARD_DEFAULTS, undefined, { state: shared.state, keyOf: shared.keyOf });
      let calls = 0;
      const nerdgraph: NerdGraph = {
        async call<T>(): Promise<T> {
          calls++;
          onCall();
          // NerdGraph's answer comes after the refusal was recorded.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { actor: { accounts: [{ id: ACCOUNT }] } } as T;
        },
      };
      const withShared = createAccountResolver({
        nerdgraph,
        metrics: createMetrics(),
        defaultAccountId: undefined,
        ttlMs: 60_000,
        keyGuard: guard,
        shared: { state: shared.state, keyOf: shared.keyOf },
      });
      return { guard, resolver: withShared, calls: () => calls };
    };
    const identity = a.identityOf(KEY);
    // While A verifies the key, a request of that key was refused (a transient "forbidden"),
    // recorded on A and in shared state.
    const onA = replica(a, () => onA.guard.refuse(identity, 'forbidden'));
    const onC = replica(c, () => undefined);
    const caller = { apiKey: KEY, identity };
    expect(await onA.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    // A itself, and C (which never saw the key), accept it: C from the accounts A stored.
    expect(await onA.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    expect(await onC.resolver.resolve(caller, undefined, AbortSignal.timeout(5_000))).toBe(ACCOUNT);
    expect(onC.calls()).toBe(0);
    expect(await redis.inspect().get(a.keyOf('refused', identity))).toBeNull();
  });
});
