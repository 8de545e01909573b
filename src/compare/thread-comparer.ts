import { Worker } from 'node:worker_threads';
import type { Comparison } from './diff.ts';
import { secretTagKey } from './secrets.ts';
import type { Threshold } from './thresholds.ts';
import type { AnswerSnapshot } from './types.ts';

/**
 * The diff engine run on a worker thread: compare mode's judgement of each shadow request
 * (decoding both answers, masking secrets, walking them, judging every difference) is the
 * largest part of its shadow work, CPU-bound and pure, so on a second core it no longer delays
 * the callers' next requests. The thread starts with the first comparison, is held (ref'd) only
 * while comparisons are pending, and is started again after a crash, no sooner than
 * `restartBackoffMs` after it (a thread that cannot start, a broken build, would otherwise be
 * started again by every compared request). A comparison it never answers fails after
 * `timeoutMs`, and the thread is replaced.
 *
 * Bounded by its callers: the shadow queue (COMPARE_CONCURRENCY) runs at most that many
 * comparisons at once, so at most that many are pending here. Its heap has a bound of its own
 * (`heapMb`): a judgement too large for it fails that thread, not the gateway.
 */

export interface DiffInput {
  legacy: AnswerSnapshot;
  legacyAgain?: AnswerSnapshot;
  translated: AnswerSnapshot;
  gapPatterns: readonly string[];
}

export type Judgement = Pick<Comparison, 'outcome' | 'differences' | 'tally'>;

/** The thread's start-up data: the configured thresholds (COMPARE_THRESHOLDS, parsed) and this process's secret tag key (src/compare/secrets.ts). */
export interface DiffThreadData {
  thresholds: readonly Threshold[];
  secretTagKey: Uint8Array;
}

/** Gateway thread → diff thread. */
export interface DiffRequest {
  id: number;
  input: DiffInput;
}

/** Diff thread → gateway thread: the judgement, or what compareAnswers threw. */
export type DiffReply = { id: number; ok: true; judgement: Judgement } | { id: number; ok: false; name: string; message: string };

export interface ThreadComparer {
  compare(input: DiffInput): Promise<Judgement>;
  /** Stops the thread; pending comparisons fail with DiffThreadClosed. */
  close(): Promise<void>;
}

/** A comparison the diff thread did not answer: it crashed, exited, could not start, or took longer than the bound. */
export class DiffThreadError extends Error {
  override name = 'DiffThreadError';
}

/** A comparison cut by the comparer's close (the gateway shutting down): nothing was judged, nothing went wrong. */
export class DiffThreadClosed extends DiffThreadError {
  override name = 'DiffThreadClosed';
}

/** A 2 MiB answer (COMPARE_MAX_BODY_BYTES' default) diffs in well under a second; this only catches a thread that is stuck. */
export const DIFF_TIMEOUT_MS = 30_000;
/** After a thread failed, comparisons fail at once for this long before another thread is started. */
export const DIFF_RESTART_BACKOFF_MS = 1_000;
/** The thread's old-generation heap: three answers of COMPARE_MAX_BODY_BYTES' default and their parsed trees fit many times over. */
export const DIFF_HEAP_MB = 256;

// The thread's file sits beside this one: .ts run from the sources, .js compiled (npm run build).
const THREAD_ENTRY = new URL(`./diff-thread${import.meta.url.endsWith('.js') ? '.js' : '.ts'}`, import.meta.url);

interface Pending {
  resolve(judgement: Judgement): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** Why a thread failed, for the record: the error's name and Node's code (never its message, which may quote data). */
function failureOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${error.name} ${code}` : error.name;
}

export function createThreadComparer(options: {
  thresholds: readonly Threshold[];
  timeoutMs?: number;
  restartBackoffMs?: number;
  heapMb?: number;
  entry?: URL;
}): ThreadComparer {
  const timeoutMs = options.timeoutMs ?? DIFF_TIMEOUT_MS;
  const restartBackoffMs = options.restartBackoffMs ?? DIFF_RESTART_BACKOFF_MS;
  const entry = options.entry ?? THREAD_ENTRY;
  const data: DiffThreadData = { thresholds: options.thresholds, secretTagKey: secretTagKey() };
  const pending = new Map<number, Pending>();
  let worker: Worker | undefined;
  let nextId = 0;
  let closed = false;
  /** The last failure, and until when no thread is started after it. */
  let failed: { error: DiffThreadError; until: number } | undefined;

  const settle = (thread: Worker, id: number): Pending | undefined => {
    const call = pending.get(id);
    if (call === undefined) return undefined;
    pending.delete(id);
    clearTimeout(call.timer);
    if (pending.size === 0) thread.unref();
    return call;
  };

  /** Every pending comparison fails with `error`, and the thread is dropped (a later comparison starts another). */
  const abandon = (from: Worker, error: DiffThreadError): void => {
    if (worker !== from) return;
    worker = undefined;
    if (!(error instanceof DiffThreadClosed)) failed = { error, until: performance.now() + restartBackoffMs };
    for (const [id, call] of pending) {
      clearTimeout(call.timer);
      pending.delete(id);
      call.reject(error);
    }
    void from.terminate();
  };

  const start = (): Worker => {
    const started = new Worker(entry, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: options.heapMb ?? DIFF_HEAP_MB } });
    started.unref();
    started.on('message', (reply: DiffReply) => {
      const call = settle(started, reply.id);
      if (call === undefined) return;
      if (reply.ok) call.resolve(reply.judgement);
      else call.reject(Object.assign(new Error(reply.message), { name: reply.name }));
    });
    started.on('messageerror', (error) => abandon(started, new DiffThreadError(`diff thread answer unreadable: ${failureOf(error)}`)));
    started.on('error', (error) => abandon(started, new DiffThreadError(`diff thread failed: ${failureOf(error)}`)));
    started.on('exit', (code) => abandon(started, new DiffThreadError(`diff thread exited (code ${code})`)));
    return started;
  };

  return {
    compare(input) {
      return new Promise<Judgement>((resolve, reject) => {
        if (closed) throw new DiffThreadClosed('diff thread closed');
        if (worker === undefined && failed !== undefined && performance.now() < failed.until) throw failed.error;
        const thread = (worker ??= start());
        const id = nextId++;
        const timer = setTimeout(() => abandon(thread, new DiffThreadError(`diff took over ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
        pending.set(id, { resolve, reject, timer });
        // Held while a comparison is pending, so the process does not exit under it (a gateway's close ends it: DiffThreadClosed).
        if (pending.size === 1) thread.ref();
        try {
          thread.postMessage({ id, input } satisfies DiffRequest);
        } catch (error) {
          // Not clonable: this comparison fails alone; the thread and the others go on.
          settle(thread, id);
          throw error;
        }
      });
    },
    async close() {
      closed = true;
      const thread = worker;
      if (thread === undefined) return;
      abandon(thread, new DiffThreadClosed('diff thread closed'));
    },
  };
}
