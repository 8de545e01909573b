import { z } from 'zod';
import { CoalescingCache } from '../cache/coalescing-cache.ts';
import { V2Error } from '../v2/errors.ts';
import type { Caller } from './identity.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { NerdGraph } from '../upstream/client.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { UpstreamError, toV2Error } from '../upstream/errors.ts';
import { REFUSING_CLASSES, type KeyGuard } from './key-guard.ts';
import type { KeyUsers } from './key-users.ts';
import { ID_PATTERN } from '../v2/params.ts';
import type { SharedState, StateKeyer } from '../state/shared-state.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * REST v2 inferred the account from the key; NerdGraph does not. Each request is pinned to
 * exactly one account the key can read, in this order (peers.md §D2): the X-Account-Id header
 * (sent by newrelic-client-go), the configured default, the key's only account. Anything else
 * is refused: the gateway never guesses between accounts.
 */
const AccountsAnswer = z.object({
  actor: z.object({
    accounts: z.array(z.object({ id: z.number().int() }).nullable()).nullable(),
    // The key's user: NerdGraph's limits count per user, whatever key it sends.
    user: z.object({ id: z.number().int().positive().nullable() }).nullable().optional(),
  }),
});

interface AccessibleAccounts {
  ids: ReadonlySet<number>;
  /** The NerdGraph user who owns the key (`actor.user.id`), null when NerdGraph named none. */
  user: string | null;
}

/**
 * What a replica stored for a key: its account ids, its user, and when the entry expires (epoch
 * ms), so a replica that reads it keeps it no longer than the replica that looked it up. `user`
 * is required: an entry stored without it (before users were read) is looked up again.
 */
const StoredAccounts = z.object({
  ids: z.array(z.number().int().positive()).max(100_000),
  user: z.string().regex(/^\d{1,20}$/).nullable(),
  expiresAt: z.number().int().positive(),
});

function storedAccounts(text: string | undefined, now: number): { value: AccessibleAccounts; ttlMs: number } | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = StoredAccounts.safeParse(JSON.parse(text));
    if (!parsed.success || parsed.data.expiresAt <= now) return undefined;
    return { value: { ids: new Set(parsed.data.ids), user: parsed.data.user }, ttlMs: parsed.data.expiresAt - now };
  } catch {
    return undefined;
  }
}

export interface AccountResolver {
  /** `signal`: the request's (src/routes/request-signal.ts); the accounts read is shared by concurrent requests of one key. */
  resolve(caller: Caller, requestedHeader: string | undefined, signal: AbortSignal): Promise<number>;
}

