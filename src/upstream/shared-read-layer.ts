import { randomUUID } from 'node:crypto';
import { pause } from './pause.ts';
import { KEY_PREFIX } from '../ops/redact.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { SharedState, StateKeyer, StatusReporting } from '../state/shared-state.ts';
import type { Sized } from './micro-cache.ts';
import { WriteGeneration } from './write-generation.ts';

/**
 * The micro-cache's second layer, across replicas (Redis only): what one replica read inside
 * the window answers the others, and identical reads in flight on several replicas at once go
 * to NerdGraph once. It sits behind ReadMicroCache, so each replica consults it once per key
 * and window at most (its own misses), never per request.
 *
 * - Generation (write-generation.ts): a token in shared state that every write replaces
 *   before it is answered, and announces on a channel every replica listens to (to empty its
 *   in-process cache at once). The announcement alone could arrive after the writer's client,
 *   answered, asks another replica: so every read first learns the current generation from a
 *   shared read sent after it began (freshGeneration; concurrent reads share one), and a
 *   change empties the in-process cache before it is consulted.
 * - Entries: `keyOf('micro', generation, document hash, identity, operation, variables)` = the
 *   JSON of the data, kept for the window. The generation is in the name, so an answer read
 *   before a write is never found after it, nor can a holder of an older generation overwrite
 *   a newer entry; the document's hash too, so replicas of two versions (a rolling deploy)
 *   never serve each other answers to a different query. Failed answers are never stored, nor partial ones (Sized.partial).
 * - A miss takes a short lock (`keyOf('micro-lock', ...same parts)`, set only if absent, for
 *   LOCK_TTL_MS) that its holder renews while its call runs, so a holder that dies frees it
 *   within LOCK_TTL_MS. The others poll lock and entry together (one round trip, backing off);
 *   when the lock is gone with no entry (the holder failed or died) they try to take it (one
 *   becomes the holder, the rest keep waiting: no burst), and each waits at most a share of its
 *   own time left, keeping the rest to send itself.
 * - Only while the shared state is 'shared': a replica whose shared state is degraded (or
 *   still connecting) knows no generation it can trust, so freshGeneration() answers undefined
 *   and the client then bypasses both caches (every read goes to NerdGraph).
 *
 * What remains: a write answered by a replica that cannot reach Redis (written() waits a
 * little for it to come back, then gives up) cannot tell the others. Until their entries
 * expire (MICRO_CACHE_MS after they were read) they may serve the state before that write.
 */
export interface SharedReadLayerOptions {
  /** Its status() tells whether an answer came from Redis (shared) or this replica's memory. */
  state: SharedState & StatusReporting;
  keyOf: StateKeyer;
  /** The window: how long an entry is served. */
  ttlMs: number;
  metrics: GatewayMetrics;
  /** How long a lock holds unless its holder renews it (default LOCK_TTL_MS). */
  lockTtlMs?: number;
  /** First pause between two looks at the holder's entry; doubled up to MAX_POLL_MS. */
  pollMs?: number;
}

/** What one shared read is about; `apiKey` is only checked against the answer, never stored. */
export interface SharedRead {
  identity: string;
  operation: string;
  /** Hash of the GraphQL document's text (documents change across versions of the gateway). */
  document: string;
  /** The variables as JSON: the same text on every replica for the same read. */
  variables: string;
  apiKey: string;
  /** The write generation the read was begun under (freshGeneration()). */
  generation: string;
  /** When the caller must have its answer (performance.now() time). */
  dueAt: number;
}

/** Answers larger than this are served but not shared (one Redis value each, every window). */
const MAX_SHARED_BYTES = 4 * 1024 * 1024;
/**
 * Reads whose answers may hold third-party secrets, kept out of Redis: channel credentials
 * (NotificationDirectory), a browser application's license key in its jsConfig.
 */
const NOT_SHARED = new Set(['NotificationDirectory', 'BrowserApplicationDetails']);
/** A lock outlives its holder by at most this; the holder renews it every third of it. */
const LOCK_TTL_MS = 1_500;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 50;
/** The share of its time left a waiter gives the holder; the rest is its own, to send itself. */
const WAIT_SHARE = 0.5;

export class SharedReadLayer {
  /** The write generation every entry is keyed by (write-generation.ts). */
  private readonly generation: WriteGeneration;

  private readonly options: SharedReadLayerOptions;

  constructor(options: SharedReadLayerOptions) {
    this.options = options;
    this.generation = new WriteGeneration(options);
  }

  /** Whether reads of `operation` may go through this layer at all. */
  shares(operation: string): boolean {
    return !NOT_SHARED.has(operation);
  }

  /**
   * Calls `listener` whenever a write went through any replica (this one included): on its
   * announcement, or when a read finds the generation changed, whichever comes first.
   */
  onWrite(listener: () => void): () => void {
    return this.generation.onWrite(listener);
  }

  /**
   * The current generation, from a shared read sent after this call (so a write answered
   * before it is seen). Undefined when it did not come from Redis: nothing cached may be
   * trusted then (WriteGeneration.freshGeneration).
   */
  freshGeneration(): Promise<string | undefined> {
    return this.generation.freshGeneration();
  }

