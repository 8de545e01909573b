import { Hono, type Context } from 'hono';
import { Agent } from 'undici';
import { validTraceHeaders, type Tracing } from './ops/tracing.ts';
import { traceLegacyCalls, type RequestTrace } from './upstream/request-trace.ts';
import { bodyLimit } from 'hono/body-limit';
import { registerExplainRoute } from './bridge/explain.ts';
import { registerBridgeRoutes } from './bridge/parity.ts';
import type { ParityStore } from './compare/parity-store.ts';
import type { Logger } from 'pino';
import { createAccountResolver } from './caller/accounts.ts';
import type { IdentityOf } from './caller/identity.ts';
import { KeyGuard } from './caller/key-guard.ts';
import { CallerCache } from './caller/caller-cache.ts';
import { CursorCache } from './cache/cursor-cache.ts';
import { KEY_GUARD_DEFAULTS, type GatewayConfig } from './ops/config.ts';
import type { GatewayEnv } from './routes/context.ts';
import { V2Error } from './v2/errors.ts';
import { localState, type OpenedState } from './state/open.ts';
import { RecentWrites } from './state/recent-writes.ts';
import { redactKeys } from './ops/redact.ts';
import { refuseSecretHost, requestIdFor } from './caller/request-id.ts';
import { keylessTraceContext } from './caller/trace-context.ts';
import type { Mapping } from './routes/mapping.ts';
import type { GatewayMetrics } from './ops/metrics.ts';
import { writeRequestLog, type RequestLog } from './ops/logger.ts';
import { answerError } from './routes/error-answer.ts';
import { serveShadowRequest, type ShadowRequest } from './routes/shadow-translation.ts';
import { createTranslation, type Translation } from './routes/v2-router.ts';
import { requestSignal } from './routes/request-signal.ts';
import type { NerdGraph } from './upstream/client.ts';
import { errorBody, formatOfPath, respond } from './v2/format.ts';
import { MAX_BODY_BYTES } from './v2/form-body.ts';
import type { Dispatcher } from 'undici';
import type { OperationDocuments } from './upstream/documents.ts';
import { createRecordingClient } from './upstream/recording-client.ts';
import { recordableClient, runRecorded } from './upstream/recorded-run.ts';
import type { ModesOptions } from './modes/mode-context.ts';
import { createLegacyApi } from './modes/passthrough.ts';
import { createModeStrategies, type ModeStrategies } from './modes/strategies.ts';
import { mappingTable, matchRoute, type MappingTable } from './routes/resolved-route.ts';
import { createRoutingStep } from './routing/routing-step.ts';
import { REQUEST_RULE_TITLES } from '../facts/rule-titles.ts';

/**
 * Builds the gateway app from its dependencies, so tests can inject a NerdGraph client, a
 * clock, a registry or a logger. The only place where middleware order is decided.
 */
export interface GatewayDeps {
  config: Pick<
    GatewayConfig,
    'defaultAccountId' | 'publicBaseUrl' | 'cursorCacheTtlMs' | 'accountsCacheTtlMs' | 'metricNamesLookbackMs' | 'requestDeadlineMs'
  > &
    Partial<Pick<GatewayConfig, 'keyGuard'>>;
  nerdgraph: NerdGraph;
  /** The NerdGraph endpoint `nerdgraph` posts to, shown by /bridge/explain (default: the US region's). */
  nerdgraphUrl?: string;
  mappings: readonly Mapping[];
  /**
   * The NerdGraph documents `mappings` send, for /bridge/explain's recorded runs (default: the
   * documents of queries/ and mappings/, loaded on the first explain). Tests with mappings of
   * their own pass theirs.
   */
  documents?: OperationDocuments;
  /** The mappings' route table (default: built from them); a test wraps it to count its matches. */
  routeTable?: MappingTable;
  metrics: GatewayMetrics;
  logger: Logger;
  now?: () => number;
  /** Answers /readyz: is NerdGraph reachable? */
  readiness?: () => Promise<boolean>;
  /** True once the process is shutting down: /readyz answers 503 and connections close after their answer. */
  draining?: () => boolean;
  /** Migration modes (ROUTE_MODES, src/modes/); absent: every route is translated, as before. */
  modes?: ModesDeps;
  /** The parity store behind /bridge/ and /bridge/parity.json (BRIDGE_TOKEN guards them); absent: no such pages. */
  bridge?: { store: ParityStore; bridgeToken?: string; probeReportPath?: string };
  /** State shared with the other replicas (src/state/); absent: this process's memory. */
  shared?: OpenedState;
  /** REPLICA_NAME: sent as X-V2Bridge-Replica on every answer, so a load balancer's spread can be seen. */
  replicaName?: string;
  /** OpenTelemetry, loaded (src/ops/tracing.ts); absent: tracing is off, and a caller's valid traceparent is passed on unchanged. */
  tracing?: Tracing;
}

