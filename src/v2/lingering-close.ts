import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Lingering close: a client that writes its whole body before it reads (Python's http.client,
 * most scripts) must still read an answer given before that body was read, such as the 413 for a
 * body over the limit, a 401, or a v2 400 for a malformed request.
 *
 * Without it the connection is reset. When the answer has `Connection: close`, Node closes the
 * socket once the answer is written (`destroySoon()`); otherwise @hono/node-server does so (the
 * same way) 500 ms later if the body has not ended. Either way the body is still arriving, and
 * closing a socket with unread bytes makes the kernel send a reset, which also throws away the
 * answer the client has not read yet (it sees EPIPE or ECONNRESET). Node's own discard of an
 * unread body does not help: it is skipped once anything read the body, and the web stream
 * @hono/node-server builds over it (which Hono's bodyLimit reads) pauses the request again
 * whenever its queue is full; @hono/node-server's own drain stalls on that too.
 *
 * So once an answer ends before its request body did, the rest of the body is read and thrown
 * away (as nginx does), within bounds: a connection that is to be closed is closed when the body
 * has ended; one whose body ended before anything closed it stays open for the next request.
 * Past `maxBytes` discarded or `maxMs`, the connection is closed at once, so no client can stream
 * an endless body into it. The answers to bytes Node's parser cannot read (client-error.ts)
 * linger the same way (`parserErrorLinger`).
 *
 * Known limit: a connection kept alive after such an answer (a 413 without Connection: close)
 * stays usable only if the rest of its body arrives within @hono/node-server's own drain, 500 ms;
 * past that the adapter closes it, once the discard has ended, so its answer is still read.
 */
export interface LingerBounds {
  /** Most bytes of one request body discarded after its answer. */
  maxBytes: number;
  /** Longest wait for the rest of the body after the answer, in ms. */
  maxMs: number;
}

export const LINGER_BOUNDS: LingerBounds = { maxBytes: 16 * 1024 * 1024, maxMs: 2000 };

/** How a discard ended: the whole body was read, or a bound, an error or a disconnect stopped it. */
type DiscardOutcome = 'ended' | 'stopped';

/** Reads and throws away the rest of a request body. */
function discardRest(req: IncomingMessage, bounds: LingerBounds): Promise<DiscardOutcome> {
  // A destroyed request delivers nothing more (Node stops reading the socket for it).
  if (req.destroyed) return Promise.resolve('stopped');
  return new Promise((resolve) => {
    let discarded = 0;
    const onData = (chunk: Buffer): void => {
      discarded += chunk.length;
      if (discarded > bounds.maxBytes) settle('stopped');
    };
    const onEnd = (): void => settle('ended');
    const onClose = (): void => settle(req.complete ? 'ended' : 'stopped');
    const onError = (): void => settle('stopped');
    const timer = setTimeout(() => settle('stopped'), bounds.maxMs);
    // The timer alone does not keep the process alive (a shutdown closes the connection anyway).
    timer.unref();
    function settle(outcome: DiscardOutcome): void {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      resolve(outcome);
    }
    // Readers the answer left behind (a web stream, an async iterator) would pause the request
    // again: they are dropped, as Node's own discard drops 'data' listeners.
    req.removeAllListeners('data');
    req.removeAllListeners('readable');
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onError);
    req.resume();
  });
}

/** The discard in progress on a connection, if any. */
const discards = new WeakMap<Socket, Promise<DiscardOutcome>>();
/** Connections whose destroySoon() waits for a discard (installed once, on the first one). */
const waitingToClose = new WeakSet<Socket>();
/**
 * Connections the server has said it closes, still open while a body is discarded. Node goes on
 * parsing them: a request pipelined behind the body must not be served (RFC 9112 §9.6), least of
 * all a write nobody will read the answer to.
 */
const closing = new WeakSet<Socket>();

/** Was this connection's close already decided (its last answer said so)? Its further requests are not served. */
export function isClosing(socket: Socket): boolean {
  return closing.has(socket);
}

/**
 * Node (after an answer with Connection: close) and @hono/node-server close a connection with
 * destroySoon(): end it once the writes are out, then destroy it. While a body is being
 * discarded, the write side is ended at once (the client sees the answer is complete) and the
 * socket destroyed only when the discard is over.
 */
function closeAfterDiscard(socket: Socket): void {
  if (waitingToClose.has(socket)) return;
  waitingToClose.add(socket);
  const closeAfterWrites = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    const discarding = discards.get(socket);
    if (discarding === undefined) {
      closeAfterWrites();
      return;
    }
    closing.add(socket);
    socket.end();
    void discarding.then(closeAfterWrites);
  };
}

/** Called when an answer is complete: if its request body is still arriving, discards the rest. */
function lingerAfterAnswer(req: IncomingMessage, bounds: LingerBounds): void {
  const socket = req.socket as Socket | null;
  if (req.complete || socket === null || socket.destroyed) return;
  closeAfterDiscard(socket);
  const discarding = discardRest(req, bounds);
  discards.set(socket, discarding);
  void discarding.then((outcome) => {
    if (discards.get(socket) === discarding) discards.delete(socket);
    // Mid-body: the connection cannot carry another request, and must not read on.
    if (outcome === 'stopped') socket.destroy();
  });
}

/**
 * The ServerResponse class for `createServer({ ServerResponse })`: every answer, whichever
 * listener gives it ('request', 'checkExpectation'), lingers over the body it leaves unread.
 */
export function lingeringResponse(bounds: LingerBounds = LINGER_BOUNDS) {
  return class LingeringResponse extends ServerResponse {
    // Node also passes the server's response options (highWaterMark, rejectNonStandardBodyWrites):
    // serveV2 sets neither, so the defaults this leaves are the ones it would get.
    constructor(req: IncomingMessage) {
      super(req);
      // 'prefinish': the answer is complete; Node's 'finish' handling, which closes, comes after.
      this.once('prefinish', () => lingerAfterAnswer(req, bounds));
    }
  };
}

/**
 * The lingering close after an answer to a parser error ('clientError'). Node goes on reading
 * such a connection and reports each further chunk as another parser error, with the chunk as
 * `rawPacket`: those chunks are the discard. Where the body ends is unknown (the request could
 * not be parsed), so the connection lingers until the client closes it or a bound is reached.
 */
export function parserErrorLinger(bounds: LingerBounds = LINGER_BOUNDS) {
  const discardedBytes = new WeakMap<Duplex, number>();
  return {
    /** The answer was written and the write side ended: discard from here on. */
    start(socket: Duplex): void {
      discardedBytes.set(socket, 0);
      const timer = setTimeout(() => socket.destroy(), bounds.maxMs);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
    },
    /** A chunk after the answer: false if this connection got no answer yet. Past the bound, it is destroyed. */
    discard(socket: Duplex, bytes: number): boolean {
      const discarded = discardedBytes.get(socket);
      if (discarded === undefined) return false;
      discardedBytes.set(socket, discarded + bytes);
      if (discarded + bytes > bounds.maxBytes) socket.destroy();
      return true;
    },
  };
}
