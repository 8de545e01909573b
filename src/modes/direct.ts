import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { concatChunks, type CapturedBody, type OnCut } from './capture.ts';
import type { LegacyAnswer } from './passthrough.ts';

/**
 * The legacy answer written straight to Node's response, when the request came through
 * @hono/node-server: status and kept headers with `writeHead`, the undici body piped to the
 * socket. The Fetch path (a web stream in a Response, which the adapter then reads back) costs
 * a web-stream hop per chunk and, for a body in more than one chunk, a timer the adapter waits
 * on before its first write; this path has neither.
 *
 * The Response returned carries the real status (the access log and metrics read it) and the
 * adapter's "already sent" header, so the adapter writes nothing more.
 *
 * - A client that leaves mid-body closes the response: the undici body is destroyed, which
 *   aborts the upstream request.
 * - An upstream failure mid-body, or the request's deadline passing before the body's end (the
 *   legacy call aborts its body, src/modes/passthrough.ts), destroys the response, so the socket
 *   is cut: a truncated body never looks complete (its Content-Length or chunked framing stays
 *   unfinished).
 */
const ALREADY_SENT_HEADER = [...RESPONSE_ALREADY_SENT.headers.keys()][0] ?? 'x-hono-already-sent';

export interface DirectCapture {
  /** Bytes kept for the comparison; past them nothing is kept (the body still streams). */
  maxBytes: number;
  /** Once the client's answer has finished ('finish'), never when it was cut or failed. */
  onDone(captured: CapturedBody): void;
  /** The answer was cut instead: by the client leaving (`byCaller`), or by the legacy body failing or reaching the deadline. */
  onCut?: OnCut;
}

/** The Node response to write to, when there is one that has not started answering. */
export function directOutgoing(outgoing: ServerResponse | undefined, method: string): ServerResponse | undefined {
  // HEAD: Hono answers it by re-wrapping the GET answer, which would lose the marker; there is no body to stream anyway.
  if (method === 'HEAD' || outgoing === undefined || typeof outgoing.writeHead !== 'function' || outgoing.headersSent) return undefined;
  return outgoing;
}

export function sendDirect(outgoing: ServerResponse, answer: LegacyAnswer, extraHeaders: Readonly<Record<string, string>>, capture?: DirectCapture): Response {
  outgoing.writeHead(answer.status, { ...answer.headers, ...extraHeaders });
  const body = answer.body;
  if (body === null) {
    outgoing.end();
  } else {
    // pipe, not pipeline(): pipeline builds an AbortController per call and a DOMException when
    // it ends, a measurable share of a small answer's cost. The two failure paths, by hand:
    body.pipe(outgoing);
    // Whichever comes first says who cut the answer (each side's end then follows from the other's).
    let cut = false;
    // the upstream failed mid-body, or its deadline passed (passthrough.ts aborts it): cut the
    // socket, so the client sees a truncated answer as one;
    body.once('error', (error) => {
      if (!cut && !outgoing.writableFinished) {
        cut = true;
        capture?.onCut?.(error, false);
      }
      outgoing.destroy();
    });
    // the client left (closed before the answer finished): destroying the undici body aborts the upstream request.
    outgoing.once('close', () => {
      if (outgoing.writableFinished) return;
      if (!cut) {
        cut = true;
        capture?.onCut?.(undefined, true);
      }
      body.destroy();
    });
  }
  if (capture) {
    // The tee: a second 'data' listener sees every chunk pipe() hands on, in order.
    const kept = body === null ? null : keepChunks(body, capture.maxBytes);
    outgoing.once('finish', () => capture.onDone(lazyCapture(kept, performance.now())));
  }
  return alreadySent(answer.status);
}

/** The body joined only when the shadow work reads it: work shed at its start never pays for the copy. */
function lazyCapture(kept: (() => Uint8Array | null) | null, endedAt: number): CapturedBody {
  let bytes: Uint8Array | null | undefined;
  return {
    get bytes() {
      if (bytes === undefined) bytes = kept === null ? new Uint8Array(0) : kept();
      return bytes;
    },
    endedAt,
  };
}

/** Copies of the body's chunks up to maxBytes; the getter gives them as one array, or null past maxBytes. */
function keepChunks(body: Readable, maxBytes: number): () => Uint8Array | null {
  let kept: Buffer[] | null = [];
  let size = 0;
  const keep = (chunk: Buffer): void => {
    size += chunk.byteLength;
    if (size <= maxBytes) {
      kept?.push(chunk);
      return;
    }
    kept = null;
    body.off('data', keep);
  };
  body.on('data', keep);
  return () => (kept === null ? null : concatChunks(kept, size));
}

/**
 * The adapter's "written already" answer, with the real status. The adapter swaps in its own
 * lightweight Response class, and writes a bodiless one of those without looking for the
 * marker header; reading `body` turns it into a plain Response, which the adapter checks for
 * the marker (a no-op for a plain Response).
 */
function alreadySent(status: number): Response {
  // One per status, shared by every answer with it: nothing changes it (Hono copies a finalized
  // Response before setting a header on it), and building one costs a Response and its Headers.
  let marker = alreadySentMarkers.get(status);
  if (marker === undefined) {
    marker = new Response(null, { status, headers: { [ALREADY_SENT_HEADER]: 'true' } });
    void marker.body;
    alreadySentMarkers.set(status, marker);
  }
  return marker;
}

/** By status: the legacy API's statuses are 200 to 599 (passthrough.ts refuses others), so at most 400 entries. */
const alreadySentMarkers = new Map<number, Response>();
