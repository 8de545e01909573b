import { ClientError, GraphQLClient } from 'graphql-request';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { redactKeys } from '../caller/redact.ts';
import type { OperationDocuments } from './documents.ts';
import { createTransport } from './transport.ts';
import { UpstreamError, classifyAnswer, classifyTransportError, isDeprecationWarning, type GraphQLErrorLike } from './errors.ts';

/**
 * The NerdGraph client. Every call carries one deadline (an AbortSignal that really aborts
 * the HTTP request) covering its retries; reads are retried on transient failures within
 * that deadline, never past a Retry-After the server asked for; mutations are sent at most
 * once. The API key is passed per call and only ever placed in the `Api-Key` request
 * header: it is in no error detail, log field or metric this module produces.
 */
export interface UpstreamCall {
  operation: string;
  variables: Record<string, unknown>;
  apiKey: string;
  /**
   * The inbound request's signal: aborted when the request's deadline passes or its client
   * disconnects. The call (retries included) stops when it fires.
   */
  signal?: AbortSignal;
}

export interface NerdGraph {
  call<T = unknown>(call: UpstreamCall): Promise<T>;
}

export interface NerdGraphClientOptions {
  url: string;
  documents: OperationDocuments;
  metrics: GatewayMetrics;
  timeoutMs: number;
  retries: number;
  fetch?: typeof fetch;
}

/** Longest wait before a retry; a server asking for more gets its 429/503 passed on instead. */
const MAX_BACKOFF_MS = 2000;

/** The caller's key, whatever its shape, and key-shaped text of any other key an upstream may echo. */
function redactor(apiKey: string): (text: string) => string {
  return (text) => redactKeys(text.split(apiKey).join('[redacted]'));
}

/** Does an answer's data hold at least one non-null top-level field? */
function hasResult(data: unknown): boolean {
  return data !== null && typeof data === 'object' && Object.values(data).some((value) => value !== null && value !== undefined);
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export function createNerdGraphClient(options: NerdGraphClientOptions): NerdGraph {
  const client = new GraphQLClient(options.url, { errorPolicy: 'all', fetch: options.fetch ?? createTransport() });

  async function attempt<T>(call: UpstreamCall, text: string, deadline: AbortSignal): Promise<T> {
    const stopTimer = options.metrics.upstreamDuration.startTimer({ operation: call.operation });
    const redact = redactor(call.apiKey);
    let outcome = 'ok';
    try {
      const response = await client.rawRequest<T>({
        query: text,
        variables: call.variables,
        requestHeaders: { 'api-key': call.apiKey, 'newrelic-requesting-services': 'v2-bridge' },
        signal: deadline,
      });
      const errors = ((response.errors ?? []) as GraphQLErrorLike[]).filter((e) => !isDeprecationWarning(e));
      if (errors.length > 0 || response.data === undefined || response.data === null) {
        const classified = classifyAnswer(response.status, errors.length > 0 ? errors : [{ message: 'empty answer' }], { redact });
        // Errors beside a non-null result: for a mutation, the write may well have happened.
        throw hasResult(response.data) ? classified.asPartial() : classified;
      }
      return response.data;
    } catch (error) {
      const upstream =
        error instanceof UpstreamError
          ? error
          : error instanceof ClientError
            ? classifyAnswer(error.response.status, error.response.errors as GraphQLErrorLike[] | undefined, {
                retryAfter: error.response.headers?.get?.('retry-after'),
                redact,
              })
            : classifyTransportError(error, deadline.aborted);
      // Stopped because nobody waits any more (an AbortError: a client left), not a timeout.
      outcome = call.signal?.aborted && (call.signal.reason as Error | undefined)?.name === 'AbortError' ? 'cancelled' : upstream.errorClass;
      throw upstream;
    } finally {
      stopTimer();
      options.metrics.upstreamRequests.inc({ operation: call.operation, outcome });
    }
  }

  return {
    async call<T>(call: UpstreamCall): Promise<T> {
      const document = options.documents.get(call.operation);
      if (!document) throw new Error(`unknown NerdGraph operation ${call.operation}`);
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const deadline = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      // A mutation may have reached NerdGraph even when the answer was lost: never resend it.
      const maxAttempts = document.kind === 'mutation' ? 1 : 1 + options.retries;
      for (let attemptNo = 1; ; attemptNo++) {
        try {
          return await attempt<T>(call, document.text, deadline);
        } catch (error) {
          if (!(error instanceof UpstreamError) || !error.retryable || attemptNo >= maxAttempts || deadline.aborted) throw error;
          const askedMs = (error.retryAfterSeconds ?? 0) * 1000;
          if (askedMs > MAX_BACKOFF_MS) throw error;
          await sleep(askedMs || 50 * 2 ** attemptNo, deadline);
          if (deadline.aborted) throw new UpstreamError('timeout', 'deadline reached while waiting to retry');
        }
      }
    },
  };
}
