import { randomUUID } from 'node:crypto';
import { pause } from './pause.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { SharedState, StateKeyer, StatusReporting } from '../state/shared-state.ts';

/**
 * The write generation the micro-cache across replicas keys its entries by (shared-read-layer.ts):
 * a token in shared state that every write replaces before it is answered, and announces on a
 * channel every replica listens to (to empty its in-process cache at once). Reads learn the
 * current one from a shared read sent after they began (concurrent reads share one), and a
 * change calls the onWrite listeners. Only what came from Redis is trusted: a generation read or
 * written while the shared state was degraded (or served from memory) is unknown.
 */

/** The generation outlives every entry (at most a minute) by far; when it lapses, '' is current. */
const GENERATION_TTL_MS = 24 * 3_600_000;
/** How long a write's answer may wait for Redis to come back to record the new generation. */
const WRITE_RETRY_MS = 1_000;
const STATUS_POLL_MS = 10;

/** A moment of the shared state: whether it is shared, and how many operations memory served so far. */
type Mark = { shared: boolean; fallbacks: number };

export class WriteGeneration {
  private readonly generationKey: string;
  private readonly channel: string;
  /** The last generation this replica trusted; its in-process cache holds nothing older. */
  private known: string | undefined;
  private readonly listeners = new Set<() => void>();
  /** The generation read in flight, and the one queued behind it for callers who came later. */
  private sent: Promise<string | undefined> | undefined;
  private queued: Promise<string | undefined> | undefined;

  private readonly options: { state: SharedState & StatusReporting; keyOf: StateKeyer; metrics: GatewayMetrics };

  constructor(options: { state: SharedState & StatusReporting; keyOf: StateKeyer; metrics: GatewayMetrics }) {
    this.options = options;
    this.generationKey = options.keyOf('writes', 'generation');
    // A channel is no key, but named the same way: deployments sharing a Redis stay apart.
    this.channel = options.keyOf('writes', 'announced');
  }

  private mark(): Mark {
    const status = this.options.state.status();
    return { shared: status.state === 'shared', fallbacks: status.fallbacks };
  }

  /**
   * Did what ran since `before` reach Redis? Only if the state was shared throughout and no
   * operation was served from memory meanwhile (a degradation, or a command Redis refused);
   * another operation's fallback makes this answer no too, which only costs a cache bypass.
   */
  private stayedShared(before: Mark): boolean {
    const after = this.mark();
    return before.shared && after.shared && after.fallbacks === before.fallbacks;
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
   * many calls. Undefined when it did not come from Redis: nothing cached may be trusted then.
   */
  freshGeneration(): Promise<string | undefined> {
    if (this.sent === undefined) return this.readGeneration();
    this.queued ??= this.sent.then(() => {
      this.queued = undefined;
      return this.readGeneration();
    });
    return this.queued;
  }

  private readGeneration(): Promise<string | undefined> {
    const before = this.mark();
    const reading = this.options.state
      .get(this.generationKey)
      .then(
        (generation) => (this.stayedShared(before) ? (generation ?? '') : undefined),
        () => undefined,
      )
      .then((generation) => {
        // Unknown: the in-process cache is bypassed meanwhile, and compared again once known.
        if (generation !== undefined && generation !== this.known) {
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
   * the new generation is in Redis (true), so the writer's answer is sent only after that. If
   * Redis cannot take it, a memory copy is no substitute (the others never see it): the write
   * waits up to WRITE_RETRY_MS, and at most half its time left before `dueAt`, for Redis to
   * come back and tries once more; then it is answered anyway (false, counted), and the other
   * replicas may serve what they read before it until their entries expire (class comment).
   * Never fails.
   */
  async written(dueAt = Number.POSITIVE_INFINITY): Promise<boolean> {
    const generation = randomUUID();
    const { state } = this.options;
    const giveUpAt = performance.now() + Math.min(WRITE_RETRY_MS, Math.max(0, (dueAt - performance.now()) / 2));
    for (let attempt = 1; attempt <= 2; attempt++) {
      const before = this.mark();
      if (before.shared) {
        await state.set(this.generationKey, generation, GENERATION_TTL_MS).catch(() => false);
        if (this.stayedShared(before)) {
          // This replica's own cache was emptied by the write itself.
          this.known = generation;
          await state.publish(this.channel, generation).catch(() => undefined);
          return true;
        }
      }
      // Redis is back when the state's probe says so (a refused command: at once).
      while (!this.mark().shared && performance.now() < giveUpAt) await pause(STATUS_POLL_MS);
      if (!this.mark().shared) break;
    }
    this.options.metrics.cacheLookups.inc({ cache: 'micro-shared', result: 'write_unannounced' });
    return false;
  }
}
