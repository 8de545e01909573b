import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Agent, type Dispatcher } from 'undici';
import { KEY_HEADERS } from '../caller/identity.ts';
import { keyFinder } from '../caller/key-disguises.ts';
import { callerKeysOf } from '../caller/request-id.ts';
import { followShutdownDeadlines } from '../routes/request-signal.ts';
import { V2Error } from '../v2/errors.ts';

/**
 * Passthrough: a request forwarded unchanged to the legacy REST API (LEGACY_REST_URL), its
 * answer streamed back unchanged.
 *
 * - Method, path, raw query and body go as they came. Of the request headers only a whitelist
 *   goes, plus the caller's key in the one key header it came in (x-api-key or api-key), and in
 *   nowhere else: not in the URL, not in any other header. X-Request-Id is the gateway's own
 *   request id (the caller's only when it was safe to keep, src/caller/request-id.ts), and a
 *   whitelisted header that carries the caller's key or any New Relic key, plain or encoded
 *   (src/caller/key-disguises.ts), is dropped: the legacy API answers as if it had not been sent.
 * - Status and body come back byte for byte and are streamed (never buffered here), with the
 *   headers a v2 client reads (content type and encoding, length, Link, ETag, Last-Modified,
 *   Cache-Control, Retry-After, every X-RateLimit-*).
 * - Link URLs that point at the legacy API are rewritten to the gateway's public origin
 *   (PUBLIC_BASE_URL or the request's origin): a client that follows `rel="next"` keeps paging
 *   through the gateway, under the same route modes, instead of leaving it for the legacy host.
 *   Only the origin (and the base path of LEGACY_REST_URL) changes; path and query stay.
 * - The request's deadline (`dueAt`) covers the whole answer, body included: past it the upstream
 *   request is aborted and the body errors with a legacy timeout (a 504 named as the legacy
 *   API's), so the caller's connection is cut rather than held. The request's signal (deadline,
 *   client gone) is followed until the answer's headers; once streaming, a client that leaves
 *   cancels the body, which aborts the upstream request.
 * - Served over HTTP, the answer is written straight to Node's response (src/modes/direct.ts);
 *   `forward` (a Fetch Response) serves app.request() and the shadow calls.
 * - Writes are sent once: nothing here retries.
 */
const REQUEST_HEADERS: readonly string[] = [
  'accept',
  'accept-encoding',
  'content-type',
  'content-length',
  'if-none-match',
  'if-modified-since',
  'user-agent',
  // (x-request-id: the gateway's own id is sent, never the caller's header.)
  // The account the caller names: without it a multi-account key would be answered (and its
  // writes made) in another account than the translation uses.
  'x-account-id',
];

const RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'link',
  'etag',
  'last-modified',
  'cache-control',
  'retry-after',
]);

/** Statuses whose answer has no body (a Response refuses one). */
const NO_BODY_STATUS: ReadonlySet<number> = new Set([101, 204, 205, 304]);

export type LegacyBody = Uint8Array | ReadableStream<Uint8Array> | Readable | null;

export interface LegacyRequest {
  method: string;
  /** Path and raw query exactly as the client sent them: `/v2/alerts_policies.json?page=2`. */
  target: string;
  /** The client's request headers; filtered here. */
  headers: Headers;
  /** Sent as X-Request-Id: the gateway's id for the request (c.get('requestId')), never the raw header. */
  requestId: string;
  body: LegacyBody;
  /** When the whole answer, body included, must have arrived (performance.now() time). */
  dueAt: number;
  /** The caller's request signal (its deadline, or the client gone), followed until the answer's headers arrive. */
  signal?: AbortSignal;
  /**
   * Where Link URLs should point instead of the legacy API (the gateway's origin). A function is
   * called only when an answer has a Link to rewrite: working out the request's origin parses its URL.
   */
  publicOrigin: string | (() => string);
}

/** A legacy answer as it arrived: status, the headers kept for the caller, and the body as undici streams it. */
export interface LegacyAnswer {
  status: number;
  /** Lower-case names; Link already re-pointed at the gateway. */
  headers: Record<string, string | string[]>;
  /** null when the answer has no body (HEAD, 204, 304: discarded already). */
  body: Readable | null;
}

export interface LegacyApi {
  readonly baseUrl: string;
  /** The legacy answer, its body a Node stream; throws a V2Error (502/503/504) when there is none. */
  exchange(req: LegacyRequest): Promise<LegacyAnswer>;
  /** The same answer as a Fetch Response (its body a web stream), for callers without a Node socket. */
  forward(req: LegacyRequest): Promise<Response>;
  close(): Promise<void>;
}

export interface LegacyApiOptions {
  /** LEGACY_REST_URL: an origin, optionally with a base path; `/v2/...` paths go under it. */
  baseUrl: string;
  dispatcher?: Dispatcher;
}

