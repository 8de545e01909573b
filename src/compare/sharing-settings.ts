/**
 * How the parity store is shared across replicas (shared-parity.ts): its batch, read and stream
 * bounds. Apart from the store that uses them, so its parts (parity-outbox.ts,
 * parity-stream-reader.ts) read them without importing the store.
 */
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