/** The modes' options (src/modes/mode-context.ts), with the legacy API named by URL; plus what dry runs need. */
export interface ModesDeps extends Omit<ModesOptions, 'legacy'> {
  /** LEGACY_REST_URL: the legacy REST API that passthrough and comparisons call. */
  legacyUrl: string;
  /** The NerdGraph documents, for the dry runs' recording client. */
  documents: OperationDocuments;
  /** undici dispatcher for legacy calls; default a keep-alive Agent. */
  dispatcher?: Dispatcher;
}

export function createApp(deps: GatewayDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const now = deps.now ?? Date.now;
  const shared = deps.shared ?? localState();
  // What the routes call: NerdGraph, or inside a recorded run (explain, a dry run) the run's recorder.
  const nerdgraph = recordableClient(deps.nerdgraph);
  const replicaName = deps.replicaName;
  const tracing = deps.tracing;
  if (replicaName !== undefined) {
    app.use(async (c, next) => {
      await next();
      c.header('X-V2Bridge-Replica', replicaName);
    });
  }

  // Every request here is a caller's: the gateway's own (src/routes/shadow-translation.ts) never pass through the app.
  app.use(async (c, next) => {
    const headers = c.req.raw.headers;
    const requestId = requestIdFor(headers);
    c.set('requestId', requestId);
    const method = c.req.method;
    // The request's trace (src/upstream/request-trace.ts): its span, or the caller's traceparent to pass on.
    const trace = traceOf(tracing, method, headers, c.req.path);
    if (trace !== undefined) c.set('trace', trace);
    // Path only (query strings carry user data); a key pasted into a path by mistake is masked.
    const entry: RequestLog = { requestId, method, route: 'unmatched', path: redactKeys(c.req.path), status: 0, ms: 0, level: 'info' };
    c.set('logEntry', entry);
    c.set('routeLabel', 'unmatched');
    c.set('format', formatOfPath(c.req.path));
    const started = performance.now();
    await next();
    // Shutting down: no further request on this connection, so the drain ends with the answers in flight.
    if (deps.draining?.()) c.header('Connection', 'close');
    const seconds = (performance.now() - started) / 1000;
    const route = c.get('routeLabel');
    deps.metrics.httpRequests.inc({ route, method, status: String(c.res.status) });
    deps.metrics.httpDuration.observe({ route, method }, seconds);
    entry.route = route;
    entry.status = c.res.status;
    entry.ms = Math.round(seconds * 1000);
    writeRequestLog(deps.logger, entry);
    if (trace !== undefined) endRequestTrace(trace, c, requestId);
  });

  // Host is reflected into Link URLs only when PUBLIC_BASE_URL does not say where the gateway lives.
  if (!deps.config.publicBaseUrl) {
    app.use((c, next) => {
      refuseSecretHost(c.req.raw.headers);
      return next();
    });
  }
  app.use(requestSignal(deps.config.requestDeadlineMs, deps.metrics));

  // GET bodies are read (and bounded) by the v2 router; bodyLimit would build a full Fetch
  // Request for every GET, which also refuses some legal request targets.
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new V2Error(413, REQUEST_RULE_TITLES.bodyTooLarge(MAX_BODY_BYTES), { kind: 'body_too_large' });
    },
  });
  app.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));

  // One per app: explain and the v2 routes share the per-address budget and the refused-key
  // memory, which are keyed by identity, so they share the identity hasher too.
  // Accounts and refusals get a second, shared copy only when it is shared (Redis): in a lone
  // process the in-process caches already are everything a memory copy would hold.
  const replicated = shared.state.backend === 'redis' ? { state: shared.state, keyOf: shared.keyOf } : undefined;
  const keyGuard = new KeyGuard(deps.config.keyGuard ?? KEY_GUARD_DEFAULTS, undefined, replicated);
  const identityOf = shared.identityOf;

  const accounts = createAccountResolver({
    nerdgraph,
    metrics: deps.metrics,
    defaultAccountId: deps.config.defaultAccountId,
    ttlMs: deps.config.accountsCacheTtlMs,
    keyGuard,
    ...(replicated ? { shared: replicated } : {}),
    // The key's user, for the budgets (per user, as NerdGraph counts): the same one when gateway.ts built them from this state.
    keyUsers: shared.keyUsers,
  });
  // Built once: the routing step, the modes and explain hand it their requests (serveTranslation).
  const translation = createTranslation(deps.mappings, {
    nerdgraph,
    metrics: deps.metrics,
    now,
    metricNamesLookbackMs: deps.config.metricNamesLookbackMs,
    cursors: new CursorCache(shared, { ttlMs: deps.config.cursorCacheTtlMs }),
    recentWrites: new RecentWrites(shared, now),
    callerCache: new CallerCache(deps.metrics, now),
    accounts,
    identityOf,
    publicBaseUrl: deps.config.publicBaseUrl,
  });
  const translateShadow = (shadow: ShadowRequest): Promise<Response> => serveShadowRequest(translation, shadow, deps.config.requestDeadlineMs);

  // The one match of a request's route, and its mode's strategy (src/routing/routing-step.ts);
  // callers are counted for /bridge/ once their key is known good (the guard's word on it).
  const table = deps.routeTable ?? mappingTable(deps.mappings);
  const strategies = deps.modes ? modeStrategiesOf(deps, deps.modes, { translation, translateShadow, identityOf: shared.identityOf, now }) : undefined;
  const callers = deps.bridge ? { sink: deps.bridge.store, fingerprintOf: shared.fingerprintOf, keyAccepted: (key: string) => keyGuard.isAccepted(identityOf(key)) } : undefined;
  app.use(createRoutingStep(table, translation, strategies, callers));

  app.get('/healthz', (c) => {
    c.set('routeLabel', '/healthz');
    return c.json({ status: 'ok' });
  });
  app.get('/readyz', async (c) => {
    c.set('routeLabel', '/readyz');
    if (deps.draining?.()) return c.json({ status: 'draining' }, 503);
    const ready = deps.readiness ? await deps.readiness().catch(() => false) : true;
    // Degraded shared state is detail, not unreadiness: the replica serves from its memory meanwhile.
    return c.json({ status: ready ? 'ready' : 'upstream unreachable', sharedState: shared.state.status() }, ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    c.set('routeLabel', '/metrics');
    return c.text(await deps.metrics.registry.metrics(), 200, { 'content-type': deps.metrics.registry.contentType });
  });

  registerExplainRoute(app, {
    resolveRoute: (path, method) => matchRoute(table, path, method),
    nerdgraph: deps.nerdgraph,
    nerdgraphUrl: deps.nerdgraphUrl,
    accounts,
    identityOf,
    translateShadow,
    ...(deps.documents ? { documents: deps.documents } : {}),
  });
  if (deps.bridge) registerBridgeRoutes(app, { ...deps.bridge, now });

  app.notFound((c) => respond(c, c.get('format'), 404, errorBody('Unknown resource')));

  // The error's fields go on the request's one log line (written by the first middleware).
  // Hono types it Error, but anything can be thrown: answerError takes it as unknown.
  app.onError((error, c) => answerError(error, c));

  return app;
}

