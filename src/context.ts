import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { V2Format } from './v2/format.ts';

/** Per-request values set by the gateway's middleware, typed for every handler. */
export interface GatewayVariables {
  requestId: string;
  log: Logger;
  /** Route pattern for metrics and logs (never the raw path: ids and queries stay out). */
  routeLabel: string;
  /** Representation for the answer, errors included. */
  format: V2Format;
}

export type GatewayEnv = { Variables: GatewayVariables };
export type GatewayContext = Context<GatewayEnv>;
