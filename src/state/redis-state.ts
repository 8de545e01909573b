import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { resolvingConnector, type HostResolver } from './redis-connector.ts';
import type { Lease, SharedState, SpendAll, StreamEntry, WindowSpend } from './shared-state.ts';

/**
 * SharedState in Redis, through ioredis (docs/scale-out.md: why ioredis). Commands fail fast instead of
 * queueing while the connection is down (`enableOfflineQueue: false`); degrading-state.ts times
 * them out after STATE_TIMEOUT_MS, so a slow or lost Redis costs a request at most that long,
 * once, and then serves from memory until Redis answers again. ioredis reconnects
 * by itself, with a capped backoff.
 *
 * Leases and budget windows are Lua scripts, atomic in Redis, timed by Redis's own clock
 * (replicas' clocks may disagree).
 */
export interface RedisStateOptions {
  url: string;
  commandTimeoutMs: number;
  /** How Redis's host name is resolved (default dns.lookup, one at a time): tests stand in for a hung DNS. */
  resolveHost?: HostResolver;
}

// KEYS[1] sorted set of lease ids scored by expiry (ms, Redis time); ARGV: limit, ttlMs, id.
const ACQUIRE_LEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
-- Only ever extended: a caller with a shorter deadline must not expire other callers' leases.
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return 1`;

const COUNT_LEASES = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

// KEYS: distinct counters; ARGV: cost, limit, windowMs and expiresWith (1-based key, 0: none) for
// each key in turn; a new counter with expiresWith gets that key's TTL. Checks every window,
// then spends all or none. Answers {1} or {0, ms left, index (from 0)} of the refusing window
// that resets last. (One script over several keys: fine on one Redis; a Redis Cluster would
// need the keys in one hash slot.)
const SPEND_ALL = `
local function ttl(i)
  local with = tonumber(ARGV[4 * i])
  if with > 0 then
    local left = redis.call('PTTL', KEYS[with])
    if left > 0 then return left end
  end
  return tonumber(ARGV[4 * i - 1])
end
local refused, longest = -1, -1
for i = 1, #KEYS do
  local total = tonumber(redis.call('GET', KEYS[i]) or '0')
  if total + tonumber(ARGV[4 * i - 3]) > tonumber(ARGV[4 * i - 2]) then
    local left = redis.call('PTTL', KEYS[i])
    if left < 1 then left = ttl(i) end
    if left > longest then refused, longest = i - 1, left end
  end
end
if refused >= 0 then return {0, longest, refused} end
for i = 1, #KEYS do
  local cost = tonumber(ARGV[4 * i - 3])
  local total = redis.call('INCRBY', KEYS[i], cost)
  if total == cost then redis.call('PEXPIRE', KEYS[i], ttl(i)) end
