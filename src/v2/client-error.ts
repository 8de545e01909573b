import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, serialise } from './format.ts';

/**
 * Bytes Node's HTTP parser cannot read never reach the app; Node's default answer is a bare
 * `400` with an empty body, which v2 clients report as an unreadable error. The commonest
 * cause is a GET whose form body was sent with neither Content-Length nor
 * Transfer-Encoding (Node's own http client does that for `GET` + `req.write()`): the body is
 * then read as the start of a next request. A chunked or sized GET body is read normally.
 */
interface ParserError extends Error {
  code?: string;
}

const TITLES: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timed out before it was complete'],
  HPE_INVALID_METHOD: [
    400,
    'Malformed HTTP request: bytes after a request were not a request. A request body must be sent with Content-Length or Transfer-Encoding: chunked; the request before those bytes may have been processed without its body',
  ],
};

export function clientErrorResponse(error: ParserError): string {
  const [status, title] = TITLES[error.code ?? ''] ?? [400, 'Malformed HTTP request'];
  const body = serialise(errorBody(title), 'json');
  return (
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** A response Node is writing on the socket (its internal slot; absent when idle). */
type SocketWithResponse = Duplex & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * Answers unparseable requests with a v2 error body, then closes the connection. When the
 * previous request's answer has begun, a second answer would corrupt it: the connection is
 * only closed then (as Node's default handler does).
 */
export function answerClientErrors(server: Pick<Server, 'on'>): void {
  server.on('clientError', (error: ParserError, socket: SocketWithResponse) => {
    // ECONNRESET and friends: the client is gone, there is no one to answer.
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent === true) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(error));
  });
}
