import { fstatSync, writeSync } from 'node:fs';
import sonicBoom from 'sonic-boom';

// sonic-boom's module is the class itself (`module.exports = SonicBoom`); its typings, read as
// CommonJS under NodeNext, describe the default import as a namespace holding the class.
const SonicBoom = sonicBoom as unknown as typeof sonicBoom.SonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/**
 * The buffered log destination on a file descriptor (stdout in production). A log collector
 * that stops reading (a blocked container log driver, a stuck sidecar) must neither hold the
 * process nor grow its memory:
 * - the fd is written non-blocking, so a full pipe answers EAGAIN instead of parking the
 *   thread in the kernel, where no timer or signal handler could run;
 * - while the pipe stays full, the buffer holds at most `maxBufferBytes`; lines past it are
 *   dropped and counted (`v2bridge_log_lines_dropped_total`), and serving goes on;
 * - the final flush at exit gives up after FINAL_FLUSH_MS of a full pipe, and at once on any
 *   other error (sonic-boom's `flushSync` would retry EAGAIN, and EPIPE, forever, inside
 *   `process.exit`).
 */

/** Default bound of the lines waiting for the log destination: 8 MiB. */
export const LOG_BUFFER_MAX_BYTES = 8 * 1024 * 1024;
/** How long the synchronous flush at exit may retry a full pipe before the rest is given up. */
export const FINAL_FLUSH_MS = 500;
/** Lines are written in batches of at least this many bytes (one write per 4 KB, not per line). */
const MIN_WRITE_BYTES = 4096;
/** Longest a log line waits in the buffer while the destination reads. */
const FLUSH_EVERY_MS = 1000;

let droppedLines = 0;

/** Log lines dropped by every buffered destination of this process: buffer full, or destination gone. */
export function logLinesDropped(): number {
  return droppedLines;
}

export interface BufferedLog {
  /** The stream pino writes to. */
  stream: SonicBoom;
  /** Bytes waiting to be written. */
  bufferedBytes: () => number;
  /**
   * Writes what is buffered synchronously, giving up after `withinMs` of a full destination.
   * Never throws. Called at exit, where no event loop is left to wait on.
   */
  finalFlush: (withinMs?: number) => void;
  /** Skips the final flush: the process must exit at once (a second signal). */
  abandon: () => void;
}

/**
 * sonic-boom keeps its buffer private: its length is the figure the bound is about, and the
 * final flush writes the chunks itself (sonic-boom's own flushSync retries every error but a
 * refused EAGAIN forever, a closed pipe's EPIPE included).
 */
interface SonicBoomInternals {
  _len: number;
  /** Chunks waiting, oldest first. */
  _bufs: (string | Buffer)[];
  /** The chunk an async write has in hand (still unwritten when no write is in flight). */
  _writingBuf: string | Buffer;
  _writing: boolean;
}

/** Waits synchronously: at exit no event loop is left to wait on. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Writes the chunks to fd synchronously, retrying a full destination (EAGAIN, EBUSY) until
 * `giveUpAt`; any other error (the reader gone, the fd closed) ends it at once.
 */
function writeAllSync(fd: number, chunks: readonly (string | Buffer)[], giveUpAt: number): void {
  for (const chunk of chunks) {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(fd, rest));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if ((code !== 'EAGAIN' && code !== 'EBUSY') || Date.now() >= giveUpAt) return;
        pause(10);
      }
    }
  }
}

/**
 * A pipe or socket fd shared with another process is made non-blocking by the Node stream that
 * wraps it (libuv opens stdio pipes O_NONBLOCK). Without it a write to a full pipe blocks in
 * the kernel: sonic-boom's async write would park a thread-pool thread for good, and the exit
 * flush the main thread.
 */
function makeNonBlocking(fd: number): void {
  if (fd !== 1) return;
  try {
    const stat = fstatSync(fd);
    if (stat.isFIFO() || stat.isSocket()) void process.stdout;
  } catch {
    // No stdout to stat: sonic-boom reports what writing to it does.
  }
}

export function bufferedLog(fd: number, maxBufferBytes = LOG_BUFFER_MAX_BYTES): BufferedLog {
  makeNonBlocking(fd);
  let dead = false;
  let abandoned = false;
  const stream = new SonicBoom({
    fd,
    sync: false,
    minLength: MIN_WRITE_BYTES,
    maxLength: maxBufferBytes,
    // While serving, a full pipe is retried every 100 ms by sonic-boom's timer, off the event loop's way.
    retryEAGAIN: () => true,
  });
  stream.on('drop', () => droppedLines++);
  stream.on('error', () => {
    // The reader is gone (EPIPE) or the fd is unusable: nothing will be written again, so lines
    // are counted as dropped from now on instead of piling up behind a write that always fails.
    dead = true;
    stream.write = (): boolean => {
      droppedLines++;
      return true;
    };
  });
  setInterval(() => {
    if (!dead) stream.flush();
  }, FLUSH_EVERY_MS).unref();
  const bufferedBytes = (): number => (stream as unknown as SonicBoomInternals)._len;
  return {
    stream,
    bufferedBytes,
    finalFlush: (withinMs = FINAL_FLUSH_MS) => {
      if (dead || abandoned || bufferedBytes() === 0) return;
      const internals = stream as unknown as SonicBoomInternals;
      // A chunk an async write has in flight is the thread pool's; the rest is written here.
      const chunks = internals._writing ? internals._bufs : [internals._writingBuf, ...internals._bufs];
      // Past the bound, or once the destination fails, the lines left are lost: the exit is not held.
      writeAllSync(fd, chunks, Date.now() + withinMs);
    },
    abandon: () => {
      abandoned = true;
    },
  };
}
