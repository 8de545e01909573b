import { OTHER_PATTERNS } from './parity-clean.ts';
import { agreedOnSuccess, patternCountsOf } from './parity-recording.ts';
import { SERIES_BUCKET_MS } from './parity-series.ts';
import type { ParityEvent } from './parity-event.ts';
import { BATCH_VERSION, weightOf } from './parity-wire.ts';
import type { SharingSettings } from './sharing-settings.ts';
import type { ComparisonRecord, PatternTally } from './types.ts';

/**
 * The publishing side of the shared parity store (shared-parity.ts): this replica's events
 * gathered into one open batch between two publishes, bounded however fast they come. The
 * Outbox class below says how; a batch it closes is one stream entry in parity-wire.ts's format,
 * carrying how many requests, comparisons and drops it stands for, so what cannot be published
 * is counted exactly.
 */

type CountedEvent = Exclude<ParityEvent, { kind: 'record' | 'folded' }>;
type FoldedEvent = Extract<ParityEvent, { kind: 'folded' }>;

/** What else tells counted events of one route and method apart (the store's labels: bounded). */
function slotOf(event: CountedEvent): string {
  // Matches of different hours stay apart: the time series charts them by hour (parity-series.ts).
  if (event.kind === 'matched') return `${event.mode} ${event.at === undefined ? '' : Math.floor(event.at / SERIES_BUCKET_MS)}`;
  if (event.kind === 'usage') return event.mode;
  if (event.kind === 'caller') return `${event.fingerprint}\n${event.agent}`;
  return '';
}

/** One stream entry, and how many requests, comparisons and drops it stands for. */
export interface Batch {
  data: string;
  weight: number;
}

/**
 * Events waiting to be published: one open batch, taken whole by each publish. Usage, drops and
 * plain matches are folded into counts; records are kept as JSON text up to the batch's bound,
 * and past it folded into counts per route, method, mode, outcome and hour with their pattern counts
 * (bounded too, the rest under OTHER_PATTERNS): however fast events come, and however long Redis
 * takes to answer, the batch stays within its bound and no count is lost.
 */
export class Outbox {
  private counts = new Map<string, CountedEvent>();
  private folded = new Map<string, { event: FoldedEvent; rows: Map<string, PatternTally> }>();
  private records: string[] = [];
  private recordChars = 0;
  private tallyChars = 0;
  private weight = 0;
  private seq = 0;

  private readonly settings: SharingSettings;
  private readonly from: string;

  constructor(
    settings: SharingSettings,
    from: string,
  ) {
    this.settings = settings;
    this.from = from;
  }

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
      const slot = `${event.kind} ${event.method} ${event.route} ${slotOf(event)}`;
      const known = this.counts.get(slot);
      if (known === undefined) this.counts.set(slot, { ...event });
      else {
        known.count += event.count;
        if (known.kind === 'matched' && event.kind === 'matched') {
          known.onSuccess += event.onSuccess;
          if (event.at !== undefined) known.at = Math.max(known.at ?? event.at, event.at);
        }
      }
    }
  }

  private fold(record: ComparisonRecord): void {
    this.foldCounts(record, 1, agreedOnSuccess(record.outcome, record.status.legacy) ? 1 : 0, record.at, patternCountsOf(record));
  }

  private foldCounts(of: Pick<FoldedEvent, 'route' | 'method' | 'mode' | 'outcome'>, count: number, onSuccess: number, at: number, tally: readonly PatternTally[]): void {
    // By hour too, so the time series charts folded records in their own hour.
    const slot = `${of.outcome} ${of.method} ${of.route} ${of.mode} ${Math.floor(at / SERIES_BUCKET_MS)}`;
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
    // Caller events weigh nothing (their requests' usage events count them), yet are published.
    if (this.weight === 0 && this.counts.size === 0) return undefined;
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