  /** A write has settled: from now on no replica serves what was read before it (WriteGeneration.written). Never fails. */
  written(dueAt = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.generation.written(dueAt);
  }

  /**
   * The shared answer to `read`, or `send`'s (stored for the others when it succeeds). Call it
   * only with a generation freshGeneration() answered. `send` must throw at once when `signal`
   * has fired (the client's `send` does).
   */
  async read<T>(read: SharedRead, send: () => Promise<Sized<T>>, signal: AbortSignal): Promise<Sized<T>> {
    const { state, keyOf, metrics } = this.options;
    const parts = [read.generation, read.document, read.identity, read.operation, read.variables] as const;
    const entryKey = keyOf('micro', ...parts);
    const lockKey = keyOf('micro-lock', ...parts);
    let stored: string | undefined;
    try {
      stored = await state.get(entryKey);
    } catch {
      // Shared state failing outright (it degrades rather than fails, but never a 5xx from here).
      return send();
    }
    const hit = this.decode<T>(stored);
    if (hit !== undefined) {
      metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'hit' });
      return hit;
    }
    const token = randomUUID();
    if (await this.take(lockKey, token)) {
      metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'miss' });
      return this.hold(read, lockKey, token, entryKey, send);
    }
    metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'coalesced' });
    // The holder gets a share of this caller's time; the rest is kept to send itself.
    const waitUntil = performance.now() + WAIT_SHARE * Math.max(0, read.dueAt - performance.now());
    let pollMs = this.options.pollMs ?? FIRST_POLL_MS;
    for (;;) {
      const left = waitUntil - performance.now();
      if (left <= 0 || signal.aborted) break;
      await pause(Math.min(pollMs, left), signal);
      pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
      // The caller's deadline: send() throws its classified error without sending.
      if (signal.aborted) return send();
      let lock: string | undefined;
      let entry: string | undefined;
      try {
        // Both sent at once on one connection, lock first: Redis runs them in that order, and
        // the holder stores before it unlocks, so "no lock" means its entry (if any) is seen.
        [lock, entry] = await Promise.all([state.get(lockKey), state.get(entryKey)]);
      } catch {
        return send();
      }
      const answer = this.decode<T>(entry);
      if (answer !== undefined) return answer;
      // The holder's answer never came (it failed, was too large to share, or died): one of the
      // waiters takes its place, the others go on waiting for that one.
      if (lock === undefined && (await this.take(lockKey, token))) return this.hold(read, lockKey, token, entryKey, send);
    }
    if (signal.aborted) return send();
    metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'waited_out' });
    return this.sendAndStore(read, entryKey, send);
  }

  private take(lockKey: string, token: string): Promise<boolean> {
    return this.options.state.set(lockKey, token, this.lockTtlMs, { onlyIfAbsent: true }).catch(() => true);
  }

  private get lockTtlMs(): number {
    return this.options.lockTtlMs ?? LOCK_TTL_MS;
  }

  /** Sends under the lock, renewing it while the call runs; unlocks once the entry is stored. */
  private async hold<T>(read: SharedRead, lockKey: string, token: string, entryKey: string, send: () => Promise<Sized<T>>): Promise<Sized<T>> {
    const { state } = this.options;
    let renewing: Promise<unknown> = Promise.resolve();
    const renewal = setInterval(() => {
      renewing = state.set(lockKey, token, this.lockTtlMs).catch(() => undefined);
    }, this.lockTtlMs / 3);
    try {
      return await this.sendAndStore(read, entryKey, send);
    } finally {
      clearInterval(renewal);
      // A renewal landing after the unlock would leave a lock with nothing behind it.
      await renewing;
      // After the entry is stored: a waiter that finds the lock gone finds the entry.
      await state.delete(lockKey).catch(() => undefined);
    }
  }

  private async sendAndStore<T>(read: SharedRead, entryKey: string, send: () => Promise<Sized<T>>): Promise<Sized<T>> {
    const answer = await send();
    const data: unknown = answer.data;
    // An answer without an optional field is not shared either (Sized.partial).
    if (answer.partial !== true && data !== null && typeof data === 'object' && answer.bytes <= MAX_SHARED_BYTES) {
      const text = JSON.stringify(data);
      // No key in any Redis value: an answer quoting one (the caller's, or any key-shaped text) stays here.
      if (text.length <= MAX_SHARED_BYTES && !text.includes(read.apiKey) && !KEY_PREFIX.test(text)) {
        await this.options.state.set(entryKey, text, this.options.ttlMs).catch(() => undefined);
      }
    }
    return answer;
  }

  /** A stored entry, parsed; anything else (too large, not a JSON object) is a miss. */
  private decode<T>(stored: string | undefined): Sized<T> | undefined {
    // Never parse more than this replica would have stored (a foreign or corrupted value).
    if (stored === undefined || stored.length > MAX_SHARED_BYTES) return undefined;
    try {
      const data: unknown = JSON.parse(stored);
      if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
      // The operation's document decides the shape; callers parse it with zod (as for a fresh answer).
      return { data: data as T, bytes: stored.length };
    } catch {
      return undefined;
    }
  }
}
