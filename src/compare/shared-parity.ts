import { randomBytes } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { z } from 'zod';
import type { OpenedState } from '../state/open.ts';
import { agreedOnSuccess, OTHER_PATTERNS, patternCountsOf, type LocalParityStore, type ParityEvent, type ParityStore } from './parity-store.ts';
import type { ComparisonRecord, DifferenceKind, Outcome, PatternTally, RouteMode, Verdict } from './types.ts';

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

export interface SharingSettings {
  /** Longest an event waits before it is published: one batch per `flushMs` at most, while Redis keeps up. */
  flushMs: number;
  /** Full records a batch carries, at most `batchRecords` and `batchChars` of JSON; later ones are folded into counts. */
  batchRecords: number;
  batchChars: number;
  /** JSON of the pattern counts of a batch's folded records; past it, counted under OTHER_PATTERNS. */
  foldedTallyChars: number;
  /** How often the other replicas' events are read. */
  readMs: number;
  /** Stream entries per read command, and commands per read (the next read goes on). */
  readPage: number;
  readPages: number;
  /** Batches the stream keeps (MAXLEN ~): what a replica started late, or lagging, can still see. */
  streamMaxLength: number;
}

/**
 * The Redis footprint, bounded: a batch holds at most `batchChars` of full records (48 KB) and
 * `foldedTallyChars` of folded pattern counts (16 KB) plus a row of about 200 bytes per route,
 * method, mode and outcome seen in its window (counts), so about 64 KB at most with the routes
 * of one busy window. MAXLEN ~1000 keeps 1000 to 1100 entries (Redis trims whole nodes of 100):
 * at most about 70 MB under sustained mismatches on every replica, a few KB per batch (a few
 * MB) when routes match, and nothing while idle. At one batch per 200 ms per replica, 1000
 * batches are 100 s of history with two busy replicas, hours when they are quiet. Full records
 * beyond 50 per 200 ms (250/s per replica) travel as counts: a report shows at most
 * PARITY_RECORDS_MAX (1000) recent records anyway.
 */
export const SHARING_DEFAULTS: SharingSettings = {
  flushMs: 200,
  batchRecords: 50,
  batchChars: 48 * 1024,
  foldedTallyChars: 16 * 1024,
  readMs: 500,
  readPage: 20,
  readPages: 500,
  streamMaxLength: 1000,
};

/** A stream entry larger than any batch a replica writes is not parsed. */
const MAX_ENTRY_CHARS = 4 * 1024 * 1024;
const BATCH_VERSION = 1;
/** Events validated or applied between two yields to the event loop (each a fraction of a ms). */
const EVENTS_PER_SLICE = 20;
/** The epoch lives as long as the stream in practice; renewed (same value) hourly by the readers. */
const EPOCH_TTL_MS = 30 * 24 * 3600_000;
const EPOCH_RENEW_MS = 3600_000;
/** Writers whose last sequence number is remembered (replicas, a new id per restart). */
const MAX_WRITERS = 1000;

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

const tallyRow = z.object({ pattern: text, kind: z.enum(KINDS), verdict: z.enum(VERDICTS), count: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });

const eventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('usage'), route: label, method, mode: z.enum(MODES), count }),
  z.object({ kind: z.literal('dropped'), route: label, method, count }),
  z.object({ kind: z.literal('matched'), route: label, method, mode: z.enum(['compare', 'candidate']), count, onSuccess: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  z.object({ kind: z.literal('record'), record: recordSchema }),
  z.object({
    kind: z.literal('folded'),
    route: label,
    method,
    mode: z.enum(['compare', 'candidate']),
    outcome: z.enum(OUTCOMES),
    count,
    onSuccess: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    at: z.number().finite(),
    tally: z.array(tallyRow).max(2000),
  }),
]);

/** The envelope; its events are checked one at a time (yielding between them). */
const batchSchema = z.object({
  v: z.literal(BATCH_VERSION),
  from: z.string().regex(/^[0-9a-f]{16,64}$/),
  /** Absent from batches of replicas older than the sequence numbers. */
  seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  events: z.array(z.unknown()).max(10_000),
});

// The schema's output is the store's event type, its record a ComparisonRecord (checked by the
// compiler here, so a change to either shows).
const asEvent = (event: z.infer<typeof eventSchema>): ParityEvent => event;

