import type { MiddlewareHandler } from 'hono';
import { Counter } from 'prom-client';
import type { ServerResponse } from 'node:http';
import { requestDue, runWithRequestDue } from '../upstream/request-due.ts';
import type { RequestTrace } from '../upstream/request-trace.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { NerdGraph, UpstreamCall } from '../upstream/client.ts';
import { UpstreamError, toV2Error } from '../upstream/errors.ts';
import { V2Error } from '../v2/errors.ts';
import type { GatewayEnv } from './context.ts';

/**
 * One AbortSignal per inbound request (`c.get('signal')`), handed to every upstream call the
 * request makes: it fires once, when the request's deadline (REQUEST_DEADLINE_MS, or earlier
 * once a shutdown brought it forward: bringDeadlinesForward) passes, or when its client
 * disconnects before the answer was written. So a request's calls, retries included, share one
 * deadline, and work nobody waits for any more stops.
 *
 * The abort reasons are V2Errors named as the platform names them (TimeoutError, AbortError):
 * thrown where a request stops waiting (before a call, or leaving a shared one), they are the
 * v2 answer to an upstream timeout. They are not UpstreamErrors on purpose: a call the signal
 * cuts short is classified by the NerdGraph client (a mutation already sent stays "outcome
 * unknown"), never taken for one that was not sent.
 */
export function deadlineReached(): V2Error {
  const answer = toV2Error(new UpstreamError('timeout', 'request deadline reached'));
  const error = new V2Error(answer.status, answer.title, { kind: 'request_deadline' });
  error.name = 'TimeoutError';
  return error;
}

export function clientClosed(): V2Error {
  // Nobody reads this answer; the access log records 499 (below).
  const error = new V2Error(503, 'The client closed the request', { kind: 'client_closed' });
  error.name = 'AbortError';
  return error;
}

/** An upstream call under a request's (or a shared load's) signal; none is sent once it fired. */
export function callUpstream(nerdgraph: NerdGraph, call: UpstreamCall & { signal: AbortSignal }): Promise<unknown> {
  if (call.signal.aborted) return Promise.reject(call.signal.reason as Error);
  return nerdgraph.call(call);
}

/** nginx's "client closed request": what the access log and metrics record for a failure nobody read. */
const CLIENT_CLOSED = 499;

function cancelledCounter(metrics: GatewayMetrics): Counter<'reason'> {
  const name = 'v2bridge_requests_cancelled_total';
  // One counter per registry, however many apps share it.
  return (
    (metrics.registry.getSingleMetric(name) as Counter<'reason'> | undefined) ??
    new Counter({
      name,
      help: 'Requests cut short, their upstream work stopped: reason client_closed (disconnected before the answer) or deadline (REQUEST_DEADLINE_MS passed)',
      labelNames: ['reason'],
      registers: [metrics.registry],
    })
  );
}

/**
 * Process-wide, as a shutdown is: each running request's way to move its deadline earlier, and
 * the latest deadline any request may have from now on (performance.now() time; none until a
 * shutdown sets one).
 */
const running = new Set<(due: number) => void>();
let latestDue = Number.POSITIVE_INFINITY;

/**
 * Shutdown: no request's deadline passes later than `withinMs` from now, for the requests
 * running and those still to come. Each then answers in v2 form (504, or "outcome unknown" for
 * a write already sent) before the drain bound cuts connections, instead of an empty reply.
 */
export function bringDeadlinesForward(withinMs: number): void {
  latestDue = Math.min(latestDue, performance.now() + withinMs);
  for (const shorten of running) shorten(latestDue);
}

/**
 * For work that outlives its request's handler (a legacy answer still streaming to the client):
 * `shorten(due)` is called now if a shutdown has already set the latest due time, and whenever
 * one brings it forward. The function returned stops following.
 */
export function followShutdownDeadlines(shorten: (due: number) => void): () => void {
  if (Number.isFinite(latestDue)) shorten(latestDue);
  running.add(shorten);
  return () => {
    running.delete(shorten);
  };
}

