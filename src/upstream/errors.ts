import { V2Error, V2Titles, type UpstreamErrorClass, type V2Status } from '../v2/errors.ts';

/**
 * NerdGraph failure classes (newrelic-client-go's internal/http/graphql.go split; their names
 * are src/v2/error-kinds.ts's, since v2 error kinds are made of them) and how each is answered
 * in v2 terms. Classification reads HTTP status, `extensions.errorClass`,
 * `extensions.error_code` and, last, well-known message texts.
 */
export type { UpstreamErrorClass };

export class UpstreamError extends Error {
  readonly errorClass: UpstreamErrorClass;
  /** Sanitised detail for logs: upstream messages only, never request headers. */
  readonly detail: string;
  readonly options: { retryAfterSeconds?: number; retryable?: boolean; sent?: boolean; partial?: boolean; queryTimeout?: boolean };

  constructor(
    errorClass: UpstreamErrorClass,
    detail: string,
    options: { retryAfterSeconds?: number; retryable?: boolean; sent?: boolean; partial?: boolean; queryTimeout?: boolean } = {},
  ) {
    super(`${errorClass}: ${detail}`);
    this.errorClass = errorClass;
    this.detail = detail;
    this.options = options;
    this.name = 'UpstreamError';
  }

  get retryAfterSeconds(): number | undefined {
    return this.options.retryAfterSeconds;
  }

  /**
   * Could the request have reached NerdGraph? False only when no connection was made, so a
   * write that failed this way certainly changed nothing.
   */
  get sent(): boolean {
    return this.options.sent ?? true;
  }

  /** True when errors came beside a non-null result: a mutation may have been applied. */
  get partial(): boolean {
    return this.options.partial ?? false;
  }

  /** The same error, marked as having come with a (partial) result. */
  asPartial(): UpstreamError {
    return new UpstreamError(this.errorClass, this.detail, { ...this.options, partial: true });
  }

  /**
   * A timeout NerdGraph reported in GraphQL errors (`errorClass: TIMEOUT`, "NRDB query duration
   * exceeded the set timeout"): the query ran its whole `timeout` (src/upstream/nrql-timeout.ts).
   */
  get queryTimeout(): boolean {
    return this.options.queryTimeout ?? false;
  }

  /** Worth another attempt for a read: transient by class, or a server-side failure. */
  get retryable(): boolean {
    return this.options.retryable ?? ['rate_limited', 'timeout', 'unavailable'].includes(this.errorClass);
  }
}

/**
 * The gateway's own refusal to send a call, to stay within NerdGraph's limits (src/budget/):
 * answered v2's 429 with Retry-After (seconds, >= 1) and a title naming the budget. Never
 * sent, so a write certainly changed nothing; never retried (the queue already waited).
 */
export class OverBudget extends UpstreamError {
  readonly title: string;
  /** Which budget refused: `concurrency`, or one of the NRQL budgets (the call would have sent NRQL). */
  readonly budget: 'concurrency' | 'nrql_account' | 'nrql_fair_share' | 'identical_query';

  constructor(
    title: string,
    retryAfterSeconds: number,
    budget: 'concurrency' | 'nrql_account' | 'nrql_fair_share' | 'identical_query' = 'concurrency',
  ) {
    super('rate_limited', title, { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)), retryable: false, sent: false });
    this.title = title;
    this.budget = budget;
  }
}

export interface GraphQLErrorLike {
  message?: unknown;
  extensions?: { errorClass?: unknown; error_code?: unknown; code?: unknown } | null;
}

/** NerdGraph reports deprecations as errors beside valid data (newrelic-client-go graphql.go). */
export function isDeprecationWarning(error: GraphQLErrorLike): boolean {
  return String(error.message ?? '').startsWith('This field is deprecated');
}

function codeOf(error: GraphQLErrorLike): string {
  const ext = error.extensions ?? {};
  return String(ext.errorClass ?? ext.error_code ?? ext.code ?? '').toUpperCase();
}