/** How many requests, comparisons or drops an event stands for. */
const weightOf = (event: ParityEvent): number => (event.kind === 'record' ? 1 : event.count);

type CountedEvent = Exclude<ParityEvent, { kind: 'record' | 'folded' }>;
type FoldedEvent = Extract<ParityEvent, { kind: 'folded' }>;

/** One stream entry, and how many requests, comparisons and drops it stands for. */
interface Batch {
  data: string;
  weight: number;
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Events waiting to be published: one open batch, taken whole by each publish. Usage, drops and
 * plain matches are folded into counts; records are kept as JSON text up to the batch's bound,
 * and past it folded into counts per route, method, mode and outcome with their pattern counts
 * (bounded too, the rest under OTHER_PATTERNS): however fast events come, and however long Redis
 * takes to answer, the batch stays within its bound and no count is lost.
 */
class Outbox {
  private counts = new Map<string, CountedEvent>();
  private folded = new Map<string, { event: FoldedEvent; rows: Map<string, PatternTally> }>();
  private records: string[] = [];
  private recordChars = 0;
  private tallyChars = 0;
  private weight = 0;
  private seq = 0;

  constructor(
    private readonly settings: SharingSettings,
    private readonly from: string,
  ) {}

  add(event: ParityEvent): void {
    this.weight += weightOf(event);
    if (event.kind === 'record') {
      const json = JSON.stringify(event);
      if (this.records.length < this.settings.batchRecords && this.recordChars + json.length <= this.settings.batchChars) {
        this.records.push(json);
        this.recordChars += json.length + 1;
      } else this.fold(event.record);
    } else if (event.kind === 'folded') {
      // The store never emits these; folded again here should it ever.
      this.foldCounts(event, event.count, event.onSuccess, event.at, event.tally);
    } else {
      const slot = `${event.kind} ${event.method} ${event.route} ${event.kind === 'usage' || event.kind === 'matched' ? event.mode : ''}`;
      const known = this.counts.get(slot);
      if (known === undefined) this.counts.set(slot, { ...event });
      else {
        known.count += event.count;
        if (known.kind === 'matched' && event.kind === 'matched') known.onSuccess += event.onSuccess;
      }
    }
  }

  private fold(record: ComparisonRecord): void {
    this.foldCounts(record, 1, agreedOnSuccess(record.outcome, record.status.legacy) ? 1 : 0, record.at, patternCountsOf(record));
  }

  private foldCounts(of: Pick<FoldedEvent, 'route' | 'method' | 'mode' | 'outcome'>, count: number, onSuccess: number, at: number, tally: readonly PatternTally[]): void {
    const slot = `${of.outcome} ${of.method} ${of.route} ${of.mode}`;
    let folded = this.folded.get(slot);
    if (folded === undefined) {
      folded = { event: { kind: 'folded', route: of.route, method: of.method, mode: of.mode, outcome: of.outcome, count: 0, onSuccess: 0, at, tally: [] }, rows: new Map() };
      this.folded.set(slot, folded);
    }
    folded.event.count += count;
    folded.event.onSuccess += onSuccess;
    folded.event.at = Math.max(folded.event.at, at);
    for (const row of tally) {
      let rowKey = `${row.kind} ${row.verdict} ${row.pattern}`;
      let known = folded.rows.get(rowKey);
      if (known === undefined) {
        const chars = row.pattern.length + 64;
        // Past the bound, one row per kind and verdict (at most 20 a slot) takes the rest.
        if (this.tallyChars + chars > this.settings.foldedTallyChars) rowKey = `${row.kind} ${row.verdict} ${OTHER_PATTERNS}`;
        else this.tallyChars += chars;
        known = folded.rows.get(rowKey);
        if (known === undefined) {
          known = { pattern: rowKey === `${row.kind} ${row.verdict} ${row.pattern}` ? row.pattern : OTHER_PATTERNS, kind: row.kind, verdict: row.verdict, count: 0 };
          folded.rows.set(rowKey, known);
        }
      }
      known.count += row.count;
    }
  }

