/**
 * Tees an answer's body as it streams to the caller: the chunks pass through untouched, and up to
 * `maxBytes` of them are kept in memory. `onDone` runs once the caller has pulled the whole body
 * (the source ended and the last chunk was handed on), never when the stream was cancelled (the
 * caller left) or failed (then `onCut`): shadow work starts only after the caller's answer is done.
 */
export interface CapturedBody {
  /** The whole body, or null when it was longer than maxBytes (too large to compare). */
  bytes: Uint8Array | null;
  /** performance.now() when the last byte was handed on. */
  endedAt: number;
}

/**
 * The answer did not reach its caller whole: `byCaller` when the caller left (cancelled), else the
 * source failed or was cut at the deadline (`reason`). Never called after onDone, at most once.
 */
export type OnCut = (reason: unknown, byCaller: boolean) => void;

export function captureBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  onDone: (captured: CapturedBody) => void,
  onCut?: OnCut,
): ReadableStream<Uint8Array> | null {
  if (body === null) {
    // Nothing to stream: the answer is done once its headers are written.
    setImmediate(() => onDone({ bytes: new Uint8Array(0), endedAt: performance.now() }));
    return null;
  }
  const reader = body.getReader();
  let kept: Uint8Array[] | null = [];
  let size = 0;
  let settled = false;
  const cut = (reason: unknown, byCaller: boolean): void => {
    kept = null;
    if (settled) return;
    settled = true;
    onCut?.(reason, byCaller);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        // The source failed (or the deadline cut it): the caller's stream errors with it.
        cut(error, false);
        throw error;
      });
      if (done) {
        settled = true;
        controller.close();
        const bytes = kept === null ? null : concatChunks(kept, size);
        kept = null;
        onDone({ bytes, endedAt: performance.now() });
        return;
      }
      if (kept !== null) {
        size += value.byteLength;
        if (size > maxBytes) kept = null;
        else kept.push(value);
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      cut(reason, true);
      return reader.cancel(reason);
    },
    // Pull only when the caller reads: the end is seen once the caller asked past the last chunk.
  }, { highWaterMark: 0 });
}

/** The chunks as one array of `size` bytes. */
export function concatChunks(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
