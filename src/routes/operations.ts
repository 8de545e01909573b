import { V2Error, V2Titles, WRITE_REFUSED, type V2ErrorKind } from '../v2/errors.ts';
import type { OperationContext, ReadPlanMapping, UnsupportedMapping, WriteMapping, WritePlan } from './mapping.ts';
import { OverBudget, UpstreamError, toV2Error } from '../upstream/errors.ts';
import { respond, respondText, serialise } from '../v2/format.ts';
import { parseRequestBody, requestBodyKind, type BodyObject, type RequestBodyKind } from '../v2/request-body.ts';
import { callUpstream } from './request-signal.ts';
import { callerScope, type RouteDeps, type RouteRequest } from './types.ts';
import { redactKeys } from '../ops/redact.ts';

/** What a later step of a chained write met, for the 409 of a partial outcome (by writeFailure's kinds). */
const PARTIAL_REASONS: Readonly<Partial<Record<V2ErrorKind, string>>> = {
  write_not_sent: 'the next step was not sent (NerdGraph was unavailable or the request deadline passed)',
  write_rate_limited: 'New Relic rate-limited the next step, so it was not applied',
  budget_refused: "the next step was held back to stay within NerdGraph's limits, so it was not sent",
  write_bad_key: 'New Relic refused the next step for this API key, so it was not applied',
  write_forbidden: 'New Relic refused the next step for this API key, so it was not applied',
  write_not_found: 'New Relic did not find what the next step changes, so it was not applied',
};

/**
 * Runs the mappings that own their logic: read plans, writes and unsupported routes.
 *
 * Write safety (docs/write-rules.md §7) lives here, not in the mappings: a mapping validates and
 * reads through `ctx.read`, which refuses mutations; the runner then sends the mapping's one
 * mutation exactly once (the NerdGraph client never retries mutations), answers 2xx only with
 * NerdGraph's confirmation in hand, and says "outcome unknown" when the mutation may have
 * arrived but was not confirmed.
 */
const MAX_DETAIL = 200;

