import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../cache/single-flight.ts';
import { KEY_PREFIX } from '../caller/redact.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { SharedState, StateKeyer } from '../state/shared-state.ts';

/**
 * Identical NerdGraph reads inside a short window are answered once: dashboards and exporters
 * poll the same applications and metrics from many places, and NerdGraph allows only so many
 * identical queries a minute. Entries live `ttlMs` of real time (default 1 s), are bounded by
 * the bytes of the answers they hold, and are frozen, so no caller can change what the next
 * caller reads. Any write through the gateway empties the cache, and a read that was in flight
 * across a write is not stored: a client never reads its own write's old state from here.
 * With Redis, SharedReadLayer (below) stands behind it, across replicas.
 */
export interface MicroCacheOptions {
  ttlMs: number;
  maxBytes: number;
  metrics: GatewayMetrics;
}

export interface Sized<T> {
  data: T;
  /** Size of the answer as received, for the byte bound (parsed, an answer takes about 1.5 times as much heap). */
  bytes: number;
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

/** However small the answers, a bound on how many are kept. */
const MAX_ENTRIES = 10_000;

export class ReadMicroCache {
  private readonly entries: LRUCache<string, { data: object; bytes: number }>;
  private readonly flights = new SingleFlight<Sized<unknown>>();
  /** Bumped by every write: loads begun before it are not stored. */
  private generation = 0;

  constructor(private readonly options: MicroCacheOptions) {
    this.entries = new LRUCache<string, { data: object; bytes: number }>({
      ttl: options.ttlMs,
      max: MAX_ENTRIES,
      maxSize: options.maxBytes,
      // An answer larger than the whole bound is served but not kept.
      maxEntrySize: options.maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
    });
    // Expired answers are dropped every window, not kept until the byte bound pushes them out.
    setInterval(() => this.entries.purgeStale(), Math.max(options.ttlMs, 1_000)).unref();
  }

  async read<T>(key: string, load: (signal: AbortSignal) => Promise<Sized<T>>, signal: AbortSignal): Promise<T> {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.options.metrics.cacheLookups.inc({ cache: 'micro', result: 'hit' });
      return cached.data as T;
    }
    const generation = this.generation;
    // A read begun before a write is never joined after it, nor one begun in an earlier
    // window: a call that hangs is not joined for ever by callers who keep arriving.
    const { promise, joined } = this.flights.run(
      `${generation}\n${Math.floor(performance.now() / this.options.ttlMs)}\n${key}`,
      async (shared) => {
        const answer = await load(shared);
        deepFreeze(answer.data);
        if (generation === this.generation && answer.data !== null && typeof answer.data === 'object') {
          this.entries.set(key, { data: answer.data, bytes: answer.bytes });
        }
        return answer;
      },
      signal,
    );
    this.options.metrics.cacheLookups.inc({ cache: 'micro', result: joined ? 'coalesced' : 'miss' });
    return (await promise).data as T;
  }

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** Changes with every write: what was derived from reads before it is stale. */
  get writeGeneration(): number {
    return this.generation;
  }

