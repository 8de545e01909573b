/**
 * Coalesces concurrent identical work: while a call for `key` is in flight, later callers
 * share it instead of starting their own upstream request.
 *
 * The shared work runs under its own AbortSignal, not any one caller's: each caller waits
 * under its own signal and stops waiting (rejects with its signal's reason) the moment that
 * fires, and the work is aborted only when every caller has left. So a client that disconnects
 * never cancels an answer another client still waits for, and work nobody waits for stops.
 */
interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

/** The reason a shared call is aborted with once every waiter has left. */
export function everyWaiterLeft(): Error {
  const error = new Error('every caller sharing this call has left');
  error.name = 'AbortError';
  return error;
}

export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Flight<T>>();

  /**
   * `signal`: the caller's own; `work` gets the shared call's. `joined` tells the caller
   * whether it shared someone else's call (for metrics).
   */
  run(key: string, work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): { promise: Promise<T>; joined: boolean } {
    if (signal.aborted) return { promise: Promise.reject(signal.reason as Error), joined: false };
    let flight = this.inFlight.get(key);
    const joined = flight !== undefined;
    if (flight === undefined) {
      const controller = new AbortController();
      const started: Flight<T> = { controller, waiters: 0, promise: work(controller.signal) };
      started.promise.then(
        () => this.forget(key, started),
        () => this.forget(key, started),
      );
      this.inFlight.set(key, started);
      flight = started;
    }
    return { promise: this.wait(key, flight, signal), joined };
  }

  private forget(key: string, flight: Flight<T>): void {
    if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
  }

  private wait(key: string, flight: Flight<T>, signal: AbortSignal): Promise<T> {
    flight.waiters++;
    return new Promise<T>((resolve, reject) => {
      const leave = (): void => {
        flight.waiters--;
        if (flight.waiters === 0) {
          // Nobody waits: stop the work, and let the next caller start afresh.
          this.forget(key, flight);
          flight.controller.abort(everyWaiterLeft());
        }
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', leave, { once: true });
      flight.promise.then(
        (value) => {
          signal.removeEventListener('abort', leave);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', leave);
          reject(error as Error);
        },
      );
    });
  }
}

/**
 * A value loaded at most once at a time and kept once loaded (a failed or abandoned load is
 * not kept: the next caller starts it again), with SingleFlight's rules for waiting.
 */
export class SharedOnce<T> {
  private loaded: Promise<T> | undefined;
  private readonly flight = new SingleFlight<T>();

  private readonly work: (signal: AbortSignal) => Promise<T>;

  constructor(work: (signal: AbortSignal) => Promise<T>) {
    this.work = work;
  }

  get(signal: AbortSignal): Promise<T> {
    if (this.loaded !== undefined) return this.loaded;
    const { promise } = this.flight.run('', this.work, signal);
    promise.then(
      (value) => (this.loaded ??= Promise.resolve(value)),
      () => undefined,
    );
    return promise;
  }
}
