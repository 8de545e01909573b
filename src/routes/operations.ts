import { V2Error, V2Titles, WRITE_REFUSED } from '../v2/errors.ts';
import type { OperationContext, ReadPlanMapping, UnsupportedMapping, WriteMapping, WritePlan } from './mapping.ts';
import { OverBudget, UpstreamError, toV2Error } from '../upstream/errors.ts';
import { respond, respondText, serialise } from '../v2/format.ts';
import { parseRequestBody, requestBodyKind, type BodyObject, type RequestBodyKind } from '../v2/request-body.ts';
import { callUpstream } from './request-signal.ts';
import { callerScope, type RouteDeps, type RouteRequest } from './types.ts';
import { redactKeys } from '../caller/redact.ts';

/** What a later step of a chained write met, for the 409 of a partial outcome (by writeFailure's kinds). */
const PARTIAL_REASONS: Readonly<Record<string, string>> = {
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

/** `mutations`: the operations write mappings send, which `ctx.read` must never send. */
export function createOperationRunners(deps: RouteDeps) {
  async function contextOf(req: RouteRequest, body: BodyObject, bodyKind: RequestBodyKind = 'none'): Promise<OperationContext> {
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

  async function runReadPlan(mapping: ReadPlanMapping, req: RouteRequest): Promise<Response> {
    const answer = await mapping.load(await contextOf(req, Object.create(null) as BodyObject));
    return respond(req.c, req.format, 200, answer.body, answer.headers);
  }

  async function runWrite(mapping: WriteMapping, req: RouteRequest): Promise<Response> {
    const text = await req.c.req.text();
    const body = parseRequestBody(req.c.req.header('content-type'), text);
    const bodyKind = requestBodyKind(req.c.req.header('content-type'), text);
    // The plan's reads go under the request signal (nothing is written yet: a client that left
    // stops them); the mutation and the read-back after it under the deadline only, so a
    // write whose client left still ends with its real outcome in the access log.
    const deadline = req.c.get('deadline') ?? req.signal;
    const reads = new AbortController();
    const follow = (signal: AbortSignal): (() => void) => {
      const stop = (): void => reads.abort(signal.reason);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
      return () => signal.removeEventListener('abort', stop);
    };
    const unfollowRequest = follow(req.signal);
    let plan: WritePlan = await mapping.plan(await contextOf({ ...req, signal: reads.signal }, body, bodyKind));
    let stepsSent = 0;
    let payload: unknown = null;
    // After a write went out, only a refusal NerdGraph stated in its payload may read as "not
    // written", and only while nothing else was written; any other surprise (a failed
    // read-back, an odd payload, a later step failing) is an unknown outcome.
    const afterSending = (error: unknown): unknown => {
      const refusal = error instanceof V2Error && error.kind === WRITE_REFUSED;
      if (refusal && stepsSent > 1 && mapping.partialTitle !== undefined) return partial(error);
      return stepsSent > 0 && !(refusal && stepsSent === 1) ? new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' }) : error;
    };
    // A later step refused (or never sent) after the earlier ones were confirmed: a known, partial
    // outcome. 409, not a 5xx a client would retry (repeating the earlier steps), and never
    // "nothing was changed".
    // The reason says why the next step was not applied, never "nothing was changed" (the
    // titles writeFailure gives a lone write may say so), and never NerdGraph's words unredacted.
    const partial = (error: V2Error): V2Error => {
      const reason = PARTIAL_REASONS[error.kind ?? ''] ?? `New Relic refused the next step: ${redactKeys(error.title).slice(0, MAX_DETAIL)}`;
      return new V2Error(409, `${mapping.partialTitle ?? mapping.unconfirmedTitle}: ${reason}`, { cause: error, kind: 'write_partial' });
    };
    for (;;) {
      payload = null;
      if (plan.variables !== null) {
        if (stepsSent === 0) {
          unfollowRequest();
          follow(deadline);
        }
        try {
          // Under the request's deadline only: once sent, a mutation it cuts short is an unknown
          // outcome (writeFailure); a client that leaves does not abandon it, so its real outcome
          // is what the access log records. One that left before the first was sent stops it
          // here; once a step is out, the chain runs to its end rather than stop half-way.
          if (stepsSent === 0 && req.signal.aborted) throw req.signal.reason;
          // A deadline that passed between steps: this one is certainly not sent.
          if (stepsSent > 0 && deadline.aborted) throw new UpstreamError('timeout', 'the request deadline passed before this step was sent', { sent: false });
          const operation = plan.operation ?? mapping.operation;
          // Only declared mutations: an undeclared one would also be missing from the set that
          // keeps ctx.read from sending mutations (and the client retries reads).
          if (operation !== mapping.operation && !mapping.stepOperations?.includes(operation)) {
            throw new Error(`${mapping.id} sends ${operation}, which its stepOperations do not declare`);
          }
          payload = await callUpstream(deps.nerdgraph, { operation, variables: plan.variables, apiKey: req.caller.apiKey, signal: deadline });
        } catch (error) {
          // A later step's failure leaves the earlier ones applied: never "nothing was changed".
          if (stepsSent > 0) {
            const failure = writeFailure(error, mapping);
            // Refused by NerdGraph (a 4xx) or not sent at all: this step is known not applied.
            const known = failure instanceof V2Error && (failure.status < 500 || failure.kind === 'write_not_sent');
            if (known && mapping.partialTitle !== undefined) throw partial(failure);
            // Held back by a budget: certainly not sent, so a known partial outcome for every
            // chain (partial() falls back to unconfirmedTitle), never a 5xx a client would retry.
            if (error instanceof OverBudget && failure instanceof V2Error) throw partial(failure);
            throw new V2Error(502, mapping.unconfirmedTitle, { cause: error, kind: 'write_unconfirmed' });
          }
          throw writeFailure(error, mapping);
        }
        stepsSent++;
      }
      if (plan.next === undefined) break;
      try {
        plan = await plan.next(payload);
      } catch (error) {
        throw afterSending(error);
      }
    }
    let answer;
    try {
      answer = await plan.answer(payload);
    } catch (error) {
      throw afterSending(error);
    }
    const rendered = mapping.serialise ? mapping.serialise(answer, req.format) : serialise(answer, req.format);
    return respondText(req.c, req.format, mapping.successStatus, rendered);
  }

  function runUnsupported(mapping: UnsupportedMapping): never {
    throw new V2Error(mapping.status, mapping.title, { kind: 'unsupported_route' });
  }

  return { runReadPlan, runWrite, runUnsupported };
}
