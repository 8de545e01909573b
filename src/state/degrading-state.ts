import type { GatewayMetrics } from '../ops/metrics.ts';
import { MemoryState } from './memory-state.ts';
import type { RedisState } from './redis-state.ts';
import type { Lease, SharedState, SharedStateStatus, SpendAll, StatusReporting, StreamEntry, WindowSpend } from './shared-state.ts';

export type { SharedStateStatus, StatusReporting } from './shared-state.ts';

class RedisTimeout extends Error {
  override name = 'RedisTimeout';
  constructor() {
    super('Redis did not answer within STATE_TIMEOUT_MS');
  }
}

/** A short class for /readyz: never a message (it could name the host or quote a command). */
function errorClassOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  if (error.name === 'RedisTimeout' || (error.name === 'Error' && /timed? ?out/i.test(error.message))) return 'timeout';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z_]{2,32}$/.test(code)) return code;
  const prefix = /^([A-Z]{4,16})\b/.exec(error.message)?.[1];
  return error.name === 'ReplyError' && prefix ? prefix : error.name;
}

/**
 * Refusals that are about the server, not the command (a replica after a failover, a lost
 * authentication, a loading or master-less server): every command would get them, so they
 * degrade the replica like a lost connection.
 */
function refusesEveryCommand(error: Error): boolean {
  return /^(READONLY|NOAUTH|NOPERM|WRONGPASS|MASTERDOWN|LOADING|CLUSTERDOWN|BUSY)\b/.test(error.message);
}

/** ioredis's error for a command Redis refused (it answered: the connection is fine). */
function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

/**
 * Redis trouble never takes the gateway down. Every operation goes to Redis while it answers;
 * the first failure or timeout switches this replica to its own memory (counted, shown in
 * /readyz), where it keeps serving without waiting on Redis at all. A probe pings Redis every
 * `probeMs`; the first answer switches back. What was kept in memory meanwhile is simply left
 * behind: every consumer treats a missing entry as a miss (a cursor re-walked, an account
 * looked up again), never as an error.
 *
 * Streams are the one exception: parity events appended while degraded cannot reach the other
 * replicas, so they are dropped (counted) rather than kept where nobody else reads them.
 */
export class DegradingState implements SharedState, StatusReporting {
  readonly backend = 'redis' as const;
  private readonly memory: MemoryState;
  private degradedAt: number | undefined;
  /** Until Redis first answers, memory serves (not counted as a degradation). */
  private connected = false;
  private lastError: string | undefined;
  private fallbacks = 0;
  private readonly probe: NodeJS.Timeout;
  private probing = false;
  private readonly timeoutMs: number;

  private readonly redis: RedisState;
  private readonly metrics: GatewayMetrics;

  constructor(
    redis: RedisState,
    metrics: GatewayMetrics,
    options: { probeMs: number; timeoutMs: number; now?: () => number },
  ) {
    this.redis = redis;
    this.metrics = metrics;
    this.timeoutMs = options.timeoutMs;
    this.memory = new MemoryState(options.now);
    metrics.sharedStateDegraded.set(0);
    this.probe = setInterval(() => void this.recover(), options.probeMs);
    this.probe.unref();
    redis.onReady(() => void this.recover());
    // Why a replica never got to share (a wrong password, an unreachable host) shows in /readyz.
    redis.onError((error) => {
      if (!this.connected || this.degradedAt !== undefined) this.lastError = errorClassOf(error);
    });
  }

