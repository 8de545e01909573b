import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

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

export function createLogger(level: LevelWithSilent, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'v2-bridge' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
