import { describe, expect, it } from 'vitest';
import { captureBody, type CapturedBody } from '../../src/modes/capture.ts';
import { createShadowQueue } from '../../src/modes/shadow.ts';

/** The tee behind compare and candidate modes, and the bounded shadow queue. */
const streamOf = (...chunks: string[]): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe('captureBody', () => {
  it('passes every chunk on and reports the whole body once the reader has pulled it all', async () => {
    const done: CapturedBody[] = [];
    const captured = captureBody(streamOf('ab', 'cd'), 100, (result) => done.push(result));
    const reader = (captured as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('ab');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('cd');
    // The last chunk is out, but the reader has not asked past it: not done yet.
    expect(done).toEqual([]);
    expect((await reader.read()).done).toBe(true);
    expect(done).toHaveLength(1);
    expect(new TextDecoder().decode(done[0]?.bytes ?? undefined)).toBe('abcd');
  });

  it('keeps nothing past maxBytes but still streams everything', async () => {
    const done: CapturedBody[] = [];
    const text = await new Response(captureBody(streamOf('abc', 'def'), 4, (result) => done.push(result))).text();
    expect(text).toBe('abcdef');
    expect(done[0]?.bytes).toBeNull();
  });

  it('never reports a body the caller abandoned', async () => {
    const done: CapturedBody[] = [];
    const captured = captureBody(streamOf('ab', 'cd'), 100, (result) => done.push(result)) as ReadableStream<Uint8Array>;
    const reader = captured.getReader();
    await reader.read();
    await reader.cancel();
    expect(done).toEqual([]);
  });
});

describe('captureBody, cut short', () => {
  it('reports a source that fails mid-body as cut (never done), and errors the stream with its reason', async () => {
    const done: CapturedBody[] = [];
    const cuts: Array<[unknown, boolean]> = [];
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"half":'));
        controller.error(new Error('deadline'));
      },
    });
    const captured = captureBody(failing, 100, (result) => done.push(result), (reason, byCaller) => cuts.push([reason, byCaller])) as ReadableStream<Uint8Array>;
    await expect(new Response(captured).text()).rejects.toThrow('deadline');
    expect(done).toEqual([]);
    expect(cuts).toHaveLength(1);
    expect(cuts[0]?.[1]).toBe(false);
    expect((cuts[0]?.[0] as Error).message).toBe('deadline');
  });

  it('reports a caller that left as cut by the caller, once', async () => {
    const cuts: boolean[] = [];
    const captured = captureBody(streamOf('ab', 'cd'), 100, () => undefined, (_reason, byCaller) => cuts.push(byCaller)) as ReadableStream<Uint8Array>;
    const reader = captured.getReader();
    await reader.read();
    await reader.cancel();
    expect(cuts).toEqual([true]);
  });
});

describe('createShadowQueue', () => {
  it('runs up to its concurrency, queues up to its bound, refuses the rest', async () => {
    const queue = createShadowQueue({ concurrency: 1, queueMax: 1 });
    const releases: Array<() => void> = [];
    const ran: number[] = [];
    const job = (n: number) => () =>
      new Promise<void>((resolve) => {
        ran.push(n);
        releases.push(resolve);
      });
    expect([1, 2, 3].map((n) => queue.submit(job(n)))).toEqual([true, true, false]);
    expect(ran).toEqual([1]);
    expect(queue.pending).toBe(2);
    releases[0]?.();
    // The waiting job starts when the running one settles.
    await new Promise<void>((resolve) => {
      const check = (): void => (ran.length === 2 ? resolve() : void setImmediate(check));
      check();
    });
    expect(ran).toEqual([1, 2]);
    releases[1]?.();
  });
});
