import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { RequestLog } from '../ops/logger.ts';
import type { ResolvedRoute } from './resolved-route.ts';
import type { V2Format } from '../v2/format.ts';
import type { RequestTrace } from '../upstream/request-trace.ts';

/** Per-request values set by the gateway's middleware, typed for every handler. */
export interface GatewayVariables {
  requestId: string;
  /** This request's one log line, filled in as it runs and written at its end. */
  logEntry: RequestLog;
  /** Route pattern for metrics and logs (never the raw path: ids and queries stay out). */
  routeLabel: string;
  /** Representation for the answer, errors included. */
  format: V2Format;
  /** Fires at the request's deadline or when its client leaves (src/routes/request-signal.ts). */
  signal: AbortSignal;
  /** Fires at the request's deadline only: what a write's one mutation is sent under. */
  deadline: AbortSignal;
  /**
   * The request's route, matched once by the routing step (src/routing/routing-step.ts);
   * undefined before it and for a request that is no v2 request at all (/healthz, /bridge/...).
   */
  route?: ResolvedRoute;
  /** A caller's request's trace, set by the first middleware when it has one (src/upstream/request-trace.ts). */
  trace?: RequestTrace;
}

/** Under @hono/node-server the raw request is available: needed for GET bodies (see v2-router). */
export interface GatewayBindings {
  incoming?: IncomingMessage;
  /** Its 'close' before the answer is written means the client left (src/routes/request-signal.ts). */
  outgoing?: ServerResponse;
}

export type GatewayEnv = { Variables: GatewayVariables; Bindings: GatewayBindings };
export type GatewayContext = Context<GatewayEnv>;
