import type { RequestLog } from '../ops/logger.ts';
import { redactKeys } from '../ops/redact.ts';
import { UpstreamError, toV2Error } from '../upstream/errors.ts';
import { V2Error, V2Titles } from '../v2/errors.ts';
import { errorBody, respond } from '../v2/format.ts';
import type { GatewayContext } from './context.ts';

/**
 * The one error handler: the v2 answer to anything a request's handling threw, its fields on the
 * request's one log line (written by the first middleware). The app's onError (src/app.ts) and
 * the translation (src/routes/v2-router.ts, serveTranslation) both answer with it.
 */
export function answerError(error: unknown, c: GatewayContext): Response {
  const v2 = error instanceof V2Error ? error : error instanceof UpstreamError ? toV2Error(error) : undefined;
  // Always set by the first middleware or the shadow context; the fallback only guards a failure before it ran.
  const entry: Partial<RequestLog> = c.get('logEntry') ?? {};
  if (v2) {
    entry.level = v2.status >= 500 ? 'warn' : 'info';
    entry.kind = v2.kind;
    // Titles may quote NerdGraph's refusals; a key-shaped text in them never leaves.
    const title = redactKeys(v2.title);
    entry.title = title;
    if (v2.cause instanceof UpstreamError) {
      entry.upstreamClass = v2.cause.errorClass;
      entry.upstreamDetail = v2.cause.detail;
    }
    return respond(c, c.get('format') ?? 'json', v2.status, errorBody(title, v2.messages), v2.headers);
  }
  // A bug: log its name and stack frames only (a message can quote request data), answer v2's generic 500.
  entry.level = 'error';
  entry.kind = 'unhandled';
  entry.err =
    error instanceof Error
      ? { name: error.name, frames: (error.stack ?? '').split('\n').slice(1).join('\n') }
      : { name: `thrown ${error === null ? 'null' : typeof error}`, frames: '' };
  return respond(c, c.get('format') ?? 'json', 500, errorBody(V2Titles.serverError));
}