function classOfGraphQLError(error: GraphQLErrorLike): UpstreamErrorClass {
  const code = codeOf(error);
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

// Server-side classes newrelic-client-go retries (internal/http/graphql.go).
const SERVER_ERROR_CODES = new Set(['INTERNAL_SERVER_ERROR', 'SERVER_ERROR']);

const MAX_DETAIL = 300;

/**
 * Classifies an answer that carried GraphQL errors and/or a non-2xx status. `redact` runs on
 * each upstream message before anything is cut or kept, so a key an upstream echoes back
 * cannot survive in part.
 */
export function classifyAnswer(
  status: number,
  errors: readonly GraphQLErrorLike[] | undefined,
  options: { retryAfter?: string | null; redact?: (text: string) => string } = {},
): UpstreamError {
  const redact = options.redact ?? ((text: string) => text);
  const detail = (errors ?? [])
    .map((e) => redact(String(e.message ?? '')).slice(0, MAX_DETAIL))
    .filter(Boolean)
    .join('; ');
  const retryAfter = options.retryAfter;
  const retryAfterSeconds = retryAfter && /^\d{1,6}$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (errors && errors.length > 0) {
    const classes = errors.map(classOfGraphQLError);
    // The most specific class wins: auth problems first, then limits, then the rest.
    const order: UpstreamErrorClass[] = ['bad_key', 'forbidden', 'rate_limited', 'timeout', 'not_found', 'invalid_input', 'upstream_failure'];
    const chosen = order.find((c) => classes.includes(c)) ?? 'upstream_failure';
    if (chosen !== 'upstream_failure' || status < 400) {
      const serverSide = chosen === 'upstream_failure' && errors.some((e) => SERVER_ERROR_CODES.has(codeOf(e)));
      // NRDB's own timeout, in a GraphQL answer (not a proxy's 504): the query used up its `timeout`.
      const queryTimeout = chosen === 'timeout' && status < 400 && errors.some((e) => codeOf(e) === 'TIMEOUT' || /NRDB query duration exceeded/i.test(String(e.message ?? '')));
      return new UpstreamError(chosen, detail, { retryAfterSeconds, ...(serverSide ? { retryable: true } : {}), ...(queryTimeout ? { queryTimeout: true } : {}) });
    }
  }
  const text = detail || `HTTP ${status}`;
  if (status === 401) return new UpstreamError('bad_key', text);
  if (status === 403) return new UpstreamError('forbidden', text);
  if (status === 429) return new UpstreamError('rate_limited', text, { retryAfterSeconds });
  if (status === 503) return new UpstreamError('unavailable', text, { retryAfterSeconds });
  if (status === 504 || status === 408) return new UpstreamError('timeout', text);
  // Other 4xx: the request itself was refused; sending it again changes nothing.
  if (status >= 400 && status < 500) return new UpstreamError('invalid_input', text);
  return new UpstreamError('upstream_failure', text, { retryable: status >= 500 });
}

/** Classifies a thrown transport error (no HTTP answer at all); a fired signal is classified by the client. */
export function classifyTransportError(error: unknown, deadlineReached: boolean): UpstreamError {
  if (deadlineReached) return new UpstreamError('timeout', 'deadline reached before NerdGraph answered');
  // fetch wraps the socket error in `cause`; undici's request throws it directly.
  const thrown = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = [thrown?.code, thrown?.cause?.code].find((c): c is string => typeof c === 'string') ?? '';
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'].includes(code)) {
    return new UpstreamError('unavailable', `cannot connect to NerdGraph (${code})`, { sent: false });
  }
  return new UpstreamError('upstream_failure', `connection to NerdGraph failed${code ? ` (${code})` : ''}`, { retryable: true });
}

const ANSWERS: Record<UpstreamErrorClass, { status: V2Status; title: string }> = {
  bad_key: { status: 401, title: V2Titles.invalidApiKey },
  forbidden: { status: 403, title: 'The API key is not allowed to read this account' },
  not_found: { status: 404, title: 'Resource not found' },
  rate_limited: { status: 429, title: 'NerdGraph rate limit reached; retry later' },
  timeout: { status: 504, title: 'NerdGraph did not answer in time' },
  // Nobody reads it (the client is gone); it must still be a v2 answer, and not a 2xx.
  cancelled: { status: 503, title: 'The request was cancelled before NerdGraph answered' },
  invalid_input: { status: 502, title: 'NerdGraph rejected the translated request' },
  unavailable: { status: 503, title: 'NerdGraph is unavailable' },
  upstream_failure: { status: 502, title: 'NerdGraph returned an error' },
};

/** The v2 answer for an upstream failure; the detail stays in the cause, out of the body. */
export function toV2Error(error: UpstreamError): V2Error {
  const answer = ANSWERS[error.errorClass];
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  if (error instanceof OverBudget) return new V2Error(429, error.title, { cause: error, headers, kind: 'budget_refused' });
  return new V2Error(answer.status, answer.title, { cause: error, headers, kind: `upstream_${error.errorClass}` });
}