  status(): SharedStateStatus {
    return {
      backend: 'redis',
      state: !this.connected ? 'connecting' : this.degradedAt === undefined ? 'shared' : 'degraded',
      ...(this.degradedAt === undefined ? {} : { degradedSince: new Date(this.degradedAt).toISOString() }),
      fallbacks: this.fallbacks,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private degrade(error: unknown): void {
    if (!this.connected) return;
    this.lastError = errorClassOf(error);
    if (this.degradedAt !== undefined) return;
    this.degradedAt = Date.now();
    this.metrics.sharedStateDegraded.set(1);
    this.metrics.sharedStateTransitions.inc({ to: 'memory' });
  }

  private async recover(): Promise<void> {
    if ((this.connected && this.degradedAt === undefined) || this.probing || !this.redis.ready) return;
    this.probing = true;
    try {
      // A Redis that answers, but slower than STATE_TIMEOUT_MS, is still trouble: two answers in
      // time in a row before the replica shares again, so a slow Redis does not flap it.
      await this.withinTimeout(this.redis.ping());
      if (!this.connected) {
        this.connected = true;
        return;
      }
      await this.withinTimeout(this.redis.ping());
      this.degradedAt = undefined;
      this.lastError = undefined;
      this.metrics.sharedStateDegraded.set(0);
      this.metrics.sharedStateTransitions.inc({ to: 'redis' });
    } catch {
      // Still failing: the next probe tries again.
    } finally {
      this.probing = false;
    }
  }

  private fellBack(operation: string): void {
    this.fallbacks++;
    this.metrics.sharedStateFallbacks.inc({ operation });
  }

  /** Redis while it answers, else memory; a Redis failure degrades this replica and is served from memory. */
  private async run<T>(
    operation: string,
    onRedis: (redis: SharedState) => Promise<T>,
    onMemory: (memory: SharedState) => Promise<T>,
    /** What to do with a Redis answer that arrives after the timeout gave up on it (e.g. give a lease back). */
    onAbandoned?: (late: T) => void,
  ): Promise<T> {
    if (this.connected && this.degradedAt === undefined) {
      try {
        return await this.withinTimeout(onRedis(this.redis), onAbandoned);
      } catch (error) {
        // Redis answered, with an error about this one command (WRONGTYPE on a foreign value,
        // OOM under maxmemory): that command is served from memory, the replica stays shared.
        if (isReplyError(error) && !refusesEveryCommand(error)) {
          this.fellBack(operation);
          return onMemory(this.memory);
        }
        this.degrade(error);
      }
    }
    // Start-up before Redis first answered is not a fallback: nothing was shared yet.
    if (this.connected) this.fellBack(operation);
    return onMemory(this.memory);
  }

  /**
   * The command's answer, or a timeout after `timeoutMs`. A timer that fires late because the
   * event loop was busy (a long synchronous task) fires before the loop reads the answer that
   * arrived meanwhile: the answer gets one more turn of the loop (setImmediate runs after the
   * poll phase) before Redis is called slow, so a busy replica does not degrade itself.
   */
  private async withinTimeout<T>(command: Promise<T>, onAbandoned?: (late: T) => void): Promise<T> {
    const settled = command.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.timeoutMs)));
    try {
      let outcome = await Promise.race([settled, late]);
      if (outcome === 'late') {
        await new Promise((resolve) => setImmediate(resolve));
        outcome = await Promise.race([settled, Promise.resolve('late' as const)]);
      }
      if (outcome === 'late') {
        if (onAbandoned) command.then(onAbandoned, () => undefined);
        throw new RedisTimeout();
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    } finally {
      clearTimeout(timer);
    }
  }

  private both<T>(operation: string, use: (state: SharedState) => Promise<T>): Promise<T> {
    return this.run(operation, use, use);
  }

  get(key: string): Promise<string | undefined> {
    return this.both('get', (s) => s.get(key));
  }

  set(key: string, value: string, ttlMs: number, options?: { onlyIfAbsent?: boolean }): Promise<boolean> {
    return this.both('set', (s) => s.set(key, value, ttlMs, options));
  }

  delete(key: string): Promise<void> {
    return this.both('delete', (s) => s.delete(key));
  }

  hashGetAll(key: string): Promise<Record<string, string>> {
    return this.both('hash_get', (s) => s.hashGetAll(key));
  }

  hashSet(key: string, fields: Record<string, string>, ttlMs: number): Promise<void> {
    return this.both('hash_set', (s) => s.hashSet(key, fields, ttlMs));
  }

  hashDelete(key: string, fields: readonly string[]): Promise<void> {
    return this.both('hash_delete', (s) => s.hashDelete(key, fields));
  }

  async acquireLease(key: string, limit: number, ttlMs: number): Promise<Lease | undefined> {
    const acquire = (s: SharedState): Promise<Lease | undefined> => s.acquireLease(key, limit, ttlMs);
    // An acquire given up on here may still run in Redis: its lease is given back when it arrives.
    const lease = await this.run('acquire_lease', acquire, acquire, (late) => void late?.release().catch(() => undefined));
    if (lease === undefined) return undefined;
    // A release waits at most STATE_TIMEOUT_MS; one that fails or is given up on is retried by the
    // Redis backend when Redis answers again, else the lease expires there by its TTL.
    return { release: () => this.withinTimeout(lease.release()).catch(() => undefined) };
  }

  leaseCount(key: string): Promise<number> {
    return this.both('lease_count', (s) => s.leaseCount(key));
  }

  spendAll(windows: readonly WindowSpend[]): Promise<SpendAll> {
    return this.both('spend_all', (s) => s.spendAll(windows));
  }

  windowTotals(keys: readonly string[]): Promise<number[]> {
    return this.both('window_totals', (s) => s.windowTotals(keys));
  }

  append(stream: string, data: string, maxLength: number): Promise<void> {
    return this.run('append', (s) => s.append(stream, data, maxLength), async () => undefined);
  }

  readAfter(stream: string, afterId: string, count: number): Promise<StreamEntry[]> {
    return this.run('read_stream', (s) => s.readAfter(stream, afterId, count), async () => []);
  }

  publish(channel: string, message: string): Promise<void> {
    return this.both('publish', (s) => s.publish(channel, message));
  }

  subscribe(channel: string, onMessage: (message: string) => void): () => void {
    // Both: Redis delivers other replicas' messages once it is back; memory this replica's own while degraded.
    const fromRedis = this.redis.subscribe(channel, onMessage);
    const fromMemory = this.memory.subscribe(channel, onMessage);
    return () => {
      fromRedis();
      fromMemory();
    };
  }

  async close(): Promise<void> {
    clearInterval(this.probe);
    await Promise.all([this.redis.close(), this.memory.close()]);
  }
}

/** A replica without Redis: its memory, reported as local. */
export class LocalState extends MemoryState implements StatusReporting {
  status(): SharedStateStatus {
    return { backend: 'memory', state: 'local', fallbacks: 0 };
  }
}
