import { AsyncLocalStorage } from 'node:async_hooks';
import type { Span } from '@opentelemetry/api';
import type { TraceHeaders, Tracing } from '../ops/tracing.ts';

/**
 * A request's trace (docs/tracing.md), kept in the request's scope (below) for the calls it
 * makes (request-trace.ts records them):
 *
 * - tracing on: the request's span, under which each NerdGraph attempt and each legacy call
 *   gets a client span, and whose traceparent they carry;
 * - tracing off, the caller having sent a valid traceparent: that header (with its tracestate),
 *   carried unchanged to NerdGraph and the legacy API, so a trace the caller started is not
 *   broken by a gateway that does not take part in it.
 *
 * `open` is true while the request is being answered (src/app.ts sets it false at the end):
 * work that outlives it (a comparison's shadow calls, run from a queue whose async context may
 * be another request's) records nothing and carries no header, rather than risk joining a
 * trace that is not its own.
 */
export type RequestTrace = { open: boolean } & ({ tracing: Tracing; span: Span; relay?: undefined } | { tracing?: undefined; relay: TraceHeaders });

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
