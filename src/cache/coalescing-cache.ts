import { LRUCache } from 'lru-cache';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { SingleFlight } from './single-flight.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';

/**
 * A TTL'd LRU whose misses are loaded once however many callers ask at the same moment.
 * Failed loads are not cached (the next caller tries again); a loader may give a shorter TTL
 * for an answer (used for negative entries). A load runs under the shared call's signal
 * (SingleFlight): a caller whose own signal fires stops waiting, the load stops only when
 * every caller has left, and a load that completes is cached whoever still waits for it.
 * A value a caller got without a load (a walk's progress) is kept with `put` and read with
 * `peek`, under the same bounds. A recorded run (src/upstream/recorded-run.ts: explain, a dry run)
 * is cold: it loads alone, reads and keeps nothing, unless the cache is built `warmForRecordedRuns`.
 */
export interface Loaded<V> {
  value: V;
  ttlMs?: number;
  /** The entry's weight against the cache's `maxSize` (only when built with one); default 1. */
  size?: number;
}

export class CoalescingCache<V extends object> {
  private readonly entries: LRUCache<string, V>;
  private readonly flights = new SingleFlight<V>();
  private readonly warmForRecordedRuns: boolean;
  private readonly sized: boolean;

  private readonly name: string;
  private readonly metrics: GatewayMetrics;

  constructor(
    name: string,
    metrics: GatewayMetrics,
    /** `now`: the clock TTLs run on (the gateway's injected clock); default the process clock. */
    /**
     * `maxSize`: a bound on the entries' total size (each Loaded.size, default 1) beside `max`;
     * least recently used entries go first, and an entry larger than the whole bound is not kept.
     */
    options: { max: number; ttlMs: number; now?: () => number; warmForRecordedRuns?: boolean; maxSize?: number },
  ) {
    this.name = name;
    this.metrics = metrics;
    this.warmForRecordedRuns = options.warmForRecordedRuns ?? false;
    const clock = options.now;
    // An injected clock is read every time: lru-cache otherwise reuses a reading for 1 ms of real
    // time, which is forever for a clock that only moves when a test moves it.
    this.entries = new LRUCache<string, V>({
      max: options.max,
      ttl: options.ttlMs,
      ...(options.maxSize === undefined ? {} : { maxSize: options.maxSize, sizeCalculation: () => 1 }),
      ...(clock ? { perf: { now: clock }, ttlResolution: 0 } : {}),
    });
    this.sized = options.maxSize !== undefined;
  }

  async get(key: string, load: (signal: AbortSignal) => Promise<Loaded<V>>, signal: AbortSignal): Promise<V> {
    if (this.cold()) {
      this.metrics.cacheLookups.inc({ cache: this.name, result: 'bypassed' });
      return (await load(signal)).value;
    }
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.metrics.cacheLookups.inc({ cache: this.name, result: 'hit' });
      return cached;
    }
    const { promise, joined } = this.flights.run(
      key,
      async (shared) => {
        const loaded = await load(shared);
        this.keep(key, loaded);
        return loaded.value;
      },
      signal,
    );
    this.metrics.cacheLookups.inc({ cache: this.name, result: joined ? 'coalesced' : 'miss' });
    return promise;
  }

  /** The value kept under `key`, without loading it (none in a cold recorded run). */
  peek(key: string): V | undefined {
    if (this.cold()) return undefined;
    const cached = this.entries.get(key);
    this.metrics.cacheLookups.inc({ cache: this.name, result: cached === undefined ? 'miss' : 'hit' });
    return cached;
  }

  /** Keeps a value got without a load (a cold recorded run keeps nothing). */
  put(key: string, loaded: Loaded<V>): void {
    if (!this.cold()) this.keep(key, loaded);
  }

  /** Forgets the value under `key` (a cold recorded run changes nothing). */
  forget(key: string): void {
    if (!this.cold()) this.entries.delete(key);
  }

  private cold(): boolean {
    return !this.warmForRecordedRuns && inRecordedRun();
  }

  private keep(key: string, loaded: Loaded<V>): void {
    // lru-cache reads a TTL of 0 as "never expires": an entry with no life left is not kept.
    if (loaded.ttlMs !== undefined && loaded.ttlMs <= 0) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, loaded.value, {
      ...(loaded.ttlMs === undefined ? {} : { ttl: loaded.ttlMs }),
      ...(this.sized && loaded.size !== undefined ? { size: Math.max(1, Math.ceil(loaded.size)) } : {}),
    });
  }
}
