import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../cache/single-flight.ts';
import { purgeStaleEvery } from '../cache/purge-timer.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';

/**
 * Identical NerdGraph reads inside a short window are answered once: dashboards and exporters
 * poll the same applications and metrics from many places, and NerdGraph allows only so many
 * identical queries a minute. Entries live `ttlMs` of real time (default 1 s), are bounded by
 * the bytes of the answers they hold, and are frozen, so no caller can change what the next
 * caller reads. Any write through the gateway empties the cache, and a read that was in flight
 * across a write is not stored: a client never reads its own write's old state from here.
 * With Redis, SharedReadLayer (shared-read-layer.ts) stands behind it, across replicas.
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
  /**
   * An optional field of the answer is missing (failed, or left out: UpstreamCall.optionalFields):
   * served to the callers that asked (and joined) but never kept nor shared, so the next read
   * asks again.
   */
  partial?: boolean;
}

/**
 * Freezes a parsed answer throughout (also what mappings keep beside a cached answer, shared by
 * every request it serves). Indexed and `for...in` walks rather than Object.values,
 * which allocates an array per object: on a 120 KB entity-search answer this halves the cost
 * (JSON.parse gives plain objects and arrays only, so `for...in` sees own keys alone).
 */
export function deepFreeze(value: object): void {
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeChild(value[i]);
  } else {
    for (const key in value) freezeChild((value as Record<string, unknown>)[key]);
  }
}

function freezeChild(child: unknown): void {
  if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) deepFreeze(child);
}

/** However small the answers, a bound on how many are kept. */
const MAX_ENTRIES = 10_000;

export class ReadMicroCache {
  private readonly entries: LRUCache<string, { data: object; bytes: number }>;
  private readonly flights = new SingleFlight<Sized<unknown>>();
  /** Bumped by every write: loads begun before it are not stored. */
  private generation = 0;

  private readonly options: MicroCacheOptions;

  constructor(options: MicroCacheOptions) {
    this.options = options;
    this.entries = new LRUCache<string, { data: object; bytes: number }>({
      ttl: options.ttlMs,
      max: MAX_ENTRIES,
      maxSize: options.maxBytes,
      // An answer larger than the whole bound is served but not kept.
      maxEntrySize: options.maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
    });
    // Expired answers are dropped every window, not kept until the byte bound pushes them out.
    purgeStaleEvery(this.entries, Math.max(options.ttlMs, 1_000));
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
        freezeChild(answer.data);
        if (generation === this.generation && answer.partial !== true && answer.data !== null && typeof answer.data === 'object') {
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
