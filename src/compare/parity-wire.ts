import { z } from 'zod';
import { AGENT_CHARS } from './parity-callers.ts';
import type { ParityEvent } from './parity-event.ts';
import type { RouteMode } from '../ops/route-modes.ts';
import type { DifferenceKind, Outcome, Verdict } from './types.ts';

/**
 * The parity stream's wire format (shared-parity.ts): a batch is one stream entry,
 * `{"v":1,"from":<replica id>,"seq":<n>,"events":[...]}`, each event a ParityEvent as the store
 * emits it. What another replica wrote is checked here before it reaches the store: the
 * envelope first (parseBatch), then each event (parseEvent), against bounds a little above what
 * the store's cleaning produces (parity-clean.ts), so a sound event always fits and nothing
 * unbounded gets in.
 */

/** A stream entry larger than any batch a replica writes is not parsed. */
const MAX_ENTRY_CHARS = 4 * 1024 * 1024;
export const BATCH_VERSION = 1;

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

/** An epoch-ms time a Date can hold (a replica's `at`): anything else would break the page's chart. */
const epochMs = z.number().min(0).max(8.64e15);

const recordSchema = z.object({
  id: text,
  at: epochMs,
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
  z.object({
    kind: z.literal('matched'),
    route: label,
    method,
    mode: z.enum(['compare', 'candidate']),
    count,
    onSuccess: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    at: epochMs.optional(),
  }),
  z.object({ kind: z.literal('caller'), fingerprint: z.string().max(32), agent: z.string().max(AGENT_CHARS + 64), route: label, method, count }),
  z.object({ kind: z.literal('record'), record: recordSchema }),
  z.object({
    kind: z.literal('folded'),
    route: label,
    method,
    mode: z.enum(['compare', 'candidate']),
    outcome: z.enum(OUTCOMES),
    count,
    onSuccess: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    at: epochMs,
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

/**
 * How many requests, comparisons or drops an event stands for. A caller event stands for none:
 * its requests are counted by their usage events already.
 */
export const weightOf = (event: ParityEvent): number => (event.kind === 'record' ? 1 : event.kind === 'caller' ? 0 : event.count);

/** A stream entry's envelope, or undefined when it is too large, not JSON, or not a batch. Its events are still unchecked. */
export function parseBatch(data: string): z.infer<typeof batchSchema> | undefined {
  let parsed: unknown;
  try {
    if (data.length > MAX_ENTRY_CHARS) throw new RangeError('entry too large');
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  const batch = batchSchema.safeParse(parsed);
  return batch.success ? batch.data : undefined;
}

/** One event of a batch, checked; undefined when it is not a sound ParityEvent. */
export function parseEvent(raw: unknown): ParityEvent | undefined {
  const event = eventSchema.safeParse(raw);
  return event.success ? asEvent(event.data) : undefined;
}