  /** The open batch, closed and taken (undefined when empty); the next one opens. */
  take(): Batch | undefined {
    if (this.weight === 0) return undefined;
    const events = [
      ...[...this.counts.values()].map((event) => JSON.stringify(event)),
      ...[...this.folded.values()].map(({ event, rows }) => JSON.stringify({ ...event, tally: [...rows.values()] })),
      ...this.records,
    ];
    const batch = { data: `{"v":${BATCH_VERSION},"from":"${this.from}","seq":${this.seq},"events":[${events.join(',')}]}`, weight: this.weight };
    this.seq += 1;
    this.counts = new Map();
    this.folded = new Map();
    this.records = [];
    this.recordChars = 0;
    this.tallyChars = 0;
    this.weight = 0;
    return batch;
  }
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
  const missed = new Counter({
    name: 'v2bridge_parity_batches_missed_total',
    help: "Other replicas' parity batches this replica never read (trimmed from the stream while it lagged, or never stored), seen by their sequence numbers",
    registers,
  });
  const resets = new Counter({
    name: 'v2bridge_parity_stream_resets_total',
    help: 'Times the parity stream was found new (Redis restarted or failed over empty): reading started again from its start',
    registers,
  });

  const replicaId = randomBytes(12).toString('hex');
  const stream = shared.keyOf('parity', 'events');
  const epochKey = shared.keyOf('parity', 'epoch');
  const outbox = new Outbox(settings, replicaId);
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

  // This replica's own batches, known by how it writes them, are skipped without being parsed.
  const ownBatch = `{"v":${BATCH_VERSION},"from":"${replicaId}",`;
  /** Last sequence number read per writer: a jump is batches this replica missed. */
  const lastSeq = new Map<string, number>();

  function noteSeq(from: string, seq: number | undefined): void {
    if (seq === undefined) return;
    const previous = lastSeq.get(from);
    if (previous !== undefined && seq > previous + 1) missed.inc(seq - previous - 1);
    lastSeq.delete(from);
    lastSeq.set(from, seq);
    if (lastSeq.size > MAX_WRITERS) lastSeq.delete(lastSeq.keys().next().value ?? '');
  }

  /** One entry, checked whole before any of it is applied, yielding every few events. */
  async function apply(data: string): Promise<void> {
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
    noteSeq(batch.data.from, batch.data.seq);
    const events: ParityEvent[] = [];
    for (const raw of batch.data.events) {
      const event = eventSchema.safeParse(raw);
      if (!event.success) {
        rejected.inc();
        return;
      }
      events.push(asEvent(event.data));
      if (events.length % EVENTS_PER_SLICE === 0) await yieldToLoop();
    }
    for (const [index, event] of events.entries()) {
      store.applyRemote(event);
      applied.inc(weightOf(event));
      if ((index + 1) % EVENTS_PER_SLICE === 0) await yieldToLoop();
    }
  }

  let readFrom = '0';
  let epoch: string | undefined;
  let epochRenewedAt = 0;

  /**
   * Whether the stream is still the one this replica was reading: its epoch key (set by the
   * first reader, lost with the stream) unchanged. A new one starts reading at '0'. False
   * while Redis is not answering (memory's answers say nothing about the stream).
   */
  async function sameStream(): Promise<boolean> {
    const before = state.status();
    if (before.state !== 'shared') return false;
    let current = await state.get(epochKey);
    if (current === undefined) {
      await state.set(epochKey, randomBytes(12).toString('hex'), EPOCH_TTL_MS, { onlyIfAbsent: true });
      current = await state.get(epochKey);
      epochRenewedAt = Date.now();
    } else if (Date.now() - epochRenewedAt > EPOCH_RENEW_MS) {
      await state.set(epochKey, current, EPOCH_TTL_MS);
      epochRenewedAt = Date.now();
    }
    const after = state.status();
    if (current === undefined || after.state !== 'shared' || after.fallbacks !== before.fallbacks) return false;
    if (epoch !== undefined && current !== epoch) {
      readFrom = '0';
      lastSeq.clear();
      resets.inc();
    }
    epoch = current;
    return true;
  }

  async function readAll(): Promise<void> {
    if (!(await sameStream())) return;
    for (let page = 0; page < settings.readPages; page++) {
      const entries = await state.readAfter(stream, readFrom, settings.readPage);
      for (const entry of entries) {
        await apply(entry.data);
        readFrom = entry.id;
        await yieldToLoop();
      }
      if (entries.length < settings.readPage) return;
    }
  }

  // Reads one after another, concurrent callers sharing the one queued: a report's read starts
  // once the one before it is done, so it sees everything appended before it was asked for, and
  // no entry is applied twice.
  const read = serialized(readAll);
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
