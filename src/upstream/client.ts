import { Agent, type Dispatcher } from 'undici';
import { pause } from './pause.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { prepareDocument, requestBody, type OperationDocument, type OperationDocuments, type PreparedDocument } from './documents.ts';
import { ReadMicroCache, type Sized } from './micro-cache.ts';
import { SharedReadLayer } from './shared-read-layer.ts';
import type { SharedState, StateKeyer, StatusReporting } from '../state/shared-state.ts';
import { requestDue } from './request-due.ts';
import { OverBudget, UpstreamError } from './errors.ts';
import { firedError, sendAttempt, type AttemptTarget, type TracedAttempt } from './attempt.ts';
import { endCallTrace, startCallTrace } from './request-trace.ts';
import { LOOKUP_TIMEOUT_S, lookupFits, nrqlTimeoutFor, timeoutRetryCanFinish } from './nrql-timeout.ts';
import type { UpstreamCall } from './upstream-call.ts';

export type { UpstreamCall } from './upstream-call.ts';

/**
 * The NerdGraph client: one POST of pre-serialised GraphQL JSON per attempt with undici's
 * `request` on a keep-alive agent, the answer read once as text and parsed once. Every call
 * has one deadline covering its retries: the inbound request's `signal` when given (its own
 * deadline or its client's disconnect), else a single `timeoutMs` timer. Reads are retried on
 * transient failures within that deadline, never past a Retry-After the server asked for;
 * mutations are sent at most once; nothing is sent once the signal has fired. The API key is
 * passed per call and only ever placed in the `Api-Key` request header: it is in no error
 * detail, log field or metric this module produces.
 *
 * This module holds the call: its deadline, retries, budgets and the micro-cache in front of it
 * (micro-cache.ts, shared-read-layer.ts). One attempt (the POST, parsing, classifying) is
 * attempt.ts.
 */
export interface NerdGraph {
  call<T = unknown>(call: UpstreamCall): Promise<T>;
  /**
   * The read micro-cache's window and its write generation (bumped by every mutation), for
   * answers derived from its reads; undefined when reads are not cached.
   */
  readWindow?(): { ttlMs: number; generation: number } | undefined;
  /**
   * readWindow(), once writes through other replicas up to now are accounted for (a shared
   * read with Redis; readWindow() itself otherwise). For answers kept beside the micro-cache.
   */
  freshReadWindow?(): Promise<{ ttlMs: number; generation: number } | undefined>;
}

/**
 * NerdGraph's limits, kept before each attempt is sent (src/budget/). `admit` resolves, once
 * the attempt may go, with the release to call when it has ended (however it ended); or rejects
 * with an UpstreamError marked not sent (OverBudget: v2's 429) when it may not go in time.
 */
export interface NerdGraphBudget {
  admit(call: UpstreamCall, document: OperationDocument, deadline: AbortSignal): Promise<() => void>;
}

export interface NerdGraphClientOptions {
  url: string;
  documents: OperationDocuments;
  metrics: GatewayMetrics;
  timeoutMs: number;
  retries: number;
  /** undici dispatcher for the requests; by default a keep-alive Agent per client. */
  dispatcher?: Dispatcher;
  /**
   * Identical reads inside `ttlMs` are answered once (micro-cache.ts); `identityOf` keys them
   * by the caller's HMAC, never by the key. Absent or `ttlMs` 0: every read goes to NerdGraph.
   * `shared` (state shared by the replicas, with its keyer; `identityOf` must then be the
   * replicas' common one): when it is Redis, identical reads are answered once for all
   * replicas, and a write through any replica empties every replica's micro-cache.
   */
  microCache?: { ttlMs: number; maxBytes: number; identityOf: (apiKey: string) => string; shared?: { state: SharedState & StatusReporting; keyOf: StateKeyer } };
  /** Absent: every attempt is sent at once. */
  budget?: NerdGraphBudget;
}

/** Longest wait before a retry; a server asking for more gets its 429/503 passed on instead. */
const MAX_BACKOFF_MS = 2000;

/** The per-call deadline when the caller gave no signal: one timer for the whole call. */
function ownDeadline(timeoutMs: number): { signal: AbortSignal; abort: (reason: unknown) => void; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('NerdGraph call deadline reached', 'TimeoutError')), timeoutMs);
  return { signal: controller.signal, abort: (reason) => controller.abort(reason), clear: () => clearTimeout(timer) };
}

