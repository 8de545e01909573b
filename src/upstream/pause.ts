/**
 * Waits `ms`, or less when `signal` fires first; never rejects (the caller checks the signal).
 * The retry backoff, the micro-cache's waiters and the budgets' queue all pause this way.
 * `wakers`: while it waits, its wake-up is in this set, so another caller can end the pause
 * early (a budget slot given back wakes one waiter).
 */
export function pause(ms: number, signal?: AbortSignal, wakers?: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      wakers?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
    wakers?.add(done);
  });
}
