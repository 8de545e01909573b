import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { purgeStaleEvery } from '../cache/purge-timer.ts';
import type { Lease, SharedState, SpendAll, StreamEntry, WindowSpend } from './shared-state.ts';

/**
 * SharedState in this process's memory: what a gateway without REDIS_URL uses, and what a
 * replica falls back to while Redis is unreachable. Same semantics as redis-state.ts, bounded
 * whatever callers send (an LRU per kind of value; the oldest entries go first).
 */
const MAX_KEYS = 100_000;
/**
 * Bound on the characters (UTF-16 code units) the string values hold (answers of the shared micro-cache among
 * them, while a replica serves from memory): however long Redis is away, the fallback cannot
 * outgrow it. A value larger than the whole bound is not kept (a miss next time).
 */
const MAX_STRING_CHARS = 64 * 1024 * 1024;
/** Expired values are dropped this often, not kept until the bound pushes them out. */
const PURGE_EVERY_MS = 5_000;
const MAX_STREAM = 100_000;

interface Window {
  total: number;
  endsAt: number;
}

export class MemoryState implements SharedState {
  readonly backend = 'memory' as const;
  private readonly strings: LRUCache<string, string>;
  private readonly purge: NodeJS.Timeout;
  private readonly hashes: LRUCache<string, Map<string, string>>;
  private readonly windows: LRUCache<string, Window>;
  /** key -> lease id -> expiry. */
  private readonly leases: LRUCache<string, Map<string, number>>;
  private readonly streams = new Map<string, { next: number; entries: StreamEntry[] }>();
  private readonly channels = new Map<string, Set<(message: string) => void>>();

  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
    const clock = { perf: { now }, ttlResolution: 0 };
    this.strings = new LRUCache({
      max: MAX_KEYS,
      maxSize: MAX_STRING_CHARS,
      maxEntrySize: MAX_STRING_CHARS,
      sizeCalculation: (value, key) => Math.max(1, value.length + key.length),
      ...clock,
    });
    this.purge = purgeStaleEvery(this.strings, PURGE_EVERY_MS);
    this.hashes = new LRUCache({ max: MAX_KEYS, noUpdateTTL: true, ...clock });
    this.windows = new LRUCache({ max: MAX_KEYS });
    this.leases = new LRUCache({ max: MAX_KEYS });
  }

  async get(key: string): Promise<string | undefined> {
    return this.strings.get(key);
  }

  async set(key: string, value: string, ttlMs: number, options?: { onlyIfAbsent?: boolean }): Promise<boolean> {
    if (options?.onlyIfAbsent && this.strings.has(key)) return false;
    // Larger than the whole bound: not kept (lru-cache would drop it silently), so not "set".
    if (value.length + key.length > MAX_STRING_CHARS) return false;
    this.strings.set(key, value, { ttl: ttlMs });
    return true;
  }

  async delete(key: string): Promise<void> {
    this.strings.delete(key);
    this.hashes.delete(key);
  }

  async hashGetAll(key: string): Promise<Record<string, string>> {
    return Object.fromEntries(this.hashes.get(key) ?? []);
  }

  async hashSet(key: string, fields: Record<string, string>, ttlMs: number): Promise<void> {
    const known = this.hashes.get(key);
    if (known) {
      for (const [field, value] of Object.entries(fields)) known.set(field, value);
      return;
    }
    this.hashes.set(key, new Map(Object.entries(fields)), { ttl: ttlMs });
  }

  async hashDelete(key: string, fields: readonly string[]): Promise<void> {
    const known = this.hashes.get(key);
    for (const field of fields) known?.delete(field);
  }

  private liveLeases(key: string): Map<string, number> {
    const held = this.leases.get(key) ?? new Map<string, number>();
    const now = this.now();
    for (const [id, expiresAt] of held) if (expiresAt <= now) held.delete(id);
    return held;
  }

  async acquireLease(key: string, limit: number, ttlMs: number): Promise<Lease | undefined> {
    const held = this.liveLeases(key);
    if (held.size >= limit) return undefined;
    const id = randomUUID();
    held.set(id, this.now() + ttlMs);
    this.leases.set(key, held);
    return { release: async () => void this.leases.get(key)?.delete(id) };
  }

  async leaseCount(key: string): Promise<number> {
    return this.liveLeases(key).size;
  }

  async spendAll(windows: readonly WindowSpend[]): Promise<SpendAll> {
    const now = this.now();
    const current: Window[] = [];
    for (const { key, windowMs, expiresWith } of windows) {
      const window = this.windows.get(key);
      const endsWith = expiresWith === undefined ? undefined : current[expiresWith];
      current.push(window === undefined || window.endsAt <= now ? { total: 0, endsAt: endsWith?.endsAt ?? now + windowMs } : window);
    }
    let refusal: Extract<SpendAll, { spent: false }> | undefined;
    windows.forEach(({ cost, limit }, index) => {
      const window = current[index] as Window;
      const retryAfterMs = Math.max(1, window.endsAt - now);
      if (window.total + cost > limit && (refusal === undefined || retryAfterMs > refusal.retryAfterMs)) refusal = { spent: false, retryAfterMs, refused: index };
    });
    if (refusal !== undefined) return refusal;
    windows.forEach(({ key, cost }, index) => {
      const window = current[index] as Window;
      window.total += cost;
      this.windows.set(key, window);
    });
    return { spent: true };
  }

  async windowTotals(keys: readonly string[]): Promise<number[]> {
    const now = this.now();
    return keys.map((key) => {
      const window = this.windows.get(key);
      return window === undefined || window.endsAt <= now ? 0 : window.total;
    });
  }

  async append(stream: string, data: string, maxLength: number): Promise<void> {
    const known = this.streams.get(stream) ?? { next: 1, entries: [] };
    known.entries.push({ id: `${known.next++}-0`, data });
    const bound = Math.min(maxLength, MAX_STREAM);
    if (known.entries.length > bound) known.entries.splice(0, known.entries.length - bound);
    this.streams.set(stream, known);
  }

  async readAfter(stream: string, afterId: string, count: number): Promise<StreamEntry[]> {
    const after = Number(afterId.split('-')[0]) || 0;
    return (this.streams.get(stream)?.entries ?? []).filter((entry) => Number(entry.id.split('-')[0]) > after).slice(0, count);
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const handler of this.channels.get(channel) ?? []) handler(message);
  }

  subscribe(channel: string, onMessage: (message: string) => void): () => void {
    const handlers = this.channels.get(channel) ?? new Set();
    handlers.add(onMessage);
    this.channels.set(channel, handlers);
    return () => void handlers.delete(onMessage);
  }

  async close(): Promise<void> {
    clearInterval(this.purge);
    this.channels.clear();
  }
}
