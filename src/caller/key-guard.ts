import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { GatewayConfig } from '../ops/config.ts';
import type { SharedState, StateKeyer } from '../state/shared-state.ts';
import type { UpstreamErrorClass } from '../upstream/errors.ts';

/**
 * What a stream of bad keys may cost NerdGraph. Two bounded tables, both keyed by what never
 * holds a key (the caller's HMAC identity, the client's address):
 * - refused keys: NerdGraph said "bad key" or "forbidden" on the accounts lookup; the same
 *   key is answered the same way, without a call, for a short while;
 * - per address, the distinct unknown keys (neither known good nor refused) it made the
 *   gateway verify in the current minute; beyond the limit the address gets 429.
 *
 * With Redis (`shared`), refusals are also kept in shared state (`keyOf('refused', identity)`
 * = the error class, REFUSED_KEY_CACHE_TTL_MS), so a key NerdGraph refused through one replica
 * is refused by every replica without another call. The per-address verification window stays
 * in this process: it bounds what one client makes this replica verify, and a replica's share
 * of a load-balanced client is still bounded by it (N replicas: at most N times the limit).
 */
export type KeyGuardSettings = GatewayConfig['keyGuard'];

/** Refusals worth remembering: the key itself was turned away, not the request. */
export const REFUSING_CLASSES: ReadonlySet<UpstreamErrorClass> = new Set(['bad_key', 'forbidden']);

/**
 * What a replica writes under a refusal: `<class> <expiry, epoch ms>` (so the others keep it no
 * longer than it does), the class one of REFUSING_CLASSES; anything else is ignored.
 */
const SharedRefusal = z
  .string()
  .regex(/^(bad_key|forbidden) [1-9][0-9]{0,15}$/)
  .transform((text) => {
    const [errorClass, expiresAt] = text.split(' ');
    return { errorClass: errorClass as 'bad_key' | 'forbidden', expiresAt: Number(expiresAt) };
  });

/** Shared state for refusals; only a Redis-backed state is worth a second copy (see app.ts). */
export interface SharedRefusals {
  state: SharedState;
  keyOf: StateKeyer;
}

/** Most addresses tracked at once (oldest evicted); with the limit, bounds the table. */
const MAX_ADDRESSES = 10_000;
const WINDOW_MS = 60_000;
const ACCEPTED_TTL_MS = 3_600_000;
/** Identities only (32 characters each): a few MB at most. */
const MAX_ACCEPTED = 100_000;
/** Enough of an identity to tell keys apart in one address's window (a collision only lets one more in). */
const IDENTITY_PREFIX = 12;

interface Window {
  startedAt: number;
  identities: Set<string>;
}

export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

export class KeyGuard {
  private readonly refused: LRUCache<string, UpstreamErrorClass> | undefined;
  private readonly windows: LRUCache<string, Window> | undefined;
  /**
   * Keys NerdGraph accepted lately: verifying one again (its accounts entry expired) is no
   * probing, so it never counts against its address. An hour, bounded like the refusals.
   */
  private readonly accepted: LRUCache<string, true>;

  private readonly settings: KeyGuardSettings;
  private readonly now: () => number;
  private readonly shared?: SharedRefusals;

  constructor(
    settings: KeyGuardSettings,
    now: () => number = Date.now,
    shared?: SharedRefusals,
  ) {
    this.settings = settings;
    this.now = now;
    this.shared = shared;
    const clock = { perf: { now }, ttlResolution: 0 };
    this.refused = settings.refusedTtlMs > 0 ? new LRUCache({ max: settings.refusedMax, ttl: settings.refusedTtlMs, ...clock }) : undefined;
    this.windows = settings.verificationsPerAddressPerMinute > 0 ? new LRUCache({ max: MAX_ADDRESSES, ttl: WINDOW_MS, ...clock }) : undefined;
    // A key in use stays accepted past the hour (each check renews it): while its accounts are
    // cached (ACCOUNTS_CACHE_TTL_MS may be longer), nothing accepts it again.
    this.accepted = new LRUCache({ max: MAX_ACCEPTED, ttl: ACCEPTED_TTL_MS, updateAgeOnHas: true, ...clock });
  }

