import type { Attributes, Span } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import type { TraceHeaders, Tracing } from '../ops/tracing.ts';
import { requestTrace } from './request-due.ts';

export type { RequestTrace } from './request-due.ts';

/** One outgoing call's part of the trace: its span (tracing on) and the headers it carries. */
export interface CallTrace {
  headers: TraceHeaders;
  span: Span | undefined;
  tracing: Tracing | undefined;
}

/** The current request's trace for a call about to be made, or undefined (no trace, or tracing off and no caller header). */
export function startCallTrace(name: string, attributes: Attributes): CallTrace | undefined {
  const trace = requestTrace();
  if (trace === undefined) return undefined;
  if (trace.tracing === undefined) return { headers: trace.relay, span: undefined, tracing: undefined };
  const span = trace.tracing.clientSpan(name, trace.span, attributes);
  return { headers: trace.tracing.headersOf(span), span, tracing: trace.tracing };
}

/** Ends a call's span with the HTTP status it got, failed for a 5xx or when `errorType` names a failure. */
export function endCallTrace(call: CallTrace, status: number | undefined, errorType?: string): void {
  const { span, tracing } = call;
  if (span === undefined || tracing === undefined) return;
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (errorType !== undefined) tracing.fail(span, errorType);
  else if (status !== undefined && status >= 500) tracing.fail(span, String(status));
  span.end();
}

/** Request headers as undici takes them, with the trace headers added (replacing any of the same name). */
function withTraceHeaders(headers: Dispatcher.DispatchOptions['headers'], trace: TraceHeaders): Dispatcher.DispatchOptions['headers'] {
  const added: Record<string, string> = { traceparent: trace.traceparent, ...(trace.tracestate === undefined ? {} : { tracestate: trace.tracestate }) };
  if (headers === null || headers === undefined) return added;
  if (Array.isArray(headers)) {
    const flat = headers as string[];
    const kept: string[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const name = (flat[i] as string).toLowerCase();
      if (name !== 'traceparent' && name !== 'tracestate') kept.push(flat[i] as string, flat[i + 1] as string);
    }
    return [...kept, ...Object.entries(added).flat()];
  }
  const kept: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    const lower = name.toLowerCase();
    if (lower !== 'traceparent' && lower !== 'tracestate') kept[name] = value;
  }
  return { ...kept, ...added };
}

/**
 * An undici interceptor for the legacy API's dispatcher (src/app.ts): each request made while a
 * traced request is being answered gets a client span (method and status; never the URL, whose
 * query may carry user data) and carries its traceparent. The legacy client itself
 * (src/modes/passthrough.ts) is unchanged: its header whitelist still decides what else goes.
 */
export const traceLegacyCalls: Dispatcher.DispatchInterceptor = (dispatch) => (options, handler) => {
  const call = startCallTrace(`legacy ${options.method}`, { 'http.request.method': options.method, 'v2bridge.upstream': 'legacy_rest' });
  if (call === undefined) return dispatch(options, handler);
  let status: number | undefined;
  let ended = false;
  const end = (errorType?: string): void => {
    if (ended) return;
    ended = true;
    endCallTrace(call, status, errorType);
  };
  const traced: Dispatcher.DispatchHandlers = {
    onConnect: (abort) => handler.onConnect?.(abort),
    onError: (error) => {
      end(error.name);
      handler.onError?.(error);
    },
    onUpgrade: (statusCode, headers, socket) => handler.onUpgrade?.(statusCode, headers, socket),
    onResponseStarted: () => handler.onResponseStarted?.(),
    onHeaders: (statusCode, headers, resume, statusText) => {
      if (statusCode >= 200) status = statusCode;
      return handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
    },
    onData: (chunk) => handler.onData?.(chunk) ?? true,
    onComplete: (trailers) => {
      end();
      handler.onComplete?.(trailers);
    },
    onBodySent: (chunkSize, totalBytesSent) => handler.onBodySent?.(chunkSize, totalBytesSent),
  };
  return dispatch({ ...options, headers: withTraceHeaders(options.headers, call.headers) }, traced);
};