/** A refused or failed mutation, in v2 terms: was anything changed, and what to tell the client. */
export function writeFailure(error: unknown, mapping: Pick<WriteMapping, 'unconfirmedTitle'>): unknown {
  if (!(error instanceof UpstreamError)) return error;
  const refused = (status: 401 | 403 | 404 | 422 | 429, title: string): V2Error => new V2Error(status, title, { cause: error, kind: `write_${error.errorClass}` });
  // Held back by a NerdGraph budget: v2's 429 (its title says nothing was sent).
  if (error instanceof OverBudget) return toV2Error(error);
  if (!error.sent) return new V2Error(503, 'NerdGraph is unavailable; nothing was changed', { cause: error, kind: 'write_not_sent' });
  // A result came back beside the errors: the write may have happened, whatever the errors say.
  if (error.partial) return new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
  switch (error.errorClass) {
    case 'bad_key':
      return refused(401, V2Titles.invalidApiKey);
    case 'forbidden':
      return refused(403, 'The API key is not allowed to change this account');
    case 'not_found':
      return refused(404, 'Resource not found');
    case 'rate_limited':
      return refused(429, 'NerdGraph rate limit reached; nothing was changed, retry later');
    case 'invalid_input':
      // NerdGraph's own words about the input (already stripped of key-shaped text).
      return refused(422, `New Relic refused the change: ${error.detail.slice(0, MAX_DETAIL)}`);
    case 'timeout':
      return new V2Error(504, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
    case 'unavailable':
      return new V2Error(503, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
    case 'upstream_failure':
      return new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
    case 'cancelled':
      // Sent, then abandoned: whatever NerdGraph did is unknown.
      return new V2Error(503, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
    default: {
      // Every error class has its answer: a new one fails to compile here.
      const unhandled: never = error.errorClass;
      return new V2Error(502, mapping.unconfirmedTitle, { cause: new Error(`unclassified ${String(unhandled)}`), kind: 'write_unconfirmed' });
    }
  }
}

/** What a read-plan or write mapping gets: the caller's scope and the parsed request. */
function operationContext(deps: RouteDeps, req: RouteRequest, body: BodyObject, bodyKind: RequestBodyKind = 'none'): OperationContext {
  return {
    ...callerScope(deps, req, 'entity'),
    format: req.format,
    pathParams: req.pathParams,
    params: req.params,
    body,
    bodyKind,
    publicUrl: req.publicUrl,
  };
}

/** Serves a read whose logic the mapping owns: one `load`, its body and headers. */
export async function serveReadPlan(deps: RouteDeps, mapping: ReadPlanMapping, req: RouteRequest): Promise<Response> {
  const answer = await mapping.load(operationContext(deps, req, Object.create(null) as BodyObject));
  return respond(req.c, req.format, 200, answer.body, answer.headers);
}

/** An unsupported route: always its own v2 error. */
export function serveUnsupported(mapping: UnsupportedMapping): never {
  throw new V2Error(mapping.status, mapping.title, { kind: 'unsupported_route' });
}

/**
 * The signal a write's plan reads under: the request's (a client that left stops them, nothing
 * is written yet) until `sending()`, then the deadline only, so the read-back after a mutation
 * runs even when the client left and the access log records the real outcome.
 */
function writeReads(requestSignal: AbortSignal, deadline: AbortSignal): { signal: AbortSignal; sending(): void } {
  const reads = new AbortController();
  const follow = (signal: AbortSignal): (() => void) => {
    const stop = (): void => reads.abort(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return () => signal.removeEventListener('abort', stop);
  };
  let unfollowRequest: (() => void) | undefined = follow(requestSignal);
  return {
    signal: reads.signal,
    sending: () => {
      if (unfollowRequest === undefined) return;
      unfollowRequest();
      unfollowRequest = undefined;
      follow(deadline);
    },
  };
}

/**
 * A later step refused (or never sent) after the earlier ones were confirmed: a known, partial
 * outcome. 409, not a 5xx a client would retry (repeating the earlier steps), and never
 * "nothing was changed". The reason says why the next step was not applied (the titles
 * writeFailure gives a lone write may say nothing was changed), never NerdGraph's words unredacted.
 */
function partialOutcome(mapping: WriteMapping, error: V2Error): V2Error {
  const reason = PARTIAL_REASONS[error.kind] ?? `New Relic refused the next step: ${redactKeys(error.title).slice(0, MAX_DETAIL)}`;
  return new V2Error(409, `${mapping.partialTitle ?? mapping.unconfirmedTitle}: ${reason}`, { cause: error, kind: 'write_partial' });
}

/**
 * A failure after `stepsSent` steps went out, outside a send (a plan's next step, its answer):
 * only a refusal NerdGraph stated in its payload may read as "not written", and only while
 * nothing else was written; any other surprise (a failed read-back, an odd payload) is an
 * unknown outcome.
 */
function afterSending(mapping: WriteMapping, stepsSent: number, error: unknown): unknown {
  const refusal = error instanceof V2Error && error.kind === WRITE_REFUSED;
  if (refusal && stepsSent > 1 && mapping.partialTitle !== undefined) return partialOutcome(mapping, error);
  return stepsSent > 0 && !(refusal && stepsSent === 1) ? new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' }) : error;
}

/** A send that failed after `stepsSent` earlier steps were confirmed: never "nothing was changed" once one was. */
function stepFailure(mapping: WriteMapping, stepsSent: number, error: unknown): unknown {
  const failure = writeFailure(error, mapping);
  if (stepsSent === 0) return failure;
  // Refused by NerdGraph (a 4xx) or not sent at all: this step is known not applied.
  const known = failure instanceof V2Error && (failure.status < 500 || failure.kind === 'write_not_sent');
  if (known && mapping.partialTitle !== undefined) return partialOutcome(mapping, failure);
  // Held back by a budget: certainly not sent, so a known partial outcome for every
  // chain (partialOutcome falls back to unconfirmedTitle), never a 5xx a client would retry.
  if (error instanceof OverBudget && failure instanceof V2Error) return partialOutcome(mapping, failure);
  return new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
}

/** Sends one step's mutation, exactly once, under the request's deadline only. */
async function sendStep(
  deps: RouteDeps,
  mapping: WriteMapping,
  req: RouteRequest,
  step: { operation: string | undefined; variables: Record<string, unknown> },
  stepsSent: number,
  deadline: AbortSignal,
): Promise<unknown> {
  try {
    // Once sent, a mutation the deadline cuts short is an unknown outcome (writeFailure); a
    // client that leaves does not abandon it, so its real outcome is what the access log
    // records. One that left before the first was sent stops it here; once a step is out, the
    // chain runs to its end rather than stop half-way.
    if (stepsSent === 0 && req.signal.aborted) throw req.signal.reason;
    // A deadline that passed between steps: this one is certainly not sent.
    if (stepsSent > 0 && deadline.aborted) throw new UpstreamError('timeout', 'the request deadline passed before this step was sent', { sent: false });
    const operation = step.operation ?? mapping.operation;
    // Only declared mutations: an undeclared one would also be missing from the set that
    // keeps ctx.read from sending mutations (and the client retries reads).
    if (operation !== mapping.operation && !mapping.stepOperations?.includes(operation)) {
      throw new Error(`${mapping.id} sends ${operation}, which its stepOperations do not declare`);
    }
    return await callUpstream(deps.nerdgraph, { operation, variables: step.variables, apiKey: req.caller.apiKey, signal: deadline });
  } catch (error) {
    throw stepFailure(mapping, stepsSent, error);
  }
}

/** Serves a write: the mapping's plan, then each step's mutation once, answered 2xx only once confirmed. */
export async function serveWrite(deps: RouteDeps, mapping: WriteMapping, req: RouteRequest): Promise<Response> {
  const text = await req.c.req.text();
  const body = parseRequestBody(req.c.req.header('content-type'), text);
  const bodyKind = requestBodyKind(req.c.req.header('content-type'), text);
  const deadline = req.c.get('deadline') ?? req.signal;
  const reads = writeReads(req.signal, deadline);
  let plan: WritePlan = await mapping.plan(operationContext(deps, { ...req, signal: reads.signal }, body, bodyKind));
  let stepsSent = 0;
  let payload: unknown = null;
  for (;;) {
    payload = null;
    if (plan.variables !== null) {
      reads.sending();
      payload = await sendStep(deps, mapping, req, { operation: plan.operation, variables: plan.variables }, stepsSent, deadline);
      stepsSent++;
    }
    if (plan.next === undefined) break;
    try {
      plan = await plan.next(payload);
    } catch (error) {
      throw afterSending(mapping, stepsSent, error);
    }
  }
  let answer;
  try {
    answer = await plan.answer(payload);
  } catch (error) {
    throw afterSending(mapping, stepsSent, error);
  }
  const rendered = mapping.serialise ? mapping.serialise(answer, req.format) : serialise(answer, req.format);
  return respondText(req.c, req.format, mapping.successStatus, rendered);
}

/** The router's runners of the mappings that own their logic. */
export function createOperationRunners(deps: RouteDeps) {
  return {
    runReadPlan: (mapping: ReadPlanMapping, req: RouteRequest): Promise<Response> => serveReadPlan(deps, mapping, req),
    runWrite: (mapping: WriteMapping, req: RouteRequest): Promise<Response> => serveWrite(deps, mapping, req),
    runUnsupported: serveUnsupported,
  };
}