const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function createLegacyApi(options: LegacyApiOptions): LegacyApi {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Parsed once: each request then goes to the dispatcher by origin and path, not by a URL parsed again.
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const ownAgent = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 10_000, connections: 128 });
  const dispatcher: Dispatcher = options.dispatcher ?? (ownAgent as Agent);

  const exchange = async (req: LegacyRequest): Promise<LegacyAnswer> => {
    const write = WRITES.has(req.method);
    if (req.signal?.aborted) throw notSent(req.signal.reason, write);
    const headers = forwardedHeaders(req);
    // Our own abort: the caller's signal is followed only until the headers arrive; the
    // deadline, to the body's last byte (undici destroys the body with the abort's reason).
    const controller = new LegacyAbort();
    const follow = (): void => controller.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', follow, { once: true });
    let dueAt = req.dueAt;
    const expire = (): void => controller.abort(legacyTimeout(write));
    let deadline = setTimeout(expire, Math.max(0, dueAt - performance.now()));
    // A shutdown brings the deadline forward for a body still streaming too (the drain then ends with a cut, not its bound).
    const unfollow = followShutdownDeadlines((due) => {
      if (due >= dueAt) return;
      dueAt = due;
      clearTimeout(deadline);
      deadline = setTimeout(expire, Math.max(0, due - performance.now()));
    });
    const settle = (): void => {
      clearTimeout(deadline);
      unfollow();
    };
    let answer: Dispatcher.ResponseData;
    try {
      const target = plainTarget(req.target) ? { origin: base.origin, path: `${basePath}${req.target}` } : parsedTarget(`${baseUrl}${req.target}`);
      answer = await dispatcher.request({
        ...target,
        method: req.method as Dispatcher.HttpMethod,
        headers,
        // undici reads Node streams: a web stream (a Fetch body) is adapted, not buffered.
        body: req.body instanceof ReadableStream ? Readable.fromWeb(req.body as WebReadableStream<Uint8Array>) : req.body,
        signal: controller,
      });
    } catch (error) {
      settle();
      throw legacyFailure(error, controller, write);
    } finally {
      req.signal?.removeEventListener('abort', follow);
    }
    // The deadline passed or the client left just as the headers arrived: nobody reads the body.
    if (controller.aborted) {
      settle();
      answer.body.destroy();
      throw legacyFailure(new Error('aborted after the headers'), controller, write);
    }
    // A status a Fetch Response cannot carry (1xx, 6xx and beyond) is no v2 answer: a 502, before any byte is written.
    if (answer.statusCode < 200 || answer.statusCode > 599) {
      settle();
      void answer.body.dump().catch(() => undefined);
      throw legacyFailure(new Error(`status ${answer.statusCode}`), controller, write);
    }
    const kept = keptHeaders(answer.headers, baseUrl, req.publicOrigin);
    if (NO_BODY_STATUS.has(answer.statusCode) || req.method === 'HEAD') {
      settle();
      // Nothing to read; dump() discards what may be there without an error event.
      void answer.body.dump().catch(() => undefined);
      return { status: answer.statusCode, headers: kept, body: null };
    }
    // Ended, failed, cut by the deadline or abandoned by the caller: the body closes either way.
    answer.body.once('close', settle);
    return { status: answer.statusCode, headers: kept, body: answer.body };
  };

  return {
    baseUrl,
    exchange,
    async forward(req) {
      return responseOf(await exchange(req));
    },
    close: async () => {
      await ownAgent?.close();
    },
  };
}

/**
 * The legacy call's abort: what an AbortController does for it, lighter (undici takes an
 * EventEmitter signal; an AbortController builds an EventTarget and an AbortSignal per request).
 */
class LegacyAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * A target whose URL parse would change nothing: unreserved and sub-delimiter characters (not
 * `'`, which a query gets escaped), percent escapes, no dot segment (`/.`, `%2e`), no fragment.
 * undici is then handed it as it is; any other target goes through the URL parse, as it always did.
 */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@%/?[\]]*$/;
const DOT_SEGMENT = /\/\.|%2e/i;

function plainTarget(target: string): boolean {
  // (An empty query, a trailing `?`, is dropped by the parse.)
  return PLAIN_TARGET.test(target) && !DOT_SEGMENT.test(target) && !target.endsWith('?');
}

function parsedTarget(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** The answer's kept headers as Fetch Headers (a repeated header joined as Fetch joins it). */
export function headersOf(answer: Pick<LegacyAnswer, 'headers'>): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) for (const one of [value].flat()) out.append(name, one);
  return out;
}

/**
 * As a Fetch Response. Readable.toWeb: pulled as the reader reads; cancelling it (client gone)
 * destroys the undici body, which aborts the upstream request.
 */
