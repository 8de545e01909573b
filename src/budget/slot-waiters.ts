import { UpstreamError, type OverBudget } from '../upstream/errors.ts';
import { pause } from '../upstream/pause.ts';

/**
 * Waiting for the budgets (budgets.ts), in this process: the calls queued for a concurrency
 * slot, by lease key, and the hand-over of a slot freed here to one of them at once (the others
 * keep polling, as other replicas' calls do); and the small timing helpers every wait shares:
 * racing the shared state against the time a call can still be sent (beforeTime), letting the
 * event loop handle I/O already received before a slot is taken (nextTurn), and telling why a
 * queued call stopped (stopped).
 */

/**
 * The shared state's answer, or 'late' when `by` (performance.now() time) or the deadline
 * comes first: a stalled Redis must not hold a call past the time it could still be sent.
 */
export async function beforeTime<T>(work: Promise<T>, by: number, signal: AbortSignal): Promise<{ answer: T } | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, by - performance.now()));
    onAbort = () => resolve('late');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work.then((answer) => ({ answer })), late]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Resolves once the event loop has handled the I/O it has already received (setImmediate runs
 * after the poll phase): a client's hang-up that arrived in the same turn as a freed slot is
 * known before the slot is taken.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Why a queued call stops: its deadline (429: it could not be admitted in time) or its caller left. */
export function stopped(signal: AbortSignal, refusal: () => OverBudget): UpstreamError {
  const reason: unknown = signal.reason;
  const name = reason !== null && typeof reason === 'object' ? (reason as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError') return refusal();
  return new UpstreamError('cancelled', 'the request was cancelled while queued for a NerdGraph budget', { sent: false });
}

/** One more or one fewer under `key`; a key at zero is dropped (so `has` says "any"). */
function count(counts: Map<string, number>, key: string, change: 1 | -1): void {
  const left = (counts.get(key) ?? 0) + change;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/** This process's calls waiting for a concurrency slot, by lease key. */
export class SlotWaiters {
  /** Calls waiting for a lease, by lease key: a release here wakes one at once. */
  private readonly leaseWaiters = new Map<string, Set<() => void>>();
  /** Slots freed here and handed to a woken waiter that has not asked for them yet, by lease key. */
  private readonly handovers = new Map<string, number>();
  /** Calls queued here for a slot, by lease key, between their polls too. */
  private readonly queuedForSlot = new Map<string, number>();

  /** Calls of this key wait here already: a newcomer goes behind them (a turn later), not ahead. */
  othersWaiting(key: string): boolean {
    return this.handovers.has(key) || this.queuedForSlot.has(key);
  }

  /** A woken waiter has asked for the slot handed to it (taken or passed on). */
  handoverTaken(key: string): void {
    count(this.handovers, key, -1);
  }

  /** A call starts (1) or stops (-1) being queued for a slot under `key`. */
  queued(key: string, change: 1 | -1): void {
    count(this.queuedForSlot, key, change);
  }

  private waitersOf(key: string): Set<() => void> {
    let waiters = this.leaseWaiters.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      this.leaseWaiters.set(key, waiters);
    }
    return waiters;
  }

  /**
   * One slot freed: one waiter tries for it at once (the others keep polling, as other
   * replicas' do). A woken waiter that will not take the slot (its client left) wakes the next.
   */
  wakeOne(key: string): void {
    const waiters = this.leaseWaiters.get(key);
    const first = waiters?.values().next().value;
    if (first !== undefined) {
      waiters?.delete(first);
      count(this.handovers, key, 1);
      first();
    }
    if (waiters !== undefined && waiters.size === 0) this.leaseWaiters.delete(key);
  }

  /** Waits up to `ms` for a slot under `key`; true when a slot freed in this process woke it. */
  async waitForSlot(key: string, ms: number, deadline: AbortSignal): Promise<boolean> {
    const waiters = this.waitersOf(key);
    let woken = false;
    const ends = new Set<() => void>();
    const wake = (): void => {
      woken = true;
      for (const end of ends) end();
    };
    waiters.add(wake);
    try {
      await pause(ms, deadline, ends);
    } finally {
      waiters.delete(wake);
      if (waiters.size === 0 && this.leaseWaiters.get(key) === waiters) this.leaseWaiters.delete(key);
    }
    return woken;
  }
}
