import { randomBytes } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { z } from 'zod';
import type { OpenedState } from '../state/open.ts';
import type { LocalParityStore, ParityEvent, ParityStore } from './parity-store.ts';
import type { DifferenceKind, Outcome, RouteMode, Verdict } from './types.ts';

/**
 * The parity store shared by every replica behind a load balancer, so /bridge/, /bridge/parity.json
 * and `npm run report` show the same whole story from any of them.
 *
 * Each replica keeps its own store (parity-store.ts) and appends its events to one Redis stream,
 * batched (one append per `flushMs`, or sooner when a batch fills) and tagged with a random id of
 * this process. Each replica reads the stream after the last entry it read (every `readMs`, and
 * right before a report) and folds the other replicas' events into its store; a replica started
 * later reads the stream from its start, so it shows the history the stream still holds. Why a
 * stream of events rather than counters in Redis: the report is more than counts (field patterns
 * with examples, the ring of recent records, readiness from both), and the store already builds
 * it, bounded, from exactly these events.
 *
 * Every request's usage event comes from the one replica that served it, and reaches every other
 * replica once (the read position only moves forward), so requests are counted once each.
 * Prometheus counters stay this replica's own: applyRemote never touches them.
 *
 * While Redis is down, events are still counted here; what could not be published is dropped
 * and counted (v2bridge_parity_events_unshared_total), and sharing resumes when Redis is back.
 * Without REDIS_URL there is no stream and no timer: the store alone, as before.
 */
export interface SharedParityStore extends ParityStore {
  /** Reads the other replicas' new events (never throws). */
  refresh(): Promise<void>;
  /** Publishes the events pending now (shutdown, tests). */
  flush(): Promise<void>;
  /** Stops the timers, after publishing what is pending. */
  close(): Promise<void>;
}

export interface SharingSettings {
  /** Longest an event waits before it is published. */
  flushMs: number;
  /** A batch holding this many records, or this much JSON, is published at once. */
  batchRecords: number;
  batchChars: number;
  /** How often the other replicas' events are read. */
  readMs: number;
  /** Stream entries per read, and reads per catch-up (a catch-up can take in the whole stream). */
  readPage: number;
  readPages: number;
  /** Batches the stream keeps (MAXLEN ~): what a replica started late can still see. */
  streamMaxLength: number;
  /**
   * Full batches kept while they cannot be sent yet (start-up, before Redis first answers; a burst
   * faster than Redis takes them): at most about 100 x 256 KB, about 11 MB with typical records.
   */
  maxWaitingBatches: number;
}

/**
 * A batch is at most about `batchChars` plus one record (a record is bounded by the store: tens of
 * KB at worst, under 1 KB typically); 10,000 batches is a bounded Redis footprint (usage folds
 * into counts, so an idle or matching route costs a few bytes a batch) and, at 200 ms per batch
 * per busy replica, minutes to hours of history for a replica started late.
 */
export const SHARING_DEFAULTS: SharingSettings = {
  flushMs: 200,
  batchRecords: 100,
  batchChars: 256 * 1024,
  readMs: 500,
  readPage: 200,
  readPages: 50,
  streamMaxLength: 10_000,
  maxWaitingBatches: 100,
};

/** A stream entry larger than any batch a replica writes is not parsed. */
const MAX_ENTRY_CHARS = 4 * 1024 * 1024;
const BATCH_VERSION = 1;

// The edge: what another replica wrote, checked before it reaches the store. Bounds are a
// little above what the store's cleaning produces (parity-store.ts), so a sound event always fits.
const OUTCOMES = ['match', 'mismatch', 'noise', 'error', 'dropped', 'dry_run'] as const satisfies readonly Outcome[];
const MODES = ['translate', 'passthrough', 'compare', 'candidate'] as const satisfies readonly RouteMode[];
const KINDS = ['missing', 'extra', 'type', 'value', 'length'] as const satisfies readonly DifferenceKind[];
const VERDICTS = ['mismatch', 'noise', 'gap', 'tolerated'] as const satisfies readonly Verdict[];

const text = z.string().max(1024);
const label = z.string().max(1024);
const method = z.string().max(16);
const count = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** A JSON value whose text stays under `maxChars`. */
const jsonUpTo = (maxChars: number) => z.unknown().refine((value) => (JSON.stringify(value)?.length ?? 0) <= maxChars, { message: 'too large' });
const status = z.number().int().min(0).max(999).nullable();
const ms = z.number().min(0).nullable();

