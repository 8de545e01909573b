import { request, type Dispatcher } from 'undici';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { redactKeys } from '../ops/redact.ts';
import type { UpstreamCall } from './upstream-call.ts';
import type { TraceHeaders } from '../ops/tracing.ts';
import type { Sized } from './micro-cache.ts';
import { UpstreamError, classifyAnswer, classifyTransportError, isDeprecationWarning, type GraphQLErrorLike } from './errors.ts';

/**
 * One attempt of a NerdGraph call (client.ts decides on retries, budgets and the micro-cache):
 * one POST of the pre-serialised body with undici's `request`, the answer read once as text,
 * parsed once with graphql-request's acceptance rules, and classified (errors.ts). Errors in
 * fields the caller can do without (UpstreamCall.optionalFields) leave those fields null and are
 * handed to the caller; an identical answer to a read that asked for it is reused unparsed. The
 * API key goes in the `Api-Key` header only, and is redacted from every error detail.
 */

/** The last successful answer per operation, for calls that ask to reuse an identical one. With the optional-field errors it held, told again to the caller that gets it reused. */
export type LastAnswers = Map<string, { text: string; data: unknown; optionalErrors: Array<[string, UpstreamError]> }>;

/** Where an attempt goes, and what it reads and counts beside the call. */
export interface AttemptTarget {
  url: string;
  dispatcher: Dispatcher;
  metrics: GatewayMetrics;
  lastAnswers: LastAnswers;
}

// graphql-request's Accept header, kept so NerdGraph sees the same request as before.
const REQUEST_HEADERS = {
  accept: 'application/graphql-response+json, application/json',
  'content-type': 'application/json',
  'newrelic-requesting-services': 'v2-bridge',
} as const;

/** The caller's key, whatever its shape, and key-shaped text of any other key an upstream may echo. */
function redactor(apiKey: string): (text: string) => string {
  return (text) => redactKeys(text.split(apiKey).join('[redacted]'));
}

/** The optional field (UpstreamCall.optionalFields) an error's path lies in, if any. */
function optionalFieldOf(error: GraphQLErrorLike, optional: readonly string[] | undefined): string | undefined {
  const path = (error as { path?: unknown }).path;
  if (optional === undefined || optional.length === 0 || !Array.isArray(path)) return undefined;
  const joined = path.map(String).join('.');
  return optional.find((field) => joined === field || joined.startsWith(`${field}.`));
}

/** Is an optional field null or absent (failed, or left out by `@include`) in an answer's data? */
function dropsOptionalField(data: unknown, optional: readonly string[] | undefined): boolean {
  if (optional === undefined) return false;
  return optional.some((field) => {
    let value: unknown = data;
    for (const key of field.split('.')) value = isPlainObject(value) ? value[key] : undefined;
    return value === null || value === undefined;
  });
}

