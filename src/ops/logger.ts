import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { bufferedLog, type BufferedLog } from './log-destination.ts';

/**
 * Structured JSON logs. The gateway never hands headers, URLs with query strings or keys to
 * the logger; the redaction list is a second line of defence should that ever change.
 */
export const REDACTED_PATHS = [
  'apiKey',
  '*.apiKey',
  'headers["api-key"]',
  'headers["x-api-key"]',
  '*.headers["api-key"]',
  '*.headers["x-api-key"]',
  'req.headers',
];

/**
 * The access-log writer beside each logger createLogger builds: the same level, fields and
 * destination, without the redaction pass. A RequestLog has none of the redacted keys (apiKey,
 * headers) by its type and its values are sanitised where they are set, so the pass could never
 * change an access line; it cost about 40 µs and 8 KB of garbage per request (a profile of the
 * passthrough route).
 */
const accessLoggers = new WeakMap<Logger, Logger>();

function withAccessLogger(logger: Logger, options: { level: LevelWithSilent; base: Record<string, string> }, destination: DestinationStream): Logger {
  accessLoggers.set(logger, pino(options, destination));
  return logger;
}

let stdout: BufferedLog | undefined;

/**
 * The process's one stdout destination, buffered: one write per 4 KB of lines instead of one
 * per request line (that write syscall was 7% of the samples in a profile of the show route),
 * bounded while stdout does not read (src/ops/log-destination.ts), flushed at least every second
 * and, within a bound, on exit. The first call sets the buffer's bound.
 */
export function stdoutLog(maxBufferBytes?: number): BufferedLog {
  if (stdout) return stdout;
  const log = bufferedLog(1, maxBufferBytes);
  process.once('exit', () => log.finalFlush());
  stdout = log;
  return log;
}

export function createLogger(level: LevelWithSilent, destination: DestinationStream = stdoutLog().stream): Logger {
  const plain = { level, base: { service: 'v2-bridge' } };
  const options = { ...plain, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return withAccessLogger(pino(options, destination), plain, destination);
}

/**
 * Everything logged about one request, gathered while it runs and written once at its end
 * as one flat line (no child logger per request). The error handler adds the error's fields.
 */
export interface RequestLog {
  requestId: string;
  method: string;
  /** Route pattern, never the raw path. */
  route: string;
  /** Path only, key-shaped text masked; no query string. */
  path: string;
  status: number;
  ms: number;
  /** The line's level: info, or warn/error when the error handler says so. */
  level: 'info' | 'warn' | 'error';
  /** V2Error kind, for an error answer. */
  kind?: string;
  /** V2 error title sent to the client. */
  title?: string;
  upstreamClass?: string;
  /** Sanitised upstream detail (UpstreamError.detail). */
  upstreamDetail?: string;
  /** What the answer did without, and how (e.g. a failed metric name look-up: found = names with data). */
  degraded?: string;
  /** An unhandled error: its name and stack frames only (a message can quote request data). */
  err?: { name: string; frames: string };
}

/** Keys pino redacts (REDACTED_PATHS); a RequestLog may never have them, so its line needs no redaction pass. */
type RedactedKey = 'apiKey' | 'headers' | 'req';
// Compile-time check: adding a redacted key to RequestLog fails here.
const requestLogHasNoRedactedKey: Extract<keyof RequestLog, RedactedKey> extends never ? true : never = true;
void requestLogHasNoRedactedKey;

export function writeRequestLog(logger: Logger, entry: RequestLog): void {
  const { level, ...fields } = entry;
  // A logger not built by createLogger (a test's own) keeps its own redaction.
  const access = accessLoggers.get(logger) ?? logger;
  if (access !== logger && !logger.isLevelEnabled(level)) return;
  access[level](fields, 'request');
}
