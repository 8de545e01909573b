import { CoalescingCache } from '../cache/coalescing-cache.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { Caller } from './identity.ts';

/**
 * The gateway's one per-caller cache: what mappings keep between requests for one caller on one
 * account, whatever the route (an app's walked instance list, a walk cut short, a host directory,
 * a host index, an end-user apdex score, a list walk's read for its later pages). Mappings see it
 * as CallerScope.cache (src/routes/types.ts), bound to their request's caller and account.
 *
 * - Keyed by the caller's identity (an HMAC of the key, src/caller/identity.ts), the account and
 *   the mapping's key: never by the API key, so no key can show in a cache key. An entry is only
 *   ever read by the caller and account that kept it: two keys of one user, or two accounts of
 *   one key, share nothing.
 * - Each entry gives its own TTL, run on the gateway's injected clock; a TTL of 0 or less keeps
 *   nothing.
 * - Bounded twice: at most MAX_CALLER_CACHE_ENTRIES entries, and their sizes (each entry's
 *   `size`, default 1: an instance list counts its instances) at most MAX_CALLER_CACHE_SIZE in
 *   all. Past either, the least recently used entries go first; an entry larger than the whole
 *   size bound is answered but not kept.
 * - Single-flight: concurrent misses of one key share one load, which runs under its own signal
 *   and stops only when every request waiting for it has left; a failed load is not kept.
 * - Cold in a recorded run (explain, a dry run): it neither answers it nor learns from it.
 */
export const MAX_CALLER_CACHE_ENTRIES = 10_000;
/** ~30 MB of instance lists at ~150 bytes an instance (rather than 10,000 lists of 10,000: ~15 GB). */
export const MAX_CALLER_CACHE_SIZE = 200_000;

/** What is kept under a key: the value, how long (ms, on the injected clock), and its weight against the size bound (default 1). */
export interface CallerCacheEntry<V> {
  value: V;
  ttlMs: number;
  size?: number;
}

/** Whose entry it is: the caller (by identity only) and the account the request is pinned to. */
export interface CacheOwner {
  caller: Pick<Caller, 'identity'>;
  accountId: number;
}

export class CallerCache {
  // Values of several types share one cache: each key belongs to exactly one call site, which
  // alone reads it back, so the casts below are safe.
  private readonly entries: CoalescingCache<object>;

  constructor(metrics: GatewayMetrics, now: () => number, bounds: { maxEntries: number; maxSize: number } = { maxEntries: MAX_CALLER_CACHE_ENTRIES, maxSize: MAX_CALLER_CACHE_SIZE }) {
    // The default TTL is never used: every entry gives its own.
    this.entries = new CoalescingCache<object>('caller', metrics, { max: bounds.maxEntries, maxSize: bounds.maxSize, ttlMs: 60_000, now });
  }

  /** The value under `key`, loaded by `load` on a miss; `signal` is the asking request's (it stops waiting when it fires). */
  load<V extends object>(owner: CacheOwner, key: string, load: (signal: AbortSignal) => Promise<CallerCacheEntry<V>>, signal: AbortSignal): Promise<V> {
    return this.entries.get(entryKey(owner, key), load, signal) as Promise<V>;
  }

  /** The value kept under `key`, if any. */
  get<V extends object>(owner: CacheOwner, key: string): V | undefined {
    return this.entries.peek(entryKey(owner, key)) as V | undefined;
  }

  set(owner: CacheOwner, key: string, entry: CallerCacheEntry<object>): void {
    this.entries.put(entryKey(owner, key), entry);
  }

  forget(owner: CacheOwner, key: string): void {
    this.entries.forget(entryKey(owner, key));
  }
}

/** JSON, so no identity, account or key can run into the next one. */
function entryKey(owner: CacheOwner, key: string): string {
  return JSON.stringify([owner.caller.identity, owner.accountId, key]);
}