export function responseOf(answer: LegacyAnswer): Response {
  const body = answer.body === null ? null : (Readable.toWeb(answer.body) as ReadableStream<Uint8Array>);
  return new Response(body, { status: answer.status, headers: headersOf(answer) });
}

function forwardedHeaders(req: LegacyRequest): Record<string, string> {
  const incoming = req.headers;
  // Built at most once per request, and only when there is a header to check: the caller's key
  // in any disguise, or any New Relic key.
  let carriesKey: ((value: string) => boolean) | undefined;
  const out: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    const value = incoming.get(name);
    if (value === null) continue;
    carriesKey ??= keyFinder(callerKeysOf(incoming));
    // Dropped rather than cleaned: a header with part of it cut out could mean something else.
    if (!carriesKey(value)) out[name] = value;
  }
  // undici measures a buffered body itself; a request without a body has no length to send.
  if (req.body === null || req.body instanceof Uint8Array) delete out['content-length'];
  out['x-request-id'] = req.requestId;
  // The key goes in the header it came in, and only there (the first non-empty, as callerFrom reads it).
  const keyHeader = KEY_HEADERS.find((name) => (incoming.get(name) ?? '').trim() !== '');
  if (keyHeader !== undefined) out[keyHeader] = incoming.get(keyHeader) as string;
  return out;
}

function keptHeaders(headers: Record<string, string | string[] | undefined>, baseUrl: string, gatewayOrigin: string | (() => string)): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    // undici gives header names lower-cased already.
    const lower = name.toLowerCase();
    if (value === undefined || !(RESPONSE_HEADERS.has(lower) || lower.startsWith('x-ratelimit-'))) continue;
    if (lower !== 'link') {
      out[lower] = value;
      continue;
    }
    const publicOrigin = typeof gatewayOrigin === 'string' ? gatewayOrigin : gatewayOrigin();
    out[lower] = Array.isArray(value) ? value.map((one) => rewriteLink(one, baseUrl, publicOrigin)) : rewriteLink(value, baseUrl, publicOrigin);
  }
  return out;
}

/** `<https://legacy/v2/x.json?page=2>; rel="next"` -> `<https://gateway/v2/x.json?page=2>; rel="next"`; other URLs kept. */
export function rewriteLink(link: string, baseUrl: string, publicOrigin: string): string {
  return link.replace(/<([^>]*)>/g, (whole, url: string) =>
    url === baseUrl || url.startsWith(`${baseUrl}/`) || url.startsWith(`${baseUrl}?`) ? `<${publicOrigin}${url.slice(baseUrl.length)}>` : whole,
  );
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The legacy API's lateness, in v2 terms: a 504 named as the legacy API's, never as NerdGraph's. */
function legacyTimeout(write: boolean, cause?: unknown): V2Error {
  return write
    ? new V2Error(504, 'The legacy REST API did not answer in time; the change may have been made: read before retrying', { cause, kind: 'legacy_write_unconfirmed' })
    : new V2Error(504, 'The legacy REST API did not answer in time', { cause, kind: 'legacy_timeout' });
}

/** The caller's signal fired before the legacy call was made: nothing was sent. */
function notSent(reason: unknown, write: boolean): V2Error {
  // The client left: nobody reads this answer (request-signal.ts clientClosed).
  if (reason instanceof V2Error && reason.name === 'AbortError') return reason;
  return new V2Error(504, write ? 'The request deadline passed before the legacy REST API was called; nothing was changed' : 'The request deadline passed before the legacy REST API was called', {
    cause: reason,
    kind: 'request_deadline',
  });
}

/** No legacy answer, in v2 terms; for a write, whether anything may have changed. */
function legacyFailure(error: unknown, aborted: { readonly aborted: boolean; readonly reason: unknown }, write: boolean): V2Error {
  if (aborted.aborted) {
    const reason: unknown = aborted.reason;
    // The client left (request-signal.ts clientClosed): nobody reads this answer.
    if (reason instanceof V2Error && reason.name === 'AbortError') return reason;
    // The deadline, the request's (request-signal.ts deadlineReached, whose title is NerdGraph's) or this call's own.
    return legacyTimeout(write, error);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE.has(code)) {
    return new V2Error(503, write ? 'The legacy REST API is unreachable; nothing was changed' : 'The legacy REST API is unreachable', {
      cause: error,
      kind: 'legacy_unreachable',
    });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return legacyTimeout(write, error);
  return new V2Error(502, write ? 'The legacy REST API failed to answer; the change may have been made: read before retrying' : 'The legacy REST API failed to answer', {
    cause: error,
    kind: write ? 'legacy_write_unconfirmed' : 'legacy_failure',
  });
}
