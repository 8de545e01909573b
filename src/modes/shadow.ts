import { createHash, randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { redactKeys } from '../ops/redact.ts';
import type { AnswerSnapshot, ComparisonRecord, JudgedDifference } from '../compare/types.ts';

/**
 * Shadow work: what compare and candidate modes do off the caller's path, and the bounds on it.
 *
 * - Sampling is consistent: a (caller, route) pair is in or out for good, by a hash of the
 *   caller's identity (an HMAC of the key, never the key) and the route.
 * - Caller-first: callers share the event loop with shadow work, so a job is started only when
 *   the loop has room for it. A job is dropped (and counted, as `dropped`) when
 *     1. the queue is full: COMPARE_CONCURRENCY jobs running and COMPARE_QUEUE_MAX waiting; or
 *     2. at the moment it would start (on submit, or when a slot frees up for a waiting job),
 *        the loop is under load: its recent utilisation (src/modes/loop-gauge.ts, ~200 ms
 *        average) is above COMPARE_MAX_LOOP_UTILISATION (default 0.5; 1 turns this check off)
 *        AND callers overlap: one of the last 8 requests to reach the gateway's HTTP server
 *        came while another was in flight, or in the same turn of the loop as another (they had
 *        waited for the loop together) (src/modes/loop-gauge.ts, createCallerGauge).
 *   Busy alone is not load: one sequential client keeps the loop busy with its own requests
 *   (utilisation near 1) while nobody waits behind it, so its requests are compared, at the cost
 *   of its own next answers sharing the loop with that work. Overlapping callers alone are not
 *   load either: callers waiting on NerdGraph leave the loop idle. Requests made in process
 *   (`app.request()`) are not counted: until a caller over HTTP is seen, utilisation decides alone.
 *   The mode strategy asks first (hasRoom) and, when there is no room, serves the request as the mode's
 *   plain side (nothing captured) and counts its shadow work dropped; otherwise it submits the
 *   job once the caller's answer has finished, on a later turn of the loop (setImmediate), so
 *   shadow work never holds up the answer it compares.
 */
export function sampledIn(identity: string, route: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const digest = createHash('sha256').update(identity).update('\0').update(route).digest();
  return digest.readUInt32BE(0) / 2 ** 32 < rate;
}

export interface ShadowQueue {
  /**
   * Runs `job` now or when a slot frees up, if the loop has room for it then; otherwise the job
   * is dropped and `onDropped` called (once). False when it was dropped on the spot.
   */
  submit(job: () => Promise<void>, onDropped?: () => void): boolean;
  /**
   * Would a job submitted now be taken? Asked before a compared request is served: when not,
   * the request is served plainly (nothing captured) and its shadow work counted dropped.
   */
  hasRoom(): boolean;
  /** Running and waiting jobs, for tests and metrics. */
  readonly pending: number;
}

export interface ShadowQueueOptions {
  concurrency: number;
  queueMax: number;
  /** The event loop's recent utilisation, 0 to 1 (src/modes/loop-gauge.ts); absent: not checked. */
  utilisation?: () => number;
  /** Above this utilisation a job is dropped instead of started; 1 or more: never. */
  maxUtilisation?: number;
  /**
   * Are callers waiting for the loop (src/modes/loop-gauge.ts)? Asked only when the utilisation
   * is over the bound; a job is dropped only if they are. Absent: the utilisation decides alone.
   */
  callersWaiting?: () => boolean;
}

interface Waiting {
  job: () => Promise<void>;
  onDropped: (() => void) | undefined;
}

export function createShadowQueue(options: ShadowQueueOptions): ShadowQueue {
  const waiting: Waiting[] = [];
  let running = 0;
  const max = options.maxUtilisation ?? 1;
  const gauge = options.utilisation;
  const callersWaiting = options.callersWaiting ?? ((): boolean => true);
  const loopBusy = (): boolean => gauge !== undefined && max < 1 && gauge() > max && callersWaiting();
  const start = (job: () => Promise<void>): void => {
    running++;
    // A job records its own failures; anything escaping is a bug that must not kill the process.
    void job()
      .catch(() => undefined)
      .finally(() => {
        running--;
        startWaiting();
      });
  };
  /** A freed slot: the next waiting job starts if the loop has room, else every waiting job is dropped. */
  const startWaiting = (): void => {
    const next = waiting.shift();
    if (next === undefined) return;
    if (!loopBusy()) {
      start(next.job);
      return;
    }
    next.onDropped?.();
    for (const rest of waiting.splice(0)) rest.onDropped?.();
  };
  return {
    submit(job, onDropped) {
      if (running < options.concurrency) {
        if (loopBusy()) {
          onDropped?.();
          return false;
        }
        start(job);
        return true;
      }
      if (waiting.length >= options.queueMax) {
        onDropped?.();
        return false;
      }
      waiting.push({ job, onDropped });
      return true;
    },
    hasRoom() {
      return (running < options.concurrency || waiting.length < options.queueMax) && !loopBusy();
    },
    get pending() {
      return running + waiting.length;
    },
  };
}

/** A body as the diff engine reads it: text, decoded from the content encoding it came in. */
/**
 * `maxBytes` bounds the decoded text too: a few hundred compressed kilobytes can inflate to
 * gigabytes (zlib throws past maxOutputLength, and the comparison is recorded as an error).
 */
export function decodeBody(bytes: Uint8Array, contentEncoding: string | null, maxBytes: number): string {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bound = { maxOutputLength: maxBytes };
  const decoded =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? gunzipSync(buffer, bound)
      : encoding === 'deflate'
        ? inflateSync(buffer, bound)
        : encoding === 'br'
          ? brotliDecompressSync(buffer, bound)
          : buffer;
  return decoded.toString('utf8');
}

export function snapshotOf(response: Pick<Response, 'status' | 'headers'>, bytes: Uint8Array, ms: number, maxBytes: number): AnswerSnapshot {
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: decodeBody(bytes, response.headers.get('content-encoding'), maxBytes),
    link: response.headers.get('link'),
    ms,
  };
}

