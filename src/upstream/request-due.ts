import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * When the inbound request being served must be answered (performance.now() time), for code
 * deep below it that holds only an AbortSignal: a budget queue leaves in time to answer 429
 * itself, instead of being overtaken by the request's deadline (a 504) or, behind the shared
 * load of a coalesced read, by a waiter's own deadline. A getter, since a shutdown can bring
 * the deadline forward after the request began (routes/request-signal.ts).
 */
const dueOfRequest = new AsyncLocalStorage<() => number>();

export function runWithRequestDue<T>(due: () => number, work: () => Promise<T>): Promise<T> {
  return dueOfRequest.run(due, work);
}

/** The current request's due time, or undefined outside a request (tools, tests without the middleware). */
export function requestDue(): number | undefined {
  return dueOfRequest.getStore()?.();
}
