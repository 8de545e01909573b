import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics, on a registry per app so tests stay isolated. Labels are route
 * patterns, operation names and outcome classes only: never raw paths, ids or keys.
 */
export interface GatewayMetrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route' | 'method'>;
  upstreamRequests: Counter<'operation' | 'outcome'>;
  upstreamDuration: Histogram<'operation'>;
  cacheLookups: Counter<'cache' | 'result'>;
  scopeViolations: Counter<'operation'>;
  droppedItems: Counter<'operation'>;
  refusedKeyHits: Counter;
  keyVerificationsLimited: Counter;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'v2bridge_' });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'v2bridge_http_requests_total',
      help: 'Inbound requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'v2bridge_http_request_duration_seconds',
      help: 'Inbound request duration by route pattern',
      labelNames: ['route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    upstreamRequests: new Counter({
      name: 'v2bridge_upstream_requests_total',
      help: 'NerdGraph requests sent, by operation and outcome (ok or an error class)',
      labelNames: ['operation', 'outcome'],
      registers,
    }),
    upstreamDuration: new Histogram({
      name: 'v2bridge_upstream_request_duration_seconds',
      help: 'NerdGraph request duration by operation',
      labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    cacheLookups: new Counter({
      name: 'v2bridge_cache_lookups_total',
      help: 'Cache lookups by cache and result (hit, miss, coalesced)',
      labelNames: ['cache', 'result'],
      registers,
    }),
    droppedItems: new Counter({
      name: 'v2bridge_upstream_items_dropped_total',
      help: 'List items left out because NerdGraph returned them in a shape v2 cannot show (e.g. no id)',
      labelNames: ['operation'],
      registers,
    }),
    scopeViolations: new Counter({
      name: 'v2bridge_account_scope_violations_total',
      help: 'Entities NerdGraph returned from an account other than the resolved one (dropped)',
      labelNames: ['operation'],
      registers,
    }),
    refusedKeyHits: new Counter({
      name: 'v2bridge_refused_key_hits_total',
      help: 'Requests answered from the refused-key cache (a key NerdGraph refused moments ago), with no NerdGraph call',
      registers,
    }),
    keyVerificationsLimited: new Counter({
      name: 'v2bridge_key_verifications_limited_total',
      help: 'Requests answered 429 because their client address asked to verify too many unknown API keys this minute',
      registers,
    }),
  };
}
