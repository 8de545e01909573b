/**
 * Coalesces concurrent identical work: while a call for `key` is in flight, later callers
 * share its promise instead of starting their own upstream request.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  /** `joined` tells the caller whether it shared someone else's call (for metrics). */
  run(key: string, work: () => Promise<T>): { promise: Promise<T>; joined: boolean } {
    const existing = this.inFlight.get(key);
    if (existing) return { promise: existing, joined: true };
    const promise = work().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, promise);
    return { promise, joined: false };
  }
}
