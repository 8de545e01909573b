import { V2Error, V2Titles, type V2Status } from '../errors.ts';

/**
 * NerdGraph failure classes (newrelic-client-go's internal/http/graphql.go split) and how each
 * is answered in v2 terms. Classification reads HTTP status, `extensions.errorClass`,
 * `extensions.error_code` and, last, well-known message texts.
 */
export type UpstreamErrorClass =
  | 'bad_key'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'timeout'
  | 'invalid_input'
  | 'unavailable'
  | 'upstream_failure';

export class UpstreamError extends Error {
  constructor(
    readonly errorClass: UpstreamErrorClass,
    /** Sanitised detail for logs: upstream messages only, never request headers. */
    readonly detail: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${errorClass}: ${detail}`);
    this.name = 'UpstreamError';
  }
}

export interface GraphQLErrorLike {
  message?: unknown;
  extensions?: { errorClass?: unknown; error_code?: unknown; code?: unknown } | null;
}

const RETRYABLE: ReadonlySet<UpstreamErrorClass> = new Set(['rate_limited', 'timeout', 'unavailable', 'upstream_failure']);

export function isRetryable(errorClass: UpstreamErrorClass): boolean {
  return RETRYABLE.has(errorClass);
}

function classOfGraphQLError(error: GraphQLErrorLike): UpstreamErrorClass {
  const ext = error.extensions ?? {};
  const code = String(ext.errorClass ?? ext.error_code ?? ext.code ?? '').toUpperCase();
  const message = String(error.message ?? '');
  if (code === 'BAD_API_KEY' || /bad api key|invalid api key|no api key/i.test(message)) return 'bad_key';
  if (code === 'FORBIDDEN' || code === 'ACCESS_DENIED' || /not authorized/i.test(message)) return 'forbidden';
  if (code === 'NOT_FOUND') return 'not_found';
  if (code === 'TOO_MANY_REQUESTS' || code === 'RATE_LIMITED') return 'rate_limited';
  if (code === 'TIMEOUT' || /timed out|timeout/i.test(message)) return 'timeout';
  if (code === 'INVALID_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED' || code === 'BAD_USER_INPUT') return 'invalid_input';
  if (/^Cannot query field|^Unknown argument|^Variable "|^Syntax Error/.test(message)) return 'invalid_input';
  return 'upstream_failure';
}

/** Classifies an answer that carried GraphQL errors and/or a non-2xx status. */
export function classifyAnswer(status: number, errors: readonly GraphQLErrorLike[] | undefined, retryAfter?: string | null): UpstreamError {
  const detail = (errors ?? [])
    .map((e) => String(e.message ?? '').slice(0, 300))
    .filter(Boolean)
    .join('; ');
  const retryAfterSeconds = retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (errors && errors.length > 0) {
    const classes = errors.map(classOfGraphQLError);
    // The most specific class wins: auth problems first, then limits, then the rest.
    const order: UpstreamErrorClass[] = ['bad_key', 'forbidden', 'rate_limited', 'timeout', 'not_found', 'invalid_input', 'upstream_failure'];
    const chosen = order.find((c) => classes.includes(c)) ?? 'upstream_failure';
    if (chosen !== 'upstream_failure' || status < 400) return new UpstreamError(chosen, detail, retryAfterSeconds);
  }
  if (status === 401) return new UpstreamError('bad_key', detail || 'HTTP 401');
  if (status === 403) return new UpstreamError('forbidden', detail || 'HTTP 403');
  if (status === 429) return new UpstreamError('rate_limited', detail || 'HTTP 429', retryAfterSeconds);
  if (status === 503) return new UpstreamError('unavailable', detail || 'HTTP 503', retryAfterSeconds);
  if (status === 504 || status === 408) return new UpstreamError('timeout', detail || `HTTP ${status}`);
  return new UpstreamError('upstream_failure', detail || `HTTP ${status}`);
}

/** Classifies a thrown transport error (no HTTP answer at all). */
export function classifyTransportError(error: unknown, deadlineReached: boolean): UpstreamError {
  if (deadlineReached) return new UpstreamError('timeout', 'deadline reached before NerdGraph answered');
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : '';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code)) {
    return new UpstreamError('unavailable', `cannot connect to NerdGraph (${code})`);
  }
  return new UpstreamError('upstream_failure', `connection to NerdGraph failed${code ? ` (${code})` : ''}`);
}

const ANSWERS: Record<UpstreamErrorClass, { status: V2Status; title: string }> = {
  bad_key: { status: 401, title: V2Titles.invalidApiKey },
  forbidden: { status: 403, title: 'The API key is not allowed to read this account' },
  not_found: { status: 404, title: 'Resource not found' },
  rate_limited: { status: 429, title: 'NerdGraph rate limit reached; retry later' },
  timeout: { status: 504, title: 'NerdGraph did not answer in time' },
  invalid_input: { status: 502, title: 'NerdGraph rejected the translated request' },
  unavailable: { status: 503, title: 'NerdGraph is unavailable' },
  upstream_failure: { status: 502, title: 'NerdGraph returned an error' },
};

/** The v2 answer for an upstream failure; the detail stays in the cause, out of the body. */
export function toV2Error(error: UpstreamError): V2Error {
  const answer = ANSWERS[error.errorClass];
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return new V2Error(answer.status, answer.title, { cause: error, headers, kind: `upstream_${error.errorClass}` });
}