/** The legacy client's own agent settings (src/modes/passthrough.ts), for the agent its trace interceptor wraps. */
const LEGACY_AGENT_OPTIONS = { keepAliveTimeout: 10_000, connections: 128 } as const;

const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** A caller's request's trace: with tracing on, its span (continuing the caller's trace); off, the caller's valid traceparent, if any. */
function traceOf(tracing: Tracing | undefined, method: string, headers: Headers, path: string): RequestTrace | undefined {
  // Probes and scrapes (every few seconds, from a load balancer or Prometheus) are no one's trace.
  if (tracing !== undefined && UNTRACED_PATHS.has(path)) return undefined;
  // Either header carrying a key is dropped (src/caller/trace-context.ts): never relayed, continued or exported.
  const { traceparent, tracestate } = keylessTraceContext(headers);
  if (tracing === undefined) {
    const relay = validTraceHeaders(traceparent, tracestate);
    return relay === undefined ? undefined : { open: true, relay };
  }
  // Named for its route once it is known (endRequestTrace); never the path, whose ids and query are the caller's.
  const span = tracing.requestSpan(method, traceparent, tracestate, { 'http.request.method': method });
  return { open: true, tracing, span };
}

/** The request is answered: its calls are no longer recorded under it, and its span ends with what the log line has. */
function endRequestTrace(trace: RequestTrace, c: Context<GatewayEnv>, requestId: string): void {
  trace.open = false;
  if (trace.tracing === undefined) return;
  const { span, tracing } = trace;
  const label = c.get('routeLabel');
  const route = c.get('route');
  const status = c.res.status;
  span.updateName(`${c.req.method} ${label}`);
  span.setAttribute('http.route', label);
  span.setAttribute('http.response.status_code', status);
  span.setAttribute('v2bridge.request_id', requestId);
  if (route !== undefined) span.setAttribute('v2bridge.mode', route.mode);
  const fidelity = route?.mapping?.fidelity;
  if (fidelity !== undefined) span.setAttribute('v2bridge.fidelity', fidelity);
  if (status >= 500) tracing.fail(span, String(status));
  span.end();
}

/** What the modes' strategies get from this app: its translation, for the caller's context and for shadow requests. */
interface OwnTranslation {
  translation: Translation;
  translateShadow: (shadow: ShadowRequest) => Promise<Response>;
  identityOf: IdentityOf;
  now: () => number;
}

/** The migration modes' strategies for this app: its translation, and a shadow request's as their translated side and, as a recorded run, their dry run. */
function modeStrategiesOf(deps: GatewayDeps, modes: ModesDeps, own: OwnTranslation): ModeStrategies {
  const { translateShadow } = own;
  return createModeStrategies(
    {
      options: {
        rules: modes.rules,
        // Legacy calls carry the request's trace (src/upstream/request-trace.ts).
        legacy: createLegacyApi({ baseUrl: modes.legacyUrl, dispatcher: (modes.dispatcher ?? new Agent(LEGACY_AGENT_OPTIONS)).compose(traceLegacyCalls) }),
        comparer: modes.comparer,
        sink: modes.sink,
        sampleRate: modes.sampleRate,
        concurrency: modes.concurrency,
        queueMax: modes.queueMax,
        maxBodyBytes: modes.maxBodyBytes,
        ...(modes.maxLoopUtilisation === undefined ? {} : { maxLoopUtilisation: modes.maxLoopUtilisation }),
        ...(modes.loopUtilisation ? { loopUtilisation: modes.loopUtilisation } : {}),
      },
      publicBaseUrl: deps.config.publicBaseUrl,
      requestDeadlineMs: deps.config.requestDeadlineMs,
      identityOf: own.identityOf,
      now: own.now,
      ...(deps.draining ? { draining: deps.draining } : {}),
      translation: own.translation,
      translateShadow,
      // A shadow request as a recorded run: its recorder holds this one request's calls and nothing else.
      dryRun: async (shadow) => {
        const recorder = createRecordingClient(deps.nerdgraph, modes.documents);
        const response = await runRecorded({ recorder }, () => translateShadow(shadow));
        return { response, calls: recorder.calls };
      },
    },
    deps.mappings,
  );
}
