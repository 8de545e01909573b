import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestError, getRequestListener } from '@hono/node-server';
import { CONTENT_TYPES, errorBody, formatOfPath, serialise } from './format.ts';
import { V2Titles } from './errors.ts';
import { LINGER_BOUNDS, isClosing, lingeringResponse, parserErrorLinger, type LingerBounds } from './lingering-close.ts';

/**
 * Every answer is v2-shaped, including those the app never sees. Five paths bypass it:
 * - bytes Node's HTTP parser cannot read ('clientError'); Node's default is a bare 400/431;
 * - a request line and Host Node accepts but @hono/node-server cannot turn into a URL
 *   (`GET foo`, a backslash, `Host: [x`, `OPTIONS *`); its default is an empty 400;
 * - `CONNECT`, which Node hands to a 'connect' listener, or closes the socket without one;
 * - an HTTP/1.1 request without `Host`, which Node answers with an empty 400 itself
 *   (`requireHostHeader`), so serveV2 turns that off and answers it here;
 * - an `Expect` other than `100-continue`, which Node answers with an empty 417 unless a
 *   'checkExpectation' listener does.
 * `serveV2` builds the server with all of them answered, and with a lingering close for request
 * bodies an answer leaves unread (lingering-close.ts: clients that write a whole oversized body
 * before reading still read the 413); src/index.ts and the tests' loopback server both use it, so
 * tests exercise the handlers production runs.
 *
 * The commonest parser error is a GET whose form body was sent with neither Content-Length
 * nor Transfer-Encoding (Node's own http client does that for `GET` + `req.write()`): the body
 * is then read as the start of a next request. A chunked or sized GET body is read normally.
 */
interface ParserError extends Error {
  code?: string;
  /** The bytes the parser was given when it failed (documented for 'clientError'). */
  rawPacket?: Buffer;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
};

const TITLES: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timed out before it was complete'],
};

const AFTER_A_REQUEST =
  'Malformed HTTP request: bytes after a request were not a request. A request body must be sent with Content-Length or Transfer-Encoding: chunked; the request before those bytes may have been processed without its body';

/** A complete HTTP/1.1 answer with a v2 JSON error body, for writing straight to a socket. */
function rawAnswer(status: number, title: string, headers: Record<string, string> = {}): string {
  const body = serialise(errorBody(title), 'json');
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return (
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\n${extra}` +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** `afterRequest`: the connection already carried a request (a bad method then is a stray body). */
export function clientErrorResponse(error: ParserError, afterRequest = true): string {
  const known = TITLES[error.code ?? ''];
  if (known) return rawAnswer(known[0], known[1]);
  if (error.code === 'HPE_INVALID_METHOD' && afterRequest) return rawAnswer(400, AFTER_A_REQUEST);
  return rawAnswer(400, 'Malformed HTTP request');
}

/** A response Node is writing on the socket (its internal slot; absent when idle). */
type SocketWithResponse = Duplex & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * A v2 error answer to a request Node parsed but the app never sees: JSON, or XML for a `.xml`
 * path. Closed like the parser's answers: what follows on such a connection is not trusted.
 */
function refuseRequest(req: IncomingMessage, res: ServerResponse, status: number, title: string): void {
  const format = formatOfPath((req.url ?? '').split('?')[0] ?? '');
  const body = serialise(errorBody(title), format);
  res.writeHead(status, { 'content-type': CONTENT_TYPES[format], 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/** RFC 9112 3.2: an HTTP/1.1 request without Host gets a 400. True when it was answered so. */
function refuseWithoutHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host !== undefined) return false;
  refuseRequest(req, res, 400, 'Malformed HTTP request: HTTP/1.1 requires a Host header');
  return true;
}

/** Methods the gateway routes (an `Allow` for the CONNECT answer). */
const ALLOWED = 'GET, HEAD, POST, PUT, DELETE';

/**
 * Installs every socket-level v2 answer on a Node HTTP server: parser errors, CONNECT and an
 * unsupported `Expect`.
 * When the previous request's answer has begun, a second answer would corrupt it: the
 * connection is only closed then (as Node's default handler does).
 */
export function answerClientErrors(server: Pick<Server, 'on'>, linger: LingerBounds = LINGER_BOUNDS): void {
  // Sockets that carried a request, so a bad method is told apart from a stray unframed body.
  const used = new WeakSet<object>();
  server.on('request', (req: IncomingMessage) => used.add(req.socket));
  const lingering = parserErrorLinger(linger);
  server.on('clientError', (error: ParserError, socket: SocketWithResponse) => {
    // ECONNRESET and friends: the client is gone, there is no one to answer.
    if (error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // Bytes after the answer (the rest of a body): discarded, so a client still writing reads it.
    if (lingering.discard(socket, error.rawPacket?.length ?? 0)) return;
    if (!socket.writable || socket._httpMessage?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(error, used.has(socket)));
    lingering.start(socket);
  });
  // Node passes CONNECT to this listener with the raw socket; without one it drops the connection.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(405, 'Method CONNECT is not allowed', { allow: ALLOWED }));
  });
  // Only an Expect other than 100-continue comes here (Node answers 100-continue itself).
  // A missing Host is checked first, as Node does before it looks at Expect.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    if (refuseWithoutHost(req, res)) return;
    refuseRequest(req, res, 417, 'Expectation Failed: the only Expect header supported is 100-continue');
  });
}

/** The answer when @hono/node-server cannot build a Request (its default is an empty 400). */
export function requestErrorResponse(error: unknown): Response {
  const [status, title] = error instanceof RequestError ? [400, 'Malformed HTTP request: invalid request target or Host header'] : [500, V2Titles.serverError];
  // Closed like the parser's answers: what follows on a connection that sent this is not trusted.
  const headers = { 'content-type': 'application/json; charset=utf-8', connection: 'close' };
  return new Response(serialise(errorBody(title), 'json'), { status, headers });
}

export type FetchHandler = Parameters<typeof getRequestListener>[0];

/**
 * `serve` of @hono/node-server, with every v2 answer installed. `onListening` gets the bound
 * address, as `serve`'s callback does. `linger` bounds the discard of unread bodies (tests
 * shorten it).
 */
export function serveV2(
  options: { fetch: FetchHandler; port: number; hostname: string; linger?: LingerBounds },
  onListening?: (info: AddressInfo) => void,
): Server {
  const listener = getRequestListener(options.fetch, { hostname: options.hostname, errorHandler: requestErrorResponse });
  // Node's own Host check answers with an empty 400: it is made here instead, with a v2 body.
  const serverOptions = { requireHostHeader: false, ServerResponse: lingeringResponse(options.linger ?? LINGER_BOUNDS) };
  const server = createServer(serverOptions, (req, res) => {
    // Pipelined behind a body being discarded on a connection an answer said it closes: not served.
    if (isClosing(req.socket)) {
      req.socket.destroy();
      return;
    }
    if (refuseWithoutHost(req, res)) return;
    void listener(req, res);
  });
  answerClientErrors(server, options.linger ?? LINGER_BOUNDS);
  server.listen(options.port, options.hostname, () => onListening?.(server.address() as AddressInfo));
  return server;
}