  accept(identity: string): void {
    this.accepted.set(identity, true);
  }

  /** Did NerdGraph accept this key lately (its accounts lookup, here or read from another replica)? */
  isAccepted(identity: string): boolean {
    return this.accepted.has(identity);
  }

  /** The class NerdGraph refused this key with, while that is remembered. */
  refusal(identity: string): UpstreamErrorClass | undefined {
    return this.refused?.get(identity);
  }

  /** Remembers a refusal here, and for the other replicas without waiting (refuseEverywhere waits). */
  refuse(identity: string, errorClass: UpstreamErrorClass): void {
    this.refused?.set(identity, errorClass);
    void this.refuseEverywhere(identity, errorClass);
  }

  /**
   * Remembers a refusal in shared state: resolved once the other replicas can see it, so an
   * answer sent after it is never contradicted by another replica. Never fails (shared state
   * trouble only costs the other replicas a call).
   */
  async refuseEverywhere(identity: string, errorClass: UpstreamErrorClass): Promise<void> {
    this.refused?.set(identity, errorClass);
    if (this.shared === undefined || this.refused === undefined) return;
    const ttlMs = this.settings.refusedTtlMs;
    // Wall-clock expiry: another replica's injected test clock means nothing here.
    await this.shared.state.set(this.shared.keyOf('refused', identity), `${errorClass} ${Date.now() + ttlMs}`, ttlMs).catch(() => undefined);
  }

  /**
   * NerdGraph just accepted this key: a refusal recorded meanwhile (here or by another replica,
   * say a transient "forbidden") no longer holds. Resolved once it is gone from shared state too,
   * so no replica refuses a key whose accounts are stored after this. Never fails.
   */
  async forgetRefusal(identity: string): Promise<void> {
    this.refused?.delete(identity);
    if (this.shared === undefined || this.refused === undefined) return;
    await this.shared.state.delete(this.shared.keyOf('refused', identity)).catch(() => undefined);
  }

  /**
   * The refusal another replica (or this one) recorded in shared state: one read, made only
   * when a key is about to be verified with NerdGraph, never per request. Remembered here too.
   */
  async sharedRefusal(identity: string): Promise<UpstreamErrorClass | undefined> {
    if (this.shared === undefined || this.refused === undefined) return undefined;
    const stored = await this.shared.state.get(this.shared.keyOf('refused', identity)).catch(() => undefined);
    const parsed = SharedRefusal.safeParse(stored);
    const ttlMs = parsed.success ? parsed.data.expiresAt - Date.now() : 0;
    if (!parsed.success || ttlMs <= 0) return undefined;
    this.refused.set(identity, parsed.data.errorClass, { ttl: Math.min(ttlMs, this.settings.refusedTtlMs) });
    return parsed.data.errorClass;
  }

  /**
   * May this address make the gateway verify this (unknown) key now? The same key counts
   * once per window. No address (in-process `app.request()`): not limited.
   */
  admit(address: string | undefined, identity: string): Admission {
    if (this.windows === undefined || address === undefined || this.accepted.has(identity)) return { admitted: true };
    const bucket = addressBucket(address);
    const now = this.now();
    let window = this.windows.get(bucket);
    if (window === undefined || now - window.startedAt >= WINDOW_MS) {
      window = { startedAt: now, identities: new Set() };
      this.windows.set(bucket, window);
    }
    const id = identity.slice(0, IDENTITY_PREFIX);
    if (window.identities.has(id)) return { admitted: true };
    if (window.identities.size >= this.settings.verificationsPerAddressPerMinute) {
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000)) };
    }
    window.identities.add(id);
    return { admitted: true };
  }
}

/**
 * The unit one client controls: an IPv4 address, or an IPv6 /64 (one host usually holds a
 * whole /64, so counting single IPv6 addresses would not limit anyone).
 */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
