import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { logLinesDropped } from './log-destination.ts';

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
  /** Shared-state operations served from this process's memory because Redis failed or was down. */
  sharedStateFallbacks: Counter<'operation'>;
  /** 1 while this replica serves shared state from memory (Redis slow or gone), else 0. */
  sharedStateDegraded: Gauge;
  sharedStateTransitions: Counter<'to'>;
  /** NerdGraph budgets (src/budget/): every call's decision: sent at once, sent after queueing, refused (429). */
  budgetDecisions: Counter<'budget' | 'result'>;
  budgetWaitSeconds: Histogram<'budget'>;
  /** NerdGraph calls this replica has in flight. */
  nerdgraphInFlight: Gauge;
  /** NerdGraph calls this replica has queued for a concurrency slot (their caller's 25 are taken). */
  nerdgraphQueued: Gauge;
  /** Log lines the stdout buffer dropped (src/ops/log-destination.ts). */
  logLinesDropped: Counter;
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
      help: 'Cache lookups by cache and result (hit, miss, coalesced; bypassed: a recorded run, explain or a dry run, which caches neither answer nor learn from)',
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
    sharedStateFallbacks: new Counter({
      name: 'v2bridge_shared_state_fallbacks_total',
      help: 'Shared-state operations served from this replica\'s memory because Redis failed, timed out or was down',
      labelNames: ['operation'],
      registers,
    }),
    sharedStateDegraded: new Gauge({
      name: 'v2bridge_shared_state_degraded',
      help: '1 while this replica keeps its state in memory because Redis is slow or gone; 0 when shared (or when no REDIS_URL is set)',
      registers,
    }),
    sharedStateTransitions: new Counter({
      name: 'v2bridge_shared_state_transitions_total',
      help: 'Changes of the shared state between Redis (to=redis) and this replica\'s memory (to=memory)',
      labelNames: ['to'],
      registers,
    }),
    budgetDecisions: new Counter({
      name: 'v2bridge_budget_decisions_total',
      help: 'NerdGraph budget decisions by budget (concurrency, nrql_account, nrql_fair_share: calls that asked for the account reserve, identical_query) and result (immediate, queued, refused)',
      labelNames: ['budget', 'result'],
      registers,
    }),
    budgetWaitSeconds: new Histogram({
      name: 'v2bridge_budget_wait_seconds',
      help: 'Time NerdGraph calls waited in a budget queue before being sent or refused',
      labelNames: ['budget'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    nerdgraphInFlight: new Gauge({
      name: 'v2bridge_nerdgraph_in_flight',
      help: 'NerdGraph calls this replica has in flight',
      registers,
    }),
    nerdgraphQueued: new Gauge({
      name: 'v2bridge_nerdgraph_queued',
      help: 'NerdGraph calls this replica has queued for a concurrency slot',
      registers,
    }),
    logLinesDropped: new Counter({
      name: 'v2bridge_log_lines_dropped_total',
      help: 'Log lines dropped because the log destination did not read (its buffer was at LOG_BUFFER_MAX_BYTES) or was gone',
      registers,
      // The process's one count, read at each scrape: the destination outlives every app.
      collect() {
        this.reset();
        this.inc(logLinesDropped());
      },
    }),
  };
}
