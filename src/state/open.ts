import { createHmac, randomBytes } from 'node:crypto';
import { createIdentityHasher, type IdentityOf } from '../caller/identity.ts';
import { KeyUsers } from '../caller/key-users.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { DegradingState, LocalState, type StatusReporting } from './degrading-state.ts';
import { RedisState } from './redis-state.ts';
import { createStateKeyer, type SharedState, type StateKeyer } from './shared-state.ts';

/**
 * The state a gateway keeps beyond one request, and the two HMACs that name it: callers'
 * identities (what caches and budgets key by) and Redis keys. With REDIS_URL both derive from
 * STATE_SECRET, so every replica computes the same names; without it, from a secret of this
 * process that dies with it.
 */
export interface SharedStateSettings {
  redisUrl?: string | undefined;
  secret?: string | undefined;
  timeoutMs: number;
  probeMs: number;
}

export interface OpenedState {
  state: SharedState & StatusReporting;
  keyOf: StateKeyer;
  identityOf: IdentityOf;
  /** Which user owns which key (by identity): the accounts look-up writes it, the budgets key by it. */
  keyUsers: KeyUsers;
  /**
   * The key's fingerprint, as the /bridge/ page shows an integration (src/caller/seen-caller.ts):
   * an HMAC under its own secret, so it is neither the identity nor a Redis key name, and the
   * same on every replica sharing STATE_SECRET.
   */
  fingerprintOf: IdentityOf;
}

/** One secret per use, so an identity is never also a Redis key name. */
function derive(secret: string | Buffer, use: string): Buffer {
  return createHmac('sha256', secret).update(`v2-bridge ${use}`).digest();
}

export function openSharedState(settings: SharedStateSettings, metrics: GatewayMetrics, now?: () => number): OpenedState {
  const secret = settings.secret ?? randomBytes(32);
  const keyOf = createStateKeyer(derive(secret, 'state keys'));
  const identityOf = createIdentityHasher(derive(secret, 'caller identity'));
  const keyUsers = new KeyUsers();
  const fingerprintOf = createIdentityHasher(derive(secret, 'caller fingerprint'));
  if (settings.redisUrl === undefined) return { state: new LocalState(now), keyOf, identityOf, keyUsers, fingerprintOf };
  const redis = new RedisState({ url: settings.redisUrl, commandTimeoutMs: settings.timeoutMs });
  return { state: new DegradingState(redis, metrics, { probeMs: settings.probeMs, timeoutMs: settings.timeoutMs, ...(now ? { now } : {}) }), keyOf, identityOf, keyUsers, fingerprintOf };
}

/** What an app gets when nothing is given (tests, embedding): this process's memory. */
export function localState(): OpenedState {
  const secret = randomBytes(32);
  return {
    state: new LocalState(),
    keyOf: createStateKeyer(derive(secret, 'state keys')),
    identityOf: createIdentityHasher(derive(secret, 'caller identity')),
    keyUsers: new KeyUsers(),
    fingerprintOf: createIdentityHasher(derive(secret, 'caller fingerprint')),
  };
}
