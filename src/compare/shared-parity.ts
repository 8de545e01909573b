import { randomBytes } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { OpenedState } from '../state/open.ts';
import { Outbox } from './parity-outbox.ts';
import type { LocalParityStore, ParityStore } from './parity-store.ts';
import { ParityStreamReader } from './parity-stream-reader.ts';
import { SHARING_DEFAULTS, type SharingSettings } from './sharing-settings.ts';

export { SHARING_DEFAULTS, type SharingSettings } from './sharing-settings.ts';

/**
 * The parity store shared by every replica behind a load balancer, so /bridge/, /bridge/parity.json
 * and `npm run report` show the same whole story from any of them.
 *
 * Each replica keeps its own store (parity-store.ts) and appends its events to one Redis stream,
 * one batch per `flushMs` (usage, drops and plain matches as counts; up to a bound of full
 * records; records past it folded into counts per route and outcome, with their pattern counts),
 * tagged with a random id of this process and a sequence number. Each replica reads the stream
 * after the last entry it read (every `readMs`, and before a report, which waits at most
 * REPORT_WAIT_MS in src/bridge/parity.ts) and folds the other replicas' events into its store, a
 * few events at a time, yielding to the event loop between them: catching up never holds the
 * loop (and the Redis commands of real requests) for more than a few ms. A replica started later
 * reads the stream from its start, so it shows the history the stream still holds. Why a stream
 * of events rather than counters in Redis: the report is more than counts (field patterns with
 * examples, the ring of recent records, readiness from both), and the store already builds it,
 * bounded, from exactly these events.
 *
 * Every request's usage event comes from the one replica that served it, and reaches every other
 * replica once (the read position only moves forward), so requests are counted once each. A
 * Redis that lost the stream (restart, failover to an empty host, maybe with a clock behind) is
 * seen by a random epoch key it loses with it: the read position starts again at '0' (counted).
 * Batches another replica wrote that this one never read (trimmed while it lagged, or never
 * stored) are seen by their sequence numbers and counted. Prometheus counters stay this
 * replica's own: applyRemote never touches them.
 *
 * While Redis is down, events are still counted here; what could not be published is dropped
 * and counted (v2bridge_parity_events_unshared_total), and sharing resumes when Redis is back.
 * Without REDIS_URL there is no stream and no timer: the store alone, as before.
 *
 * Its parts: parity-wire.ts (a batch's format, and the checks on what another replica wrote),
 * parity-outbox.ts (the open batch, bounded), parity-stream-reader.ts (the read side) and
 * sharing-settings.ts (the bounds of all three).
 */
export interface SharedParityStore extends ParityStore {
  /**
   * Reads the other replicas' new events (never throws). With `maxWaitMs`, resolves by then at
   * the latest, the read going on in the background.
   */
  refresh(options?: { maxWaitMs?: number }): Promise<void>;
  /** Publishes the events pending now (shutdown, tests). */
  flush(): Promise<void>;
  /** Stops the timers, after publishing what is pending. */
  close(): Promise<void>;
}

/**
 * `run`, one at a time: a call joins the run queued and not started yet if there is one (it will
 * see everything the call would), else queues a new one after the current. However many callers,
 * at most one run goes and one waits.
 */
function serialized(run: () => Promise<void>): { (): Promise<void>; idle(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  const call = (): Promise<void> => {
    if (queued) return queued;
    const next = last
      .then(() => {
        queued = undefined;
        return run();
      })
      .catch(() => undefined);
    queued = next;
    last = next;
    return next;
  };
  /** Settles when the runs started or queued so far are done. */
  return Object.assign(call, { idle: () => last });
}

/**
 * The store, shared through `shared` when it is Redis-backed; with LocalState (no REDIS_URL),
 * the store alone: no stream, no timer, no extra metrics.
 */
export function shareParityStore(store: LocalParityStore, shared: OpenedState, registry: Registry, settings: SharingSettings = SHARING_DEFAULTS): SharedParityStore {
  const state = shared.state;
  const alone: SharedParityStore = {
    noteUsage: (route, m, mode) => store.noteUsage(route, m, mode),
    noteCaller: (route, m, caller) => store.noteCaller(route, m, caller),
    record: (record) => store.record(record),
    dropped: (route, m) => store.dropped(route, m),
    observeSide: (route, side, seconds) => store.observeSide(route, side, seconds),
    report: (options) => store.report(options),
    refresh: async () => undefined,
    flush: async () => undefined,
    close: async () => undefined,
  };
  if (state.status().state === 'local') return alone;

  const registers = [registry];
  const published = new Counter({
    name: 'v2bridge_parity_events_published_total',
    help: "This replica's parity events (requests, comparisons, drops) published to the other replicas",
    registers,
  });
  const unshared = new Counter({
    name: 'v2bridge_parity_events_unshared_total',
    help: "This replica's parity events that could not be published (Redis unavailable or refusing): counted in this replica's report only",
    registers,
  });

  const replicaId = randomBytes(12).toString('hex');
  const stream = shared.keyOf('parity', 'events');
  const outbox = new Outbox(settings, replicaId);
  const reader = new ParityStreamReader(store, shared, registry, settings, replicaId);
  let closing = false;

  async function publish(): Promise<void> {
    // Until Redis first answers (start-up), events wait in the open batch (bounded).
    if (state.status().state === 'connecting' && !closing) return;
    const batch = outbox.take();
    if (batch === undefined) return;
    const before = state.status();
    if (before.state !== 'shared') {
      unshared.inc(batch.weight);
      return;
    }
    try {
      await state.append(stream, batch.data, settings.streamMaxLength);
    } catch {
      // The degrading state answers every call; kept for any other SharedState.
      unshared.inc(batch.weight);
      return;
    }
    // The degrading state serves a failed append from memory without an error (degraded, or a
    // command Redis refused, e.g. OOM): seen as a change of state or one more fallback. Another
    // consumer's fallback in the same moment also counts this batch unshared (rare; errs on the
    // side of telling).
    const after = state.status();
    if (after.state === 'shared' && after.fallbacks === before.fallbacks) published.inc(batch.weight);
    else unshared.inc(batch.weight);
  }

  // Appends one after another: a flush returns once what was pending when it was called is in
  // the stream (or counted unshared). Events arriving meanwhile wait in the open batch.
  const flush = serialized(publish);
  store.onLocalEvent((event) => outbox.add(event));

  // Reads one after another, concurrent callers sharing the one queued: a report's read starts
  // once the one before it is done, so it sees everything appended before it was asked for, and
  // no entry is applied twice.
  const read = serialized(() => reader.readAll());
  function refresh(options: { maxWaitMs?: number } = {}): Promise<void> {
    const reading = read();
    const maxWaitMs = options.maxWaitMs;
    if (maxWaitMs === undefined) return reading;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxWaitMs);
      void reading.finally(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  const flushTimer = setInterval(() => void flush(), settings.flushMs);
  const readTimer = setInterval(() => void read(), settings.readMs);
  flushTimer.unref();
  readTimer.unref();

  return {
    ...alone,
    refresh,
    flush,
    async close() {
      clearInterval(flushTimer);
      clearInterval(readTimer);
      closing = true;
      await flush();
      await read.idle();
    },
  };
}