/** A request's two signals: `signal` (deadline or client gone) and `deadline` (the deadline alone). */
export interface RequestSignals {
  signal: AbortSignal;
  deadline: AbortSignal;
}

/** What a request's signals follow besides its own deadline. */
export interface DeadlineOptions {
  /** The Node response of a caller's request: its 'close' before the answer was written means the client left. */
  outgoing?: ServerResponse | undefined;
  /** The request a shadow request serves (explain's): its due time bounds this one, and its end ends this one. */
  parent?: AbortSignal | undefined;
  /** The trace the request's calls are recorded under (src/upstream/request-trace.ts). */
  trace?: RequestTrace | undefined;
}

/** Why a request's signal fired, if it did: its deadline, or its client leaving. */
export type CutShort = 'deadline' | 'client_closed' | undefined;

/**
 * Runs one request's work (a caller's, or a shadow request's) under its own signals, which fire
 * at its deadline (`deadlineMs` from now, or earlier once a shutdown brings it forward), when
 * its client leaves (`outgoing`) or when the request it serves ends (`parent`). Says whether
 * and why they fired.
 */
export async function underRequestDeadline(deadlineMs: number, options: DeadlineOptions, work: (signals: RequestSignals) => Promise<unknown>): Promise<CutShort> {
  const { outgoing, parent, trace } = options;
  const controller = new AbortController();
  // The deadline alone: a mutation already on its way is not abandoned because its client left.
  const deadline = new AbortController();
  const fire = (): void => {
    const reason = deadlineReached();
    deadline.abort(reason);
    controller.abort(reason);
  };
  // A request that serves another (explain's run) ends with it: that request's due time (so
  // budget queues leave in time for it), its deadline, or its client leaving.
  const parentDue = parent === undefined ? undefined : requestDue();
  let due = Math.min(performance.now() + deadlineMs, latestDue, parentDue ?? Number.POSITIVE_INFINITY);
  let timer = setTimeout(fire, Math.max(0, due - performance.now()));
  const shorten = (earlier: number): void => {
    if (earlier >= due || deadline.signal.aborted) return;
    due = earlier;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, due - performance.now()));
  };
  running.add(shorten);
  // Under @hono/node-server only (app.request() has no socket): 'close' before the answer
  // was written means the client went away.
  const onClose = (): void => {
    if (!outgoing?.writableFinished) controller.abort(clientClosed());
  };
  outgoing?.once('close', onClose);
  const onParent = (): void => {
    const reason = parent?.reason as Error | undefined;
    if (reason?.name === 'TimeoutError') fire();
    else controller.abort(reason);
  };
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  try {
    // Budget queues below read the due time to leave before it (src/upstream/request-due.ts).
    // So do the calls below, for the request's trace.
    await runWithRequestDue(() => due, () => work({ signal: controller.signal, deadline: deadline.signal }), trace);
  } finally {
    running.delete(shorten);
    clearTimeout(timer);
    outgoing?.off('close', onClose);
    parent?.removeEventListener('abort', onParent);
  }
  if (!controller.signal.aborted) return undefined;
  return (controller.signal.reason as Error).name === 'TimeoutError' ? 'deadline' : 'client_closed';
}

/** A failure the client caused by leaving is not NerdGraph's nor the gateway's (a 4xx it earned stays). */
export function answerOfCut(cut: CutShort, answer: Response): Response {
  return cut === 'client_closed' && answer.status >= 500 ? new Response(null, { status: CLIENT_CLOSED }) : answer;
}

/** The caller's request's signals (`c.get('signal')`, `c.get('deadline')`), as middleware; its cancellations are counted. */
export function requestSignal(deadlineMs: number, metrics: GatewayMetrics): MiddlewareHandler<GatewayEnv> {
  const cancelled = cancelledCounter(metrics);
  return async (c, next) => {
    const cut = await underRequestDeadline(deadlineMs, { outgoing: c.env?.outgoing, trace: c.get('trace') }, (signals) => {
      c.set('signal', signals.signal);
      c.set('deadline', signals.deadline);
      return next();
    });
    if (cut === undefined) return;
    cancelled.inc({ reason: cut });
    c.res = answerOfCut(cut, c.res);
  };
}