const differenceSchema = z.object({
  path: text,
  pattern: text,
  kind: z.enum(KINDS),
  verdict: z.enum(VERDICTS),
  legacy: jsonUpTo(8 * 1024).optional(),
  translated: jsonUpTo(8 * 1024).optional(),
});

const recordSchema = z.object({
  id: text,
  at: z.number().finite(),
  route: label,
  method,
  mode: z.enum(['compare', 'candidate']),
  request: text,
  outcome: z.enum(OUTCOMES),
  status: z.object({ legacy: status, translated: status }),
  differences: z.array(differenceSchema).max(50),
  tally: z.array(z.object({ pattern: text, kind: z.enum(KINDS), verdict: z.enum(VERDICTS), count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) })).max(600).optional(),
  ms: z.object({ legacy: ms, translated: ms }),
  dryRun: z
    .object({
      side: z.enum(['translated', 'legacy']),
      calls: z.array(z.object({ operation: text, variables: z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 16 * 1024) })).max(10),
    })
    .optional(),
  error: text.optional(),
});

const eventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('usage'), route: label, method, mode: z.enum(MODES), count }),
  z.object({ kind: z.literal('dropped'), route: label, method, count }),
  z.object({ kind: z.literal('matched'), route: label, method, mode: z.enum(['compare', 'candidate']), count, onSuccess: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  z.object({ kind: z.literal('record'), record: recordSchema }),
]);

const batchSchema = z.object({
  v: z.literal(BATCH_VERSION),
  from: z.string().regex(/^[0-9a-f]{16,64}$/),
  events: z.array(eventSchema).max(10_000),
});

// The schema's output is the store's event type, its record a ComparisonRecord (checked by the
// compiler here, so a change to either shows).
const asEvent = (event: z.infer<typeof eventSchema>): ParityEvent => event;

/** How many requests, comparisons or drops an event stands for. */
const weightOf = (event: ParityEvent): number => (event.kind === 'record' ? 1 : event.count);

type CountedEvent = Exclude<ParityEvent, { kind: 'record' }>;

/** One stream entry, and how many requests, comparisons and drops it stands for. */
interface Batch {
  data: string;
  weight: number;
}

/**
 * Events waiting to be published: the open batch (usage, drops and plain matches folded into
 * counts, records as JSON text), and the batches sealed when it filled, oldest first. A batch
 * is sealed the moment it fills, so none outgrows its bounds however fast events come; while
 * they cannot be sent (Redis not answering yet), at most `maxWaitingBatches` wait, the oldest
 * given up first.
 */
class Outbox {
  private counts = new Map<string, CountedEvent>();
  private records: string[] = [];
  private chars = 0;
  private weight = 0;
  private readonly sealed: Batch[] = [];

  constructor(
    private readonly settings: SharingSettings,
    private readonly from: string,
    private readonly givenUp: (weight: number) => void,
  ) {}

  add(event: ParityEvent): void {
    this.weight += weightOf(event);
    if (event.kind === 'record') {
      const json = JSON.stringify(event);
      this.records.push(json);
      this.chars += json.length + 1;
    } else {
      const slot = `${event.kind} ${event.method} ${event.route} ${event.kind === 'usage' || event.kind === 'matched' ? event.mode : ''}`;
      const known = this.counts.get(slot);
      if (known === undefined) this.counts.set(slot, { ...event });
      else {
        known.count += event.count;
        if (known.kind === 'matched' && event.kind === 'matched') known.onSuccess += event.onSuccess;
      }
    }
    if (this.records.length >= this.settings.batchRecords || this.chars >= this.settings.batchChars) this.seal();
  }

  /** Closes the open batch, if it holds anything, into the queue. */
  seal(): void {
    if (this.weight === 0) return;
    const events = [...[...this.counts.values()].map((event) => JSON.stringify(event)), ...this.records];
    this.sealed.push({ data: `{"v":${BATCH_VERSION},"from":"${this.from}","events":[${events.join(',')}]}`, weight: this.weight });
    this.counts = new Map();
    this.records = [];
    this.chars = 0;
    this.weight = 0;
    while (this.sealed.length > this.settings.maxWaitingBatches) this.givenUp(this.sealed.shift()?.weight ?? 0);
  }

  /** Sealed batches waiting. */
  get waiting(): number {
    return this.sealed.length;
  }

  /** The oldest sealed batch, taken out of the queue. */
  next(): Batch | undefined {
    return this.sealed.shift();
  }
}

/**
 * The store, shared through `shared` when it is Redis-backed; with LocalState (no REDIS_URL),
 * the store alone: no stream, no timer, no extra metrics.
 */
