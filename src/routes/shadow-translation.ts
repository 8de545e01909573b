import { Context } from 'hono';
import { getPath } from 'hono/utils/url';
import type { RequestLog } from '../ops/logger.ts';
import { requestTrace } from '../upstream/request-due.ts';
import { formatOfPath } from '../v2/format.ts';
import type { GatewayEnv, GatewayContext } from './context.ts';
import { answerOfCut, underRequestDeadline, type RequestSignals } from './request-signal.ts';
import type { ResolvedRoute } from './resolved-route.ts';
import { serveTranslation, type Translation } from './v2-router.ts';

/**
 * A shadow request: one the gateway makes of its own translation, for a request it is serving
 * (a comparison's translated side, a write's dry run, an explained request). It is handed
 * straight to the translation (serveTranslation) on a context of its own, never sent through
 * the app: so it is always translated, matched never (it carries the route of the request it
 * serves), and it reaches no middleware, so the access log, the metrics, the cancellation counts
 * and the callers' and usage counts never see it. It has its own deadline (REQUEST_DEADLINE_MS
 * from its start) and follows a shutdown's; a dry run or an explained request records instead
 * of sending when the caller runs it inside a recorded run (src/upstream/recorded-run.ts).
 */
export interface ShadowRequest {
  /** Its method, URL, headers (the key among them) and body, as the translation reads them. */
  request: Request;
  /** The route of the request it serves, resolved once already. */
  route: ResolvedRoute;
  /** The gateway's id of the request it serves: its answer carries it. */
  requestId: string;
  /** The request it serves, when that one is still waiting for it (explain's): it ends the shadow request too. */
  parent?: AbortSignal;
}

/** The shadow request's answer, errors answered as v2 answers them; `deadlineMs` is REQUEST_DEADLINE_MS. */
export async function serveShadowRequest(translation: Translation, shadow: ShadowRequest, deadlineMs: number): Promise<Response> {
  // The caller's mode was for the caller's request; the gateway's own is translated.
  const route: ResolvedRoute = { ...shadow.route, mode: 'translate' };
  let answer: Response | undefined;
  // Its calls join the trace of the request it serves, while that one is answered.
  const cut = await underRequestDeadline(deadlineMs, { parent: shadow.parent, trace: requestTrace() }, async (signals) => {
    answer = await serveTranslation(translation, shadowContext(shadow, route, signals), route);
  });
  // serveTranslation never rejects, so an answer is always set once underRequestDeadline resolved.
  return answerOfCut(cut, answer as Response);
}

/** The context the translation reads for a shadow request: what the first middleware and the request signal set for a caller's. */
function shadowContext(shadow: ShadowRequest, route: ResolvedRoute, signals: RequestSignals): GatewayContext {
  const { request, requestId } = shadow;
  const path = getPath(request);
  // No Node request or response: a shadow request has no socket, and its client is the gateway.
  const c = new Context<GatewayEnv>(request, { path, env: {} });
  c.set('requestId', requestId);
  // Filled in as for a caller's request, and never written: a shadow request has no log line.
  const entry: RequestLog = { requestId, method: request.method, route: 'unmatched', path: '', status: 0, ms: 0, level: 'info' };
  c.set('logEntry', entry);
  c.set('routeLabel', 'unmatched');
  c.set('format', formatOfPath(path));
  c.set('signal', signals.signal);
  c.set('deadline', signals.deadline);
  c.set('route', route);
  return c;
}