export function createAccountResolver(deps: {
  nerdgraph: NerdGraph;
  metrics: GatewayMetrics;
  defaultAccountId: number | undefined;
  ttlMs: number;
  /** The app's one guard, shared with /bridge/explain: one budget per address, one refused-key memory. */
  keyGuard: KeyGuard;
  /**
   * With Redis: each key's accounts are also kept in shared state (`keyOf('accounts', identity)`,
   * `ttlMs`), so a key another replica verified costs this one no lookup. Absent: this process only.
   */
  shared?: { state: SharedState; keyOf: StateKeyer };
  /** Where the key's user is remembered for the budgets (src/caller/key-users.ts); absent: not remembered. */
  keyUsers?: KeyUsers;
}): AccountResolver {
  // Warm for recorded runs: explain verifies the key before its run, which need not look it up again.
  const cache = new CoalescingCache<AccessibleAccounts>('accounts', deps.metrics, { max: 10_000, ttlMs: deps.ttlMs, warmForRecordedRuns: true });
  const guard = deps.keyGuard;

  /** A key is verified by this lookup; concurrent lookups of one key share one call (the cache's). */
  async function accessible(caller: Caller, signal: AbortSignal): Promise<ReadonlySet<number>> {
    const refused = guard.refusal(caller.identity);
    if (refused !== undefined) {
      deps.metrics.refusedKeyHits.inc();
      throw toV2Error(new UpstreamError(refused, 'refused by NerdGraph moments ago (refused-key cache)'));
    }
    const entry = await cache.get(
      caller.identity,
      async (shared) => {
        // Another replica's word first: a refusal, or the accounts it read (one shared read each, only on a miss here).
        const refusedElsewhere = await guard.sharedRefusal(caller.identity);
        if (refusedElsewhere !== undefined) {
          deps.metrics.refusedKeyHits.inc();
          // A V2Error: answered as the local refusal is, and not recorded again (its TTL is not renewed).
          throw toV2Error(new UpstreamError(refusedElsewhere, 'refused by NerdGraph moments ago (refused-key cache)'));
        }
        const sharedKey = deps.shared?.keyOf('accounts', caller.identity);
        const known = sharedKey === undefined ? undefined : storedAccounts(await deps.shared?.state.get(sharedKey).catch(() => undefined), Date.now());
        if (known !== undefined) {
          guard.accept(caller.identity);
          return known;
        }
        // Only a key neither known good nor refused reaches here: the per-address limit applies.
        // (A caller joining this flight shares its outcome, a 429 included.)
        const admission = guard.admit(caller.address, caller.identity);
        if (!admission.admitted) {
          deps.metrics.keyVerificationsLimited.inc();
          throw new V2Error(429, 'Too many different API keys from this address; retry later', {
            headers: { 'retry-after': String(admission.retryAfterSeconds) },
            kind: 'key_verifications_limited',
          });
        }
        const data = await deps.nerdgraph.call({ operation: 'AccessibleAccounts', variables: {}, apiKey: caller.apiKey, signal: shared });
        const { accounts, user: owner } = parseAnswer(AccountsAnswer, data, 'AccessibleAccounts').actor;
        const ids = new Set((accounts ?? []).flatMap((a) => (a ? [a.id] : [])));
        const user = owner?.id === undefined || owner.id === null ? null : String(owner.id);
        guard.accept(caller.identity);
        // A refusal recorded while this lookup ran is contradicted by it: gone before the accounts are stored.
        await guard.forgetRefusal(caller.identity);
        // Stored before the answer: a request the client sends next, to any replica, finds it.
        if (sharedKey !== undefined) {
          const stored = JSON.stringify({ ids: [...ids], user, expiresAt: Date.now() + deps.ttlMs });
          await deps.shared?.state.set(sharedKey, stored, deps.ttlMs).catch(() => undefined);
        }
        return { value: { ids, user } };
      },
      signal,
    ).catch(async (error: unknown) => {
      // Every caller of the failed lookup records it (idempotent), before any later request runs
      // on any replica: the refusal is in shared state before this answer leaves.
      if (error instanceof UpstreamError && REFUSING_CLASSES.has(error.errorClass)) await guard.refuseEverywhere(caller.identity, error.errorClass);
      throw error;
    });
    // The budgets count the key's calls against its user from now on (each read keeps it fresh).
    if (entry.user !== null) deps.keyUsers?.remember(caller.identity, entry.user);
    return entry.ids;
  }

  return {
    async resolve(caller, requestedHeader, signal) {
      let requested: number | undefined;
      if (requestedHeader !== undefined && requestedHeader.trim() !== '') {
        const text = requestedHeader.trim();
        if (!ID_PATTERN.test(text)) {
          throw new V2Error(400, REQUEST_RULE_TITLES.accountHeader, { kind: 'bad_account' });
        }
        requested = Number(text);
      }
      const ids = await accessible(caller, signal);
      const pinned = requested ?? deps.defaultAccountId;
      if (pinned !== undefined) {
        if (!ids.has(pinned)) {
          throw new V2Error(403, `The API key cannot access account ${pinned}`, { kind: 'account_forbidden' });
        }
        return pinned;
      }
      if (ids.size === 1) return [...ids][0] as number;
      if (ids.size === 0) throw new V2Error(403, 'The API key cannot access any account', { kind: 'account_forbidden' });
      throw new V2Error(
        400,
        'The API key can access several accounts: send an X-Account-Id header or configure NEW_RELIC_ACCOUNT_ID',
        { kind: 'account_ambiguous' },
      );
    },
  };
}