export function shareParityStore(store: LocalParityStore, shared: OpenedState, registry: Registry, settings: SharingSettings = SHARING_DEFAULTS): SharedParityStore {
  const state = shared.state;
  const alone: SharedParityStore = {
    noteUsage: (route, m, mode) => store.noteUsage(route, m, mode),
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
    help: "This replica's parity events that could not be published (Redis unavailable): counted in this replica's report only",
    registers,
  });
  const applied = new Counter({
    name: 'v2bridge_parity_events_applied_total',
    help: "Other replicas' parity events folded into this replica's report",
    registers,
  });
  const rejected = new Counter({
    name: 'v2bridge_parity_batches_rejected_total',
    help: 'Parity stream entries not applied because they did not parse or passed a bound',
    registers,
  });

  const replicaId = randomBytes(12).toString('hex');
  const stream = shared.keyOf('parity', 'events');
  const outbox = new Outbox(settings, replicaId, (weight) => unshared.inc(weight));

  /** `final`: nothing waits any more (shutdown). */
  async function publish(final: boolean): Promise<void> {
    // Until Redis first answers (start-up), batches wait, as many as the outbox keeps.
    if (state.status().state === 'connecting' && !final) return;
    outbox.seal();
    for (let batch = outbox.next(); batch !== undefined; batch = outbox.next()) {
      if (state.status().state !== 'shared') {
        unshared.inc(batch.weight);
        continue;
      }
      try {
        await state.append(stream, batch.data, settings.streamMaxLength);
      } catch {
        // The degrading state answers every call; kept for any other SharedState.
        unshared.inc(batch.weight);
        continue;
      }
      // A failed append degrades the state and is dropped there without an error: seen here.
      if (state.status().state === 'shared') published.inc(batch.weight);
      else unshared.inc(batch.weight);
    }
  }

  // Appends run one after another: a flush returns once what was pending when it was called
  // is in the stream (or counted unshared), even if a timer's append had already taken it.
  let publishing: Promise<void> = Promise.resolve();
  function flush(final = false): Promise<void> {
    publishing = publishing.then(() => publish(final)).catch(() => undefined);
    return publishing;
  }

  // A sealed batch is sent at once, by one publish at a time (it drains the queue as it grows).
  let kicked = false;
  store.onLocalEvent((event) => {
    outbox.add(event);
    if (outbox.waiting === 0 || kicked) return;
    kicked = true;
    void flush().finally(() => {
      kicked = false;
    });
  });

  // This replica's own batches, known by how it writes them, are skipped without being parsed.
  const ownBatch = `{"v":${BATCH_VERSION},"from":"${replicaId}",`;
  function apply(data: string): void {
    if (data.startsWith(ownBatch)) return;
    let parsed: unknown;
    try {
      if (data.length > MAX_ENTRY_CHARS) throw new RangeError('entry too large');
      parsed = JSON.parse(data);
    } catch {
      rejected.inc();
      return;
    }
    const batch = batchSchema.safeParse(parsed);
    if (!batch.success) {
      rejected.inc();
      return;
    }
    if (batch.data.from === replicaId) return;
    for (const event of batch.data.events) {
      store.applyRemote(asEvent(event));
      applied.inc(weightOf(event));
    }
  }

  let readFrom = '0';
  async function readAll(): Promise<void> {
    for (let page = 0; page < settings.readPages; page++) {
      let entries;
      try {
        entries = await state.readAfter(stream, readFrom, settings.readPage);
      } catch {
        return;
      }
      for (const entry of entries) {
        readFrom = entry.id;
        apply(entry.data);
      }
      if (entries.length < settings.readPage) return;
    }
  }

  // Reads run one after another: a report's read starts once the one before it is done, so it
  // sees everything appended before it was asked for, and no entry is applied twice.
  let reading: Promise<void> = Promise.resolve();
  let queued = 0;
  function refresh(): Promise<void> {
    queued++;
    reading = reading
      .then(readAll)
      .catch(() => undefined)
      .finally(() => void queued--);
    return reading;
  }

  const flushTimer = setInterval(() => void flush(), settings.flushMs);
  const readTimer = setInterval(() => {
    if (queued === 0) void refresh();
  }, settings.readMs);
  flushTimer.unref();
  readTimer.unref();

  return {
    ...alone,
    refresh,
    flush: () => flush(),
    async close() {
      clearInterval(flushTimer);
      clearInterval(readTimer);
      await flush(true);
      await reading;
    },
  };
}