/** One call, retries included, under one deadline: each attempt admitted by the budgets, then sent to `target`. */
async function sendCall<T>(options: NerdGraphClientOptions, target: AttemptTarget, call: UpstreamCall, document: PreparedDocument): Promise<Sized<T>> {
  // Never sent at all: nothing reached NerdGraph, so even a write certainly changed nothing.
  if (call.signal?.aborted) throw firedError(call.signal, false);
  const own = call.signal ? undefined : ownDeadline(options.timeoutMs);
  const deadline = call.signal ?? (own as { signal: AbortSignal }).signal;
  // When the answer is due: the inbound request's due time, within this call's own bound.
  const due = Math.min(performance.now() + options.timeoutMs, requestDue() ?? Number.POSITIVE_INFINITY);
  // Documents whose nrql fields take $timeout get, per attempt, the seconds left; one with an
  // optional look-up gets its own short timeout, and leaves the look-up out when the time left
  // cannot cover it or the caller said so (`withKnown: false`) (nrql-timeout.ts).
  let sentTimeoutS: number | undefined;
  const bodyNow = (): string => {
    if (!document.takesNrqlTimeout) return requestBody(document, call.variables);
    const remainingMs = due - performance.now();
    sentTimeoutS = nrqlTimeoutFor(remainingMs);
    if (!document.takesLookupTimeout) return requestBody(document, { ...call.variables, timeout: sentTimeoutS });
    const withKnown = call.variables.withKnown !== false && lookupFits(remainingMs);
    return requestBody(document, { ...call.variables, timeout: sentTimeoutS, knownTimeout: LOOKUP_TIMEOUT_S, withKnown });
  };
  // A mutation may have reached NerdGraph even when the answer was lost: never resend it.
  const maxAttempts = document.kind === 'mutation' ? 1 : 1 + options.retries;
  // The failure that asked for a retry: what the caller learns when the retry is never sent.
  let earlier: UpstreamError | undefined;
  let heldBack = false;
  let attemptStarted = performance.now();
  try {
    for (let attemptNo = 1; ; attemptNo++) {
      try {
        // One span per attempt (request-trace.ts; tracing off: undefined, or the caller's traceparent passed on).
        const traced = startCallTrace(`NerdGraph ${call.operation}`, {
          'graphql.operation.name': call.operation,
          'graphql.operation.type': document.kind,
          'v2bridge.attempt': attemptNo,
        });
        // Each attempt sent is admitted by the budgets first (a refused one is never sent).
        let release: (() => void) | undefined;
        const waitStarted = traced?.span === undefined ? 0 : performance.now();
        try {
          release = await options.budget?.admit(call, document, deadline);
        } catch (refused) {
          // Held back (no slot, or no time left to send it): no more attempts. For a retry,
          // the call failed as the earlier attempt did (what a client can act on).
          heldBack = true;
          if (traced !== undefined) endCallTrace(traced, undefined, refused instanceof UpstreamError ? refused.errorClass : 'budget');
          throw refused instanceof OverBudget && earlier !== undefined ? earlier : refused;
        }
        traced?.span?.setAttribute('v2bridge.budget_wait_ms', Math.round(performance.now() - waitStarted));
        const seen: TracedAttempt | undefined = traced === undefined ? undefined : { headers: traced.headers, status: undefined };
        try {
          // Fired while queued: this attempt never goes (an earlier one did, if any).
          if (deadline.aborted) throw firedError(deadline, attemptNo > 1);
          attemptStarted = performance.now();
          const answer = await sendAttempt<T>(target, call, bodyNow(), deadline, seen);
          if (traced !== undefined) endCallTrace(traced, seen?.status);
          return answer;
        } catch (failed) {
          if (traced !== undefined) endCallTrace(traced, seen?.status, failed instanceof UpstreamError ? failed.errorClass : 'error');
          throw failed;
        } finally {
          release?.();
        }
      } catch (error) {
        if (heldBack || !(error instanceof UpstreamError) || !error.retryable || attemptNo >= maxAttempts || deadline.aborted) throw error;
        earlier = error;
        const askedMs = (error.retryAfterSeconds ?? 0) * 1000;
        if (askedMs > MAX_BACKOFF_MS) throw error;
        const backoffMs = askedMs || 50 * 2 ** attemptNo;
        // A timeout is retried only if the retry can finish in time (nrql-timeout.ts).
        const ran = { elapsedMs: performance.now() - attemptStarted, sentTimeoutS, remainingMs: due - performance.now() - backoffMs };
        if (!timeoutRetryCanFinish(error, ran)) throw error;
        await pause(backoffMs, deadline);
        // The earlier attempt was sent; this one never will be.
        if (deadline.aborted) throw firedError(deadline, true);
      }
    }
  } finally {
    own?.clear();
  }
}

