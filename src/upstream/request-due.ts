import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestTrace } from './request-trace.ts';

/**
 * The inbound request being served, for code deep below it that holds only an AbortSignal:
 *
 * - when it must be answered (performance.now() time): a budget queue leaves in time to answer
 *   429 itself, instead of being overtaken by the request's deadline (a 504) or, behind the
 *   shared load of a coalesced read, by a waiter's own deadline. A getter, since a shutdown can
 *   bring the deadline forward after the request began (routes/request-signal.ts);
 * - its trace, when it has one (request-trace.ts): what the NerdGraph and legacy calls it makes
 *   are recorded under, and the traceparent they carry.
 *
 * One store for both, so tracing adds no async-context layer of its own.
 */
interface RequestScope {
  due: () => number;
  trace: RequestTrace | undefined;
}

const scopeOfRequest = new AsyncLocalStorage<RequestScope>();

export function runWithRequestDue<T>(due: () => number, work: () => Promise<T>, trace?: RequestTrace): Promise<T> {
  return scopeOfRequest.run({ due, trace }, work);
}

/** The current request's due time, or undefined outside a request (tools, tests without the middleware). */
export function requestDue(): number | undefined {
  return scopeOfRequest.getStore()?.due();
}

/** The current request's trace, while the request is still being answered; undefined otherwise. */
export function requestTrace(): RequestTrace | undefined {
  const trace = scopeOfRequest.getStore()?.trace;
  return trace?.open === true ? trace : undefined;
}
