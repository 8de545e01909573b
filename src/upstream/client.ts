import { ClientError, GraphQLClient } from 'graphql-request';
import type { GatewayMetrics } from '../metrics.ts';
import type { OperationDocuments } from './documents.ts';
import { UpstreamError, classifyAnswer, classifyTransportError, isRetryable, type GraphQLErrorLike } from './errors.ts';

/**
 * The NerdGraph client. Every call carries one deadline (an AbortSignal that really aborts
 * the HTTP request); reads are retried on retryable classes within that deadline; mutations
 * are sent at most once. The API key is passed per call and only ever placed in the
 * `Api-Key` request header: it is in no error, log field or metric this module produces.
 */
export interface UpstreamCall {
  operation: string;
  variables: Record<string, unknown>;
  apiKey: string;
  /** Cancels the call when the inbound request goes away. */
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

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });

export function createNerdGraphClient(options: NerdGraphClientOptions): NerdGraph {
  const client = new GraphQLClient(options.url, {
    errorPolicy: 'all',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function attempt<T>(call: UpstreamCall, text: string, signal: AbortSignal, deadline: AbortSignal): Promise<T> {
    const stopTimer = options.metrics.upstreamDuration.startTimer({ operation: call.operation });
    let outcome = 'ok';
    try {
      const response = await client.rawRequest<T>({
        query: text,
        variables: call.variables,
        requestHeaders: { 'api-key': call.apiKey, 'newrelic-requesting-services': 'v2-bridge' },
        signal,
      });
      const errors = response.errors as GraphQLErrorLike[] | undefined;
      if ((errors && errors.length > 0) || response.data === undefined || response.data === null) {
        throw classifyAnswer(response.status, errors ?? [{ message: 'empty answer' }]);
      }
      return response.data;
    } catch (error) {
      const upstream = withoutKey(toUpstreamError(error, deadline.aborted), call.apiKey);
      outcome = upstream.errorClass;
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
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = call.signal ? AbortSignal.any([deadline, call.signal]) : deadline;
      // A mutation may have reached NerdGraph even when the answer was lost: never resend it.
      const maxAttempts = document.kind === 'mutation' ? 1 : 1 + options.retries;
      for (let attemptNo = 1; ; attemptNo++) {
        try {
          return await attempt<T>(call, document.text, signal, deadline);
        } catch (error) {
          if (!(error instanceof UpstreamError) || !isRetryable(error.errorClass) || attemptNo >= maxAttempts || signal.aborted) {
            throw error;
          }
          const backoffMs = Math.min(2000, (error.retryAfterSeconds ?? 0) * 1000 || 50 * 2 ** attemptNo);
          await sleep(backoffMs, signal);
          if (signal.aborted) throw new UpstreamError('timeout', 'deadline reached while waiting to retry');
        }
      }
    },
  };
}

/** Upstream messages go to logs; an upstream that echoes the key must not put it there. */
function withoutKey(error: UpstreamError, apiKey: string): UpstreamError {
  if (!error.detail.includes(apiKey)) return error;
  return new UpstreamError(error.errorClass, error.detail.split(apiKey).join('[redacted]'), error.retryAfterSeconds);
}

function toUpstreamError(error: unknown, deadlineReached: boolean): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error instanceof ClientError) {
    const response = error.response;
    return classifyAnswer(response.status, response.errors as GraphQLErrorLike[] | undefined, response.headers?.get?.('retry-after'));
  }
  return classifyTransportError(error, deadlineReached);
}