export function createNerdGraphClient(options: NerdGraphClientOptions): NerdGraph {
  const dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  // Documents are prepared once here (those from loadDocuments already are).
  const documents = new Map<string, PreparedDocument>();
  for (const [name, document] of options.documents) {
    documents.set(name, 'jsonPrefix' in document ? (document as PreparedDocument) : prepareDocument(document));
  }

  const target: AttemptTarget = { url: options.url, dispatcher, metrics: options.metrics, lastAnswers: new Map() };

  const send = <T>(call: UpstreamCall, document: PreparedDocument): Promise<Sized<T>> => sendCall<T>(options, target, call, document);

  const micro =
    options.microCache && options.microCache.ttlMs > 0
      ? { cache: new ReadMicroCache({ ...options.microCache, metrics: options.metrics }), identityOf: options.microCache.identityOf }
      : undefined;
  // Across replicas only with Redis: in a lone process the in-process cache already is all of it.
  const sharedState = options.microCache?.shared;
  const acrossReplicas =
    micro && sharedState && sharedState.state.backend === 'redis'
      ? new SharedReadLayer({ state: sharedState.state, keyOf: sharedState.keyOf, ttlMs: micro.cache.ttlMs, metrics: options.metrics })
      : undefined;
  // A write through another replica: nothing this one read before it may be served after it.
  acrossReplicas?.onWrite(() => micro?.cache.invalidate());

  /** When the call must be answered: the inbound request's due time, within the call's own bound. */
  const dueOf = (): number => Math.min(performance.now() + options.timeoutMs, requestDue() ?? Number.POSITIVE_INFINITY);

  const readWindow = (): { ttlMs: number; generation: number } | undefined =>
    micro ? { ttlMs: micro.cache.ttlMs, generation: micro.cache.writeGeneration } : undefined;

  return {
    readWindow,
    // Only across replicas: alone, readWindow() already is fresh (and costs no await).
    ...(acrossReplicas
      ? {
          async freshReadWindow() {
            // Not known from Redis (degraded): nothing may be kept beside the cache either.
            return (await acrossReplicas.freshGeneration()) === undefined ? undefined : readWindow();
          },
        }
      : {}),
    async call<T>(call: UpstreamCall): Promise<T> {
      const document = documents.get(call.operation);
      if (!document) throw new Error(`unknown NerdGraph operation ${call.operation}`);
      if (micro === undefined) return (await send<T>(call, document)).data;
      if (document.kind === 'mutation') {
        micro.cache.invalidate();
        try {
          return (await send<T>(call, document)).data;
        } finally {
          micro.cache.invalidate();
          // Before the write is answered: a read the client sends next, to any replica, sees it.
          if (acrossReplicas) await acrossReplicas.written(dueOf());
        }
      }
      if (call.signal?.aborted) throw firedError(call.signal, false);
      // Writes through other replicas answered before this call are seen before the cache is.
      const generation = acrossReplicas ? await acrossReplicas.freshGeneration() : '';
      // Degraded: no write through another replica can be ruled out, so no cache is trusted.
      if (generation === undefined) {
        options.metrics.cacheLookups.inc({ cache: 'micro', result: 'bypassed' });
        return (await send<T>(call, document)).data;
      }
      const key = `${micro.identityOf(call.apiKey)}\n${call.operation}\n${call.variablesKey === undefined ? JSON.stringify(call.variables) : `#${call.variablesKey}`}`;
      // Callers without a signal still get one deadline for their wait.
      const waiting = call.signal ?? AbortSignal.timeout(options.timeoutMs);
      // The shared call has a deadline of its own: waiters that keep arriving must not keep a
      // hung call alive (its timeout is then counted as a timeout, not as a cancellation).
      // Not AbortSignal.any([shared, AbortSignal.timeout(ms)]): on Node 20 the timeout signal
      // inside it can be garbage-collected before it fires (nodejs/node#57736), leaving a hung
      // call alive; a timer that holds its controller cannot be collected.
      const load = async (shared: AbortSignal): Promise<Sized<T>> => {
        const own = ownDeadline(options.timeoutMs);
        const stop = (): void => own.abort(shared.reason);
        if (shared.aborted) stop();
        else shared.addEventListener('abort', stop, { once: true });
        try {
          return await loadUnder(own.signal);
        } finally {
          shared.removeEventListener('abort', stop);
          own.clear();
        }
      };
      const loadUnder = (signal: AbortSignal): Promise<Sized<T>> => {
        const sendOnce = (): Promise<Sized<T>> => send<T>({ ...call, signal }, document);
        if (acrossReplicas === undefined || !acrossReplicas.shares(call.operation)) return sendOnce();
        // The variables themselves (a variablesKey names them in this process only).
        const read = {
          identity: micro.identityOf(call.apiKey),
          operation: call.operation,
          document: document.hash,
          variables: JSON.stringify(call.variables),
          apiKey: call.apiKey,
          generation,
          dueAt: dueOf(),
        };
        return acrossReplicas.read<T>(read, sendOnce, signal);
      };
      try {
        return await micro.cache.read<T>(key, load, waiting);
      } catch (error) {
        // A caller without a signal gets the client's own error, as without the micro-cache.
        if (call.signal === undefined && waiting.aborted && error === waiting.reason) throw firedError(waiting, true);
        throw error;
      }
    },
  };
}
