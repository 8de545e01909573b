/**
 * Waits `ms`, or less when `signal` fires first; never rejects (the caller checks the signal).
 * The retry backoff and the micro-cache's waiters both pause this way.
 */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