/** Reads a whole (shadow) answer: the snapshot of it, timed from `started` (performance.now()). */
export async function readSnapshot(response: Response, started: number, maxBytes: number): Promise<AnswerSnapshot> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body) {
    // Read with the same bound as the caller's answer: a shadow answer may not grow without limit either.
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        await response.body.cancel().catch(() => undefined);
        throw new Error(`too large to compare (over ${maxBytes} bytes)`);
      }
      chunks.push(chunk);
    }
  }
  return snapshotOf(response, Buffer.concat(chunks), performance.now() - started, maxBytes);
}

const MAX_DIFFERENCES = 50;
const MAX_TEXT = 200;

/**
 * The record as stored: every string masked (the caller's key wherever it appears, whatever its
 * shape, and anything key-shaped), differences capped, values shortened.
 */
export function sealRecord(record: Omit<ComparisonRecord, 'id'>, apiKey: string | undefined): ComparisonRecord {
  const mask = (text: string): string => redactKeys(apiKey ? text.split(apiKey).join('[redacted]') : text);
  const clean = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return mask(value.length > MAX_TEXT * 4 ? `${value.slice(0, MAX_TEXT * 4)}...` : value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > 12) return '[deep]';
    if (Array.isArray(value)) return value.map((item) => clean(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [mask(key), clean(item, depth + 1)]));
  };
  const differences: JudgedDifference[] = record.differences.slice(0, MAX_DIFFERENCES);
  // The record's own shape, every string in it masked: a structural copy of a ComparisonRecord.
  return clean({ id: randomUUID(), ...record, differences }, 0) as ComparisonRecord;
}

/** A one-line reason for a failed side, for the record (masked by sealRecord). */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, MAX_TEXT);
  return `thrown ${typeof error}`;
}