end
return {1}`;

/**
 * Leases this replica may have left in Redis: an acquire that timed out on this side (the
 * script may still have run) or a release that failed. Released again once Redis answers (a
 * reconnection, or the degrading layer's probe); bounded, the oldest dropped first (those
 * expire by their TTL, as before).
 */
const MAX_LEFT_LEASES = 10_000;

// KEYS[1] hash; ARGV: ttlMs, field, value, ...: the TTL is set when the hash is created only.
const HASH_SET = `
local created = redis.call('EXISTS', KEYS[1]) == 0
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if created then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1])) end
return 1`;

export class RedisState implements SharedState {
  readonly backend = 'redis' as const;
  private readonly client: Redis;
  private subscriber: Redis | undefined;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();
  /** Lease id -> its key, for leases to release again (MAX_LEFT_LEASES). */
  private readonly leftLeases = new Map<string, string>();
  private releasingLeft = false;

  constructor(options: RedisStateOptions) {
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      // The degrading layer times commands out itself (it tells a slow Redis from a busy
      // loop); this is only the backstop that frees a command Redis never answers.
      commandTimeout: Math.max(4 * options.commandTimeoutMs, 2_000),
      connectTimeout: Math.max(1_000, options.commandTimeoutMs),
      // Redis's host name resolved one lookup at a time (redis-connector.ts: a name that stops
      // resolving must not take libuv's thread pool from the gateway's other lookups).
      Connector: resolvingConnector(Math.max(1_000, options.commandTimeoutMs), options.resolveHost),
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
      lazyConnect: false,
    });
    // Errors are counted by the degrading layer through the failed commands; the client's own
    // 'error' events (one per failed reconnect) would otherwise be thrown as unhandled.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => void this.releaseLeftLeases());
  }

  /** True while commands can be sent (connected and past the ready check). */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /** The client's connection errors (refused, wrong password...), for the degrading layer's status. */
  onError(listener: (error: Error) => void): void {
    this.client.on('error', listener);
  }

  /** Called on every (re)connection once Redis is ready. */
  onReady(listener: () => void): void {
    this.client.on('ready', listener);
  }

  async ping(): Promise<void> {
    await this.client.ping();
    // Redis answers again (the degrading layer's probe): what a stall left behind can go now.
    void this.releaseLeftLeases();
  }

  /** Leases waiting to be released again (tests, diagnostics). */
  get leftLeaseCount(): number {
    return this.leftLeases.size;
  }

  private leaveLease(key: string, id: string): void {
    if (this.leftLeases.size >= MAX_LEFT_LEASES) {
      const oldest = this.leftLeases.keys().next().value;
      if (oldest !== undefined) this.leftLeases.delete(oldest);
    }
    this.leftLeases.set(id, key);
  }

  private async releaseLeftLeases(): Promise<void> {
    if (this.leftLeases.size === 0 || this.releasingLeft) return;
    this.releasingLeft = true;
    try {
      for (const [id, key] of [...this.leftLeases]) {
        await this.client.zrem(key, id);
        this.leftLeases.delete(id);
      }
    } catch {
      // Redis failing again: the rest waits for the next time it answers.
    } finally {
      this.releasingLeft = false;
    }
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.client.get(key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number, options?: { onlyIfAbsent?: boolean }): Promise<boolean> {
    const ttl = Math.max(1, Math.round(ttlMs));
    const answer = options?.onlyIfAbsent ? await this.client.set(key, value, 'PX', ttl, 'NX') : await this.client.set(key, value, 'PX', ttl);
    return answer === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.client.del(key);
  }

  async hashGetAll(key: string): Promise<Record<string, string>> {
    return this.client.hgetall(key);
  }

  async hashSet(key: string, fields: Record<string, string>, ttlMs: number): Promise<void> {
    const args = Object.entries(fields).flat();
    if (args.length === 0) return;
    await this.client.eval(HASH_SET, 1, key, Math.max(1, Math.round(ttlMs)), ...args);
  }

  async hashDelete(key: string, fields: readonly string[]): Promise<void> {
    if (fields.length === 0) return;
    await this.client.hdel(key, ...fields);
  }

  async acquireLease(key: string, limit: number, ttlMs: number): Promise<Lease | undefined> {
    const id = randomUUID();
    let got: unknown;
    try {
      got = await this.client.eval(ACQUIRE_LEASE, 1, key, limit, Math.max(1, Math.round(ttlMs)), id);
    } catch (error) {
      // The script may have run (a timeout on this side only): release it once Redis answers.
      this.leaveLease(key, id);
      throw error;
    }
    if (got !== 1) return undefined;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await this.client.zrem(key, id);
        } catch (error) {
          this.leaveLease(key, id);
          throw error;
        }
      },
    };
  }

  async leaseCount(key: string): Promise<number> {
    return Number(await this.client.eval(COUNT_LEASES, 1, key));
  }

  async spendAll(windows: readonly WindowSpend[]): Promise<SpendAll> {
    if (windows.length === 0) return { spent: true };
    // Per window: cost, limit, TTL, and the 1-based key whose expiry a new window shares (0: none).
    const args = windows.flatMap(({ cost, limit, windowMs, expiresWith }) => [cost, limit, Math.max(1, Math.round(windowMs)), expiresWith === undefined ? 0 : expiresWith + 1]);
    const answer = (await this.client.eval(SPEND_ALL, windows.length, ...windows.map((w) => w.key), ...args)) as number[];
    return answer[0] === 1 ? { spent: true } : { spent: false, retryAfterMs: Number(answer[1]), refused: Number(answer[2]) };
  }

  async windowTotals(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const totals = await this.client.mget(...keys);
    return totals.map((total) => Number(total ?? 0) || 0);
  }

  async append(stream: string, data: string, maxLength: number): Promise<void> {
    await this.client.xadd(stream, 'MAXLEN', '~', maxLength, '*', 'd', data);
  }

  async readAfter(stream: string, afterId: string, count: number): Promise<StreamEntry[]> {
    // Exclusive start: entries strictly after `afterId` ('0' reads from the first).
    const answer = await this.client.xrange(stream, afterId === '0' ? '-' : `(${afterId}`, '+', 'COUNT', count);
    return answer.map(([id, fields]) => ({ id, data: fields[1] ?? '' }));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(channel, message);
  }

  subscribe(channel: string, onMessage: (message: string) => void): () => void {
    if (this.subscriber === undefined) {
      // A subscribed connection can only subscribe: a second one. It resubscribes after a reconnect.
      // Its SUBSCRIBEs wait for a connection however long Redis is away (maxRetriesPerRequest
      // null), and every channel is subscribed again on each connection: ioredis only
      // resubscribes channels whose first SUBSCRIBE succeeded.
      const subscriber = this.client.duplicate({ enableOfflineQueue: true, autoResubscribe: false, maxRetriesPerRequest: null, commandTimeout: undefined });
      subscriber.on('error', () => undefined);
      subscriber.on('ready', () => {
        const channels = [...this.handlers].filter(([, set]) => set.size > 0).map(([name]) => name);
        if (channels.length > 0) void subscriber.subscribe(...channels).catch(() => undefined);
      });
      subscriber.on('message', (name: string, message: string) => {
        for (const handler of this.handlers.get(name) ?? []) handler(message);
      });
      this.subscriber = subscriber;
    }
    const handlers = this.handlers.get(channel) ?? new Set();
    if (handlers.size === 0) void this.subscriber.subscribe(channel).catch(() => undefined);
    handlers.add(onMessage);
    this.handlers.set(channel, handlers);
    return () => {
      handlers.delete(onMessage);
      if (handlers.size === 0) void this.subscriber?.unsubscribe(channel).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.client.disconnect();
    this.subscriber?.disconnect();
  }
}