  /** A write is about to be sent, or has settled: nothing read before it may be served after it. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }
}

/**
 * The micro-cache's second layer, across replicas (Redis only): what one replica read inside
 * the window answers the others, and identical reads in flight on several replicas at once go
 * to NerdGraph once. It sits behind ReadMicroCache, so each replica consults it once per key
 * and window at most (its own misses), never per request.
 *
 * - Entries: `keyOf('micro', identity, operation, variables)` = `<generation>\n<JSON of data>`,
 *   kept for the window. Failed answers are never stored.
 * - Generation: a token in shared state that every write replaces before it is answered, and
 *   announces on a channel every replica listens to (to empty its in-process cache at once).
 *   An entry is served only while its generation is the current one, read from shared state
 *   with the entry. The announcement alone could arrive after the writer's client, answered,
 *   asks another replica: so every read first learns the current generation from a shared
 *   read sent after it began (freshGeneration; concurrent reads share one), and a change
 *   empties the in-process cache before it is consulted. An answer read before a write, on
 *   any replica, is never served after it.
 * - A miss takes a short lock (`keyOf('micro-lock', generation, ...)`, set only if absent, for
 *   the call's timeout bound): the holder sends and stores; the others poll for its entry and
 *   send themselves only when the lock is gone with no entry (the holder failed or died), or
 *   when their own deadline fires.
 */
export interface SharedReadLayerOptions {
  state: SharedState;
  keyOf: StateKeyer;
  /** The window: how long an entry is served. */
  ttlMs: number;
  /** How long a lock holds: the call's own timeout bound (a holder that dies frees it then). */
  lockTtlMs: number;
  metrics: GatewayMetrics;
  /** Between two looks at the holder's entry. */
  pollMs?: number;
}

/** What one shared read is about; `apiKey` is only checked against the answer, never stored. */
export interface SharedRead {
  identity: string;
  operation: string;
  /** The variables as JSON: the same text on every replica for the same read. */
  variables: string;
  apiKey: string;
}

/** Answers larger than this are served but not shared (one Redis value each, every window). */
const MAX_SHARED_BYTES = 4 * 1024 * 1024;
/** Reads whose answers may hold third-party secrets (channel credentials): kept out of Redis. */
const NOT_SHARED = new Set(['NotificationDirectory']);
/** The generation outlives every entry (at most a minute) by far; when it lapses, '' is current. */
const GENERATION_TTL_MS = 24 * 3_600_000;
const DEFAULT_POLL_MS = 8;

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export class SharedReadLayer {
  private readonly generationKey: string;
  private readonly channel: string;
  /** The generation this replica last saw; its in-process cache holds nothing older. */
  private known: string | undefined;
  private readonly listeners = new Set<() => void>();
  /** The generation read in flight, and the one queued behind it for callers who came later. */
  private sent: Promise<string> | undefined;
  private queued: Promise<string> | undefined;

  constructor(private readonly options: SharedReadLayerOptions) {
    this.generationKey = options.keyOf('writes', 'generation');
    // A channel is no key, but named the same way: deployments sharing a Redis stay apart.
    this.channel = options.keyOf('writes', 'announced');
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
    this.listeners.add(listener);
    const unsubscribe = this.options.state.subscribe(this.channel, () => listener());
    return () => {
      this.listeners.delete(listener);
      unsubscribe();
    };
  }

  /**
   * The current generation, from a shared read sent after this call (so a write answered
   * before it is seen); a change since the last one calls the onWrite listeners first. While a
   * read is in flight, later callers share the next one: one Redis read per round trip, however
   * many calls.
   */
  freshGeneration(): Promise<string> {
    if (this.sent === undefined) return this.readGeneration();
    this.queued ??= this.sent.then(() => {
      this.queued = undefined;
      return this.readGeneration();
    });
    return this.queued;
  }

  private readGeneration(): Promise<string> {
    const reading = this.options.state
      .get(this.generationKey)
      .then(
        (generation) => generation ?? '',
        // Unknown: a generation nobody has, so nothing cached is trusted.
        () => randomUUID(),
      )
      .then((generation) => {
        if (generation !== this.known) {
          const first = this.known === undefined;
          this.known = generation;
          if (!first) for (const listener of this.listeners) listener();
        }
        return generation;
      });
    this.sent = reading;
    void reading.finally(() => {
      if (this.sent === reading) this.sent = undefined;
    });
    return reading;
  }

  /**
   * A write has settled: from now on no replica serves what was read before it. Resolved once
   * the new generation is in shared state, so the writer's answer is sent only after that.
   * Never fails: shared-state trouble degrades to memory (src/state/).
   */
  async written(): Promise<void> {
    const generation = randomUUID();
    const { state } = this.options;
    // This replica's own cache was emptied by the write itself.
    this.known = generation;
    await state.set(this.generationKey, generation, GENERATION_TTL_MS).catch(() => undefined);
    await state.publish(this.channel, generation).catch(() => undefined);
  }

  /**
   * The shared answer to `read`, or `send`'s (stored for the others when it succeeds).
   * `send` must throw at once when `signal` has fired (the client's `send` does).
   */
  async read<T>(read: SharedRead, send: () => Promise<Sized<T>>, signal: AbortSignal): Promise<Sized<T>> {
    const { state, keyOf, metrics } = this.options;
    const entryKey = keyOf('micro', read.identity, read.operation, read.variables);
    let generation: string;
    let stored: string | undefined;
    try {
      [generation, stored] = await Promise.all([state.get(this.generationKey).then((g) => g ?? ''), state.get(entryKey)]);
    } catch {
      // Shared state failing outright (it degrades rather than fails, but never a 5xx from here).
      return send();
    }
    const hit = this.decode<T>(stored, generation);
    if (hit !== undefined) {
      metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'hit' });
      return hit;
    }
    const lockKey = keyOf('micro-lock', generation, read.identity, read.operation, read.variables);
    const holding = await state.set(lockKey, randomUUID(), this.options.lockTtlMs, { onlyIfAbsent: true }).catch(() => true);
    if (holding) {
      metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'miss' });
      try {
        return await this.sendAndStore(read, entryKey, generation, send);
      } finally {
        // After the entry is stored: a waiter that finds the lock gone finds the entry.
        await state.delete(lockKey).catch(() => undefined);
      }
    }
    metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'coalesced' });
    for (;;) {
      await pause(this.options.pollMs ?? DEFAULT_POLL_MS, signal);
      // The caller's deadline: send() throws its classified error without sending.
      if (signal.aborted) return send();
      let lock: string | undefined;
      try {
        // The lock first, then the entry: the holder stores before it unlocks, so "no lock"
        // read first means its entry (if any) is there for the second read.
        lock = await state.get(lockKey);
        const answer = this.decode<T>(await state.get(entryKey), generation);
        if (answer !== undefined) return answer;
      } catch {
        return send();
      }
      // The holder's answer never came (it failed, was too large to share, or died): send.
      if (lock === undefined) return this.sendAndStore(read, entryKey, generation, send);
    }
  }

  private async sendAndStore<T>(read: SharedRead, entryKey: string, generation: string, send: () => Promise<Sized<T>>): Promise<Sized<T>> {
    const answer = await send();
    const data: unknown = answer.data;
    if (data !== null && typeof data === 'object' && answer.bytes <= MAX_SHARED_BYTES) {
      const text = JSON.stringify(data);
      // No key in any Redis value: an answer quoting one (the caller's, or any key-shaped text) stays here.
      if (text.length <= MAX_SHARED_BYTES && !text.includes(read.apiKey) && !KEY_PREFIX.test(text)) {
        await this.options.state.set(entryKey, `${generation}\n${text}`, this.options.ttlMs).catch(() => undefined);
      }
    }
    return answer;
  }

  /** A stored entry of the current generation, parsed; anything else is a miss. */
  private decode<T>(stored: string | undefined, generation: string): Sized<T> | undefined {
    if (stored === undefined) return undefined;
    const newline = stored.indexOf('\n');
    if (newline < 0 || stored.slice(0, newline) !== generation) return undefined;
    try {
      const data: unknown = JSON.parse(stored.slice(newline + 1));
      if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
      // The operation's document decides the shape; callers parse it with zod (as for a fresh answer).
      return { data: data as T, bytes: stored.length - newline - 1 };
    } catch {
      return undefined;
    }
  }
}
