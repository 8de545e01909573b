import type { CursorCache } from '../cache/cursor-cache.ts';
import type { GatewayContext } from './context.ts';
import type { Caller } from '../caller/identity.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { NerdGraph } from '../upstream/client.ts';
import type { V2Format } from '../v2/format.ts';
import type { V2Params } from '../v2/params.ts';

/** What a route strategy needs from the app (built once in app.ts). */
export interface RouteDeps {
  nerdgraph: NerdGraph;
  metrics: GatewayMetrics;
  cursors: CursorCache;
  now: () => number;
  /** How far back metric names are looked for (NerdGraph keeps no list of every name). */
  metricNamesLookbackMs: number;
}

/** One inbound v2 request, parsed and authorised. */
export interface RouteRequest {
  c: GatewayContext;
  caller: Caller;
  accountId: number;
  params: V2Params;
  format: V2Format;
  pathParams: Record<string, string>;
  /** Absolute URL as the client should see it (gateway origin, raw path and query). */
  publicUrl: string;
}
