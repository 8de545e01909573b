import { requestDue } from '../upstream/request-due.ts';
import type { AnswerSnapshot } from '../compare/types.ts';
import type { GatewayContext } from '../routes/context.ts';
import { captureBody } from './capture.ts';
import { publicOriginOf, shadowHeaders, streamedBody, targetOf } from './caller-request.ts';
import { directOutgoing, sendDirect, type DirectCapture } from './direct.ts';
import type { ModeContext } from './mode-context.ts';
import { responseOf, type LegacyAnswer, type LegacyBody } from './passthrough.ts';
import { readSnapshot } from './shadow.ts';

/** The legacy side of every mode: the caller's request sent to the legacy REST API, its answer sent back. */

/** The caller's request, sent to the legacy API: its answer, body not yet read. */
export function exchange(modes: ModeContext, c: GatewayContext, body: LegacyBody): Promise<LegacyAnswer> {
  return modes.options.legacy.exchange({
    method: c.req.method,
    target: targetOf(c),
    headers: c.req.raw.headers,
    requestId: c.get('requestId'),
    body,
    // The request's deadline covers the legacy answer's body too (request-signal.ts stops
    // watching once the handler has returned, which is before a streamed body has ended).
    dueAt: requestDue() ?? performance.now() + modes.requestDeadlineMs,
    signal: c.get('signal'),
    // Worked out only for an answer with a Link to re-point (the request's origin means parsing its URL).
    publicOrigin: modes.publicBaseUrl ?? (() => publicOriginOf(c, undefined)),
  });
}

/**
 * The legacy answer to the caller: written straight to Node's response when served over HTTP
 * (src/modes/direct.ts), else as a Fetch Response (app.request()). `capture` tees the body
 * for a comparison and hears when the caller's answer is done.
 */
export function answerCaller(modes: ModeContext, c: GatewayContext, answer: LegacyAnswer, capture?: DirectCapture): Response {
  const outgoing = directOutgoing(c.env?.outgoing, c.req.method);
  if (outgoing !== undefined) {
    const extra: Record<string, string> = { 'x-request-id': c.get('requestId') };
    if (modes.draining?.()) extra.connection = 'close';
    return sendDirect(outgoing, answer, extra, capture);
  }
  const response = responseOf(answer);
  response.headers.set('x-request-id', c.get('requestId'));
  if (capture === undefined) return response;
  const captured = captureBody(response.body, capture.maxBytes, capture.onDone, capture.onCut);
  return new Response(captured, { status: response.status, headers: response.headers });
}

/** passthrough: the legacy API answers, the body streamed both ways. */
export async function servePassthrough(modes: ModeContext, c: GatewayContext): Promise<Response> {
  return answerCaller(modes, c, await exchange(modes, c, streamedBody(c)));
}

/** One more legacy call for a comparison (a read), under its own deadline. */
export async function legacyAgain(modes: ModeContext, c: GatewayContext, label: string, body: Uint8Array | null): Promise<AnswerSnapshot> {
  const started = performance.now();
  const answer = await modes.options.legacy.forward({
    method: c.req.method === 'HEAD' ? 'GET' : c.req.method,
    target: targetOf(c),
    headers: shadowHeaders(c),
    requestId: c.get('requestId'),
    body,
    // One deadline for the whole call, body included: a legacy API that stalls mid-body must not hold a slot.
    dueAt: started + modes.requestDeadlineMs,
    publicOrigin: publicOriginOf(c, modes.publicBaseUrl),
  });
  const snapshot = await readSnapshot(answer, started, modes.options.maxBodyBytes);
  modes.options.sink.observeSide(label, 'legacy', snapshot.ms / 1000);
  return snapshot;
}
