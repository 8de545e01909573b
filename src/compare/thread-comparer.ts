import { Worker } from 'node:worker_threads';
import type { Comparison } from './diff.ts';
import type { Threshold } from './thresholds.ts';
import type { AnswerSnapshot } from './types.ts';

/**
 * The diff engine run on a worker thread: compare mode's judgement of each shadow request
 * (decoding both answers, masking secrets, walking them, judging every difference) is the
 * largest part of its shadow work, CPU-bound and pure, so on a second core it no longer delays
 * the callers' next requests. The thread starts with the first comparison, is held (ref'd) only
 * while comparisons are pending, and is started again after a crash; a comparison it never
 * answers fails after `timeoutMs`, and the thread is replaced.
 *
 * Bounded by its callers: the shadow queue (COMPARE_CONCURRENCY) runs at most that many
 * comparisons at once, so at most that many are pending here.
 */

export interface DiffInput {
  legacy: AnswerSnapshot;
  legacyAgain?: AnswerSnapshot;
  translated: AnswerSnapshot;
  gapPatterns: readonly string[];
}

export type Judgement = Pick<Comparison, 'outcome' | 'differences' | 'tally'>;

/** The thread's start-up data: the configured thresholds (COMPARE_THRESHOLDS, parsed). */
export interface DiffThreadData {
  thresholds: readonly Threshold[];
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
  /** Stops the thread; pending comparisons fail. */
  close(): Promise<void>;
}

/** A comparison the diff thread did not answer: it crashed, exited, or took longer than the bound. */
export class DiffThreadError extends Error {
  override name = 'DiffThreadError';
}

/** A 2 MiB answer (COMPARE_MAX_BODY_BYTES' default) diffs in well under a second; this only catches a thread that is stuck. */
export const DIFF_TIMEOUT_MS = 30_000;

// The thread's file sits beside this one: .ts run from the sources, .js compiled (npm run build).
const THREAD_ENTRY = new URL(`./diff-thread${import.meta.url.endsWith('.js') ? '.js' : '.ts'}`, import.meta.url);

interface Pending {
  resolve(judgement: Judgement): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export function createThreadComparer(options: { thresholds: readonly Threshold[]; timeoutMs?: number; entry?: URL }): ThreadComparer {
  const timeoutMs = options.timeoutMs ?? DIFF_TIMEOUT_MS;
  const entry = options.entry ?? THREAD_ENTRY;
  const data: DiffThreadData = { thresholds: options.thresholds };
  const pending = new Map<number, Pending>();
  let worker: Worker | undefined;
  let nextId = 0;
  let closed = false;

  /** Every pending comparison fails with `error`, and the thread is dropped (the next comparison starts another). */
  const abandon = (from: Worker, error: Error): void => {
    if (worker !== from) return;
    worker = undefined;
    for (const [id, call] of pending) {
      clearTimeout(call.timer);
      pending.delete(id);
      call.reject(error);
    }
    void from.terminate();
  };

  const start = (): Worker => {
    const started = new Worker(entry, { workerData: data });
    started.unref();
    started.on('message', (reply: DiffReply) => {
      const call = pending.get(reply.id);
      if (call === undefined) return;
      pending.delete(reply.id);
      clearTimeout(call.timer);
      if (pending.size === 0) started.unref();
      if (reply.ok) call.resolve(reply.judgement);
      else call.reject(Object.assign(new Error(reply.message), { name: reply.name }));
    });
    started.on('error', (error) => abandon(started, new DiffThreadError(`diff thread failed: ${error.name}`)));
    started.on('exit', (code) => abandon(started, new DiffThreadError(`diff thread exited (code ${code})`)));
    return started;
  };

  return {
    compare(input) {
      if (closed) return Promise.reject(new DiffThreadError('diff thread closed'));
      const thread = (worker ??= start());
      const id = nextId++;
      return new Promise<Judgement>((resolve, reject) => {
        const timer = setTimeout(() => abandon(thread, new DiffThreadError(`diff took over ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
        pending.set(id, { resolve, reject, timer });
        // Held while a comparison is pending: a draining process waits for its last judgements.
        if (pending.size === 1) thread.ref();
        thread.postMessage({ id, input } satisfies DiffRequest);
      });
    },
    async close() {
      closed = true;
      const thread = worker;
      if (thread === undefined) return;
      abandon(thread, new DiffThreadError('diff thread closed'));
    },
  };
}
