import { randomBytes } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { OpenedState } from '../state/open.ts';
import type { ParityEvent } from './parity-event.ts';
import type { LocalParityStore } from './parity-store.ts';
import { BATCH_VERSION, parseBatch, parseEvent, weightOf } from './parity-wire.ts';
import type { SharingSettings } from './sharing-settings.ts';

/**
 * The reading side of the shared parity store (shared-parity.ts): the other replicas' batches,
 * read from the Redis stream after the last entry read, checked (parity-wire.ts) and folded into
 * this replica's store a few events at a time, yielding to the event loop between them. It also
 * tells a stream Redis lost (its epoch key gone with it: reading starts again at '0') and
 * batches this replica never read (a jump in a writer's sequence numbers), and counts both.
 * Callers serialise readAll (shared-parity.ts): one read at a time, so no entry is applied twice.
 */

/** Events validated or applied between two yields to the event loop (each a fraction of a ms). */
const EVENTS_PER_SLICE = 20;
/** The epoch lives as long as the stream in practice; renewed (same value) hourly by the readers. */
const EPOCH_TTL_MS = 30 * 24 * 3600_000;
const EPOCH_RENEW_MS = 3600_000;
/** Writers whose last sequence number is remembered (replicas, a new id per restart). */
const MAX_WRITERS = 1000;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ParityStreamReader {
  private readonly applied: Counter;
  private readonly rejected: Counter;
  private readonly missed: Counter;
  private readonly resets: Counter;
  private readonly stream: string;
  private readonly epochKey: string;
  /** This replica's own batches, known by how it writes them, are skipped without being parsed. */
  private readonly ownBatch: string;
  /** Last sequence number read per writer: a jump is batches this replica missed. */
  private readonly lastSeq = new Map<string, number>();
  private readFrom = '0';
  private epoch: string | undefined;
  private epochRenewedAt = 0;

  private readonly store: LocalParityStore;
  private readonly shared: OpenedState;
  private readonly settings: SharingSettings;
  private readonly replicaId: string;

  constructor(
    store: LocalParityStore,
    shared: OpenedState,
    registry: Registry,
    settings: SharingSettings,
    replicaId: string,
  ) {
    this.store = store;
    this.shared = shared;
    this.settings = settings;
    this.replicaId = replicaId;
    const registers = [registry];
    this.applied = new Counter({
      name: 'v2bridge_parity_events_applied_total',
      help: "Other replicas' parity events folded into this replica's report",
      registers,
    });
    this.rejected = new Counter({
      name: 'v2bridge_parity_batches_rejected_total',
      help: 'Parity stream entries not applied because they did not parse or passed a bound',
      registers,
    });
    this.missed = new Counter({
      name: 'v2bridge_parity_batches_missed_total',
      help: "Other replicas' parity batches this replica never read (trimmed from the stream while it lagged, or never stored), seen by their sequence numbers",
      registers,
    });
    this.resets = new Counter({
      name: 'v2bridge_parity_stream_resets_total',
      help: 'Times the parity stream was found new (Redis restarted or failed over empty): reading started again from its start',
      registers,
    });
    this.stream = shared.keyOf('parity', 'events');
    this.epochKey = shared.keyOf('parity', 'epoch');
    this.ownBatch = `{"v":${BATCH_VERSION},"from":"${replicaId}",`;
  }

  /** Every entry after the last one read, up to `readPages` pages of `readPage` entries. */
  async readAll(): Promise<void> {
    if (!(await this.sameStream())) return;
    const { state } = this.shared;
    for (let page = 0; page < this.settings.readPages; page++) {
      const entries = await state.readAfter(this.stream, this.readFrom, this.settings.readPage);
      for (const entry of entries) {
        await this.apply(entry.data);
        this.readFrom = entry.id;
        await yieldToLoop();
      }
      if (entries.length < this.settings.readPage) return;
    }
  }

  private noteSeq(from: string, seq: number | undefined): void {
    if (seq === undefined) return;
    const previous = this.lastSeq.get(from);
    if (previous !== undefined && seq > previous + 1) this.missed.inc(seq - previous - 1);
    this.lastSeq.delete(from);
    this.lastSeq.set(from, seq);
    if (this.lastSeq.size > MAX_WRITERS) this.lastSeq.delete(this.lastSeq.keys().next().value ?? '');
  }

  /** One entry, checked whole before any of it is applied, yielding every few events. */
  private async apply(data: string): Promise<void> {
    if (data.startsWith(this.ownBatch)) return;
    const batch = parseBatch(data);
    if (batch === undefined) {
      this.rejected.inc();
      return;
    }
    if (batch.from === this.replicaId) return;
    this.noteSeq(batch.from, batch.seq);
    const events: ParityEvent[] = [];
    for (const raw of batch.events) {
      const event = parseEvent(raw);
      if (event === undefined) {
        this.rejected.inc();
        return;
      }
      events.push(event);
      if (events.length % EVENTS_PER_SLICE === 0) await yieldToLoop();
    }
    for (const [index, event] of events.entries()) {
      this.store.applyRemote(event);
      this.applied.inc(weightOf(event));
      if ((index + 1) % EVENTS_PER_SLICE === 0) await yieldToLoop();
    }
  }

  /**
   * Whether the stream is still the one this replica was reading: its epoch key (set by the
   * first reader, lost with the stream) unchanged. A new one starts reading at '0'. False
   * while Redis is not answering (memory's answers say nothing about the stream).
   */
  private async sameStream(): Promise<boolean> {
    const { state } = this.shared;
    const before = state.status();
    if (before.state !== 'shared') return false;
    let current = await state.get(this.epochKey);
    if (current === undefined) {
      await state.set(this.epochKey, randomBytes(12).toString('hex'), EPOCH_TTL_MS, { onlyIfAbsent: true });
      current = await state.get(this.epochKey);
      this.epochRenewedAt = Date.now();
    } else if (Date.now() - this.epochRenewedAt > EPOCH_RENEW_MS) {
      await state.set(this.epochKey, current, EPOCH_TTL_MS);
      this.epochRenewedAt = Date.now();
    }
    const after = state.status();
    if (current === undefined || after.state !== 'shared' || after.fallbacks !== before.fallbacks) return false;
    if (this.epoch !== undefined && current !== this.epoch) {
      this.readFrom = '0';
      this.lastSeq.clear();
      this.resets.inc();
    }
    this.epoch = current;
    return true;
  }
}