/** Does an answer's data hold at least one non-null top-level field? */
function hasResult(data: unknown): boolean {
  return data !== null && typeof data === 'object' && Object.values(data).some((value) => value !== null && value !== undefined);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

interface GraphQLResult {
  data?: unknown;
  errors?: GraphQLErrorLike[];
}

/**
 * A GraphQL result, or undefined when the body is not one (not JSON, not an object, or
 * `data`/`errors` of the wrong type): the same acceptance rules graphql-request applied.
 */
function parseResult(text: string, contentType: string | undefined): GraphQLResult | undefined {
  const type = (contentType ?? '').toLowerCase();
  if (!type.includes('application/json') && !type.includes('application/graphql-response+json')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainObject(parsed)) return undefined;
  const { data, errors } = parsed;
  if (errors !== undefined && !Array.isArray(errors) && !isPlainObject(errors)) return undefined;
  if (data !== undefined && data !== null && !isPlainObject(data)) return undefined;
  return { data, errors: errors === undefined ? undefined : (Array.isArray(errors) ? errors : [errors]) as GraphQLErrorLike[] };
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Why a call stops when its signal has fired: the request's deadline, or a caller who left. */
export function firedError(signal: AbortSignal, sent: boolean): UpstreamError {
  const reason: unknown = signal.reason;
  const name = reason !== null && typeof reason === 'object' ? (reason as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError') return new UpstreamError('timeout', 'deadline reached before NerdGraph answered', { sent });
  return new UpstreamError('cancelled', 'the request was cancelled before NerdGraph answered', { sent });
}

/** One POST of `body` for `call`, under `deadline`: the answer, sized, or the classified failure (counted either way). */
/**
 * `traced`, for an attempt in a request's trace (request-trace.ts): its trace headers are sent,
 * and the answer's status is noted in it.
 */
export interface TracedAttempt {
  headers: TraceHeaders;
  status: number | undefined;
}

export async function sendAttempt<T>(target: AttemptTarget, call: UpstreamCall, body: string, deadline: AbortSignal, traced?: TracedAttempt): Promise<Sized<T>> {
  const started = performance.now();
  let outcome = 'ok';
  try {
    let status: number;
    let result: GraphQLResult | undefined;
    let retryAfter: string | undefined;
    let text: string;
    try {
      const answer = await request(target.url, {
        method: 'POST',
        headers: traced === undefined ? { ...REQUEST_HEADERS, 'api-key': call.apiKey } : { ...REQUEST_HEADERS, ...traced.headers, 'api-key': call.apiKey },
        body,
        signal: deadline,
        dispatcher: target.dispatcher,
      });
      text = await answer.body.text();
      status = answer.statusCode;
      if (traced !== undefined) traced.status = status;
      retryAfter = header(answer.headers, 'retry-after');
      if (call.reuseIdenticalAnswer && status >= 200 && status < 300) {
        const last = target.lastAnswers.get(call.operation);
        if (last !== undefined && last.text === text) {
          for (const [field, error] of last.optionalErrors) call.onOptionalFieldError?.(field, error);
          return { data: last.data as T, bytes: text.length, ...(dropsOptionalField(last.data, call.optionalFields) ? { partial: true } : {}) };
        }
      }
      result = parseResult(text, header(answer.headers, 'content-type'));
    } catch (error) {
      throw deadline.aborted ? firedError(deadline, true) : classifyTransportError(error, false);
    }
    const redact = redactor(call.apiKey);
    if (status < 200 || status >= 300) throw classifyAnswer(status, result?.errors, { retryAfter, redact });
    // A 2xx that is no GraphQL result: the answer was mangled on the way; worth another read.
    if (result === undefined) throw new UpstreamError('upstream_failure', 'NerdGraph answered with a body that is not a GraphQL result', { retryable: true });
    let errors = (result.errors ?? []).filter((e) => !isDeprecationWarning(e));
    // Errors in fields the caller can do without leave those fields null (the caller's to tell).
    const optionalErrors: Array<[string, UpstreamError]> = [];
    if (call.optionalFields !== undefined && errors.length > 0 && hasResult(result.data)) {
      errors = errors.filter((e) => {
        const field = optionalFieldOf(e, call.optionalFields);
        if (field === undefined) return true;
        const classified = classifyAnswer(status, [e], { redact });
        optionalErrors.push([field, classified]);
        call.onOptionalFieldError?.(field, classified);
        return false;
      });
    }
    if (errors.length > 0 || result.data === undefined || result.data === null) {
      const classified = classifyAnswer(status, errors.length > 0 ? errors : [{ message: 'empty answer' }], { redact });
      // Errors beside a non-null result: for a mutation, the write may well have happened.
      throw hasResult(result.data) ? classified.asPartial() : classified;
    }
    if (call.reuseIdenticalAnswer) target.lastAnswers.set(call.operation, { text, data: result.data, optionalErrors });
    // The operation's document decides the shape; callers parse it with zod. An answer without
    // an optional field is marked partial: the micro-cache neither keeps nor shares it.
    return { data: result.data as T, bytes: text.length, ...(dropsOptionalField(result.data, call.optionalFields) ? { partial: true } : {}) };
  } catch (error) {
    // A fired signal is already classified: timeout (deadline) or cancelled (a client left).
    if (error instanceof UpstreamError) outcome = error.errorClass;
    throw error;
  } finally {
    // observe() rather than startTimer(): no closure per call (prom-client hashes the labels either way).
    target.metrics.upstreamDuration.observe({ operation: call.operation }, (performance.now() - started) / 1000);
    target.metrics.upstreamRequests.inc({ operation: call.operation, outcome });
  }
}
