import type { ServerResponse } from 'node:http';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { concatChunks, type CapturedBody } from './capture.ts';
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
 * - A client that leaves mid-body closes the response: pipeline destroys the undici body,
 *   which aborts the upstream request.
 * - An upstream failure mid-body destroys the response, so the socket is cut: a truncated body
 *   never looks complete (its Content-Length or chunked framing stays unfinished).
 */
const ALREADY_SENT_HEADER = [...RESPONSE_ALREADY_SENT.headers.keys()][0] ?? 'x-hono-already-sent';

export interface DirectCapture {
  /** Bytes kept for the comparison; past them nothing is kept (the body still streams). */
  maxBytes: number;
  /** Once the client's answer has finished ('finish'), never when it was cut or failed. */
  onDone(captured: CapturedBody): void;
}

/** The Node response to write to, when there is one that has not started answering. */
export function directOutgoing(outgoing: ServerResponse | undefined, method: string): ServerResponse | undefined {
  // HEAD: Hono answers it by re-wrapping the GET answer, which would lose the marker; there is no body to stream anyway.
  if (method === 'HEAD' || outgoing === undefined || typeof outgoing.writeHead !== 'function' || outgoing.headersSent) return undefined;
  return outgoing;
}

export function sendDirect(outgoing: ServerResponse, answer: LegacyAnswer, extraHeaders: Readonly<Record<string, string>>, capture?: DirectCapture): Response {
  outgoing.writeHead(answer.status, { ...answer.headers, ...extraHeaders });
  if (answer.body === null) {
    outgoing.end();
    if (capture) outgoing.once('finish', () => capture.onDone({ bytes: new Uint8Array(0), endedAt: performance.now() }));
  } else if (capture) {
    const tee = new CaptureTee(capture.maxBytes);
    pipeline(answer.body, tee, outgoing, (error) => {
      if (error) outgoing.destroy();
      else capture.onDone({ bytes: tee.bytes(), endedAt: performance.now() });
    });
  } else {
    pipeline(answer.body, outgoing, (error) => {
      if (error) outgoing.destroy();
    });
  }
  return alreadySent(answer.status);
}

/**
 * The adapter's "written already" answer, with the real status. The adapter swaps in its own
 * lightweight Response class, and writes a bodiless one of those without looking for the
 * marker header; reading `body` turns it into a plain Response, which the adapter checks for
 * the marker (a no-op for a plain Response).
 */
function alreadySent(status: number): Response {
  const marker = new Response(null, { status, headers: { [ALREADY_SENT_HEADER]: 'true' } });
  void marker.body;
  return marker;
}

/** Passes every chunk on untouched, keeping copies up to maxBytes. */
class CaptureTee extends Transform {
  private kept: Buffer[] | null = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.kept !== null) {
      this.size += chunk.byteLength;
      if (this.size > this.maxBytes) this.kept = null;
      else this.kept.push(chunk);
    }
    callback(null, chunk);
  }

  /** The whole body, or null when it was longer than maxBytes. */
  bytes(): Uint8Array | null {
    return this.kept === null ? null : concatChunks(this.kept, this.size);
  }
}
