import type { Logger } from 'pino';
import { createApp } from './app.ts';
import { openSharedState, type OpenedState } from './state/open.ts';
import { createThreadComparer, type ThreadComparer } from './compare/thread-comparer.ts';
import { createParityStore } from './compare/parity-store.ts';
import { shareParityStore, type SharedParityStore } from './compare/shared-parity.ts';
import { parseThresholds, ThresholdSyntaxError } from './compare/thresholds.ts';
import { ConfigError, type GatewayConfig } from './ops/config.ts';
import { createMetrics, type GatewayMetrics } from './ops/metrics.ts';
import { loadMappings } from './routes/mappings-loader.ts';
import type { RunningSandbox, Sandbox } from '../sandbox/server.ts';
import { createBudgets } from './budget/budgets.ts';
import { createNerdGraphClient } from './upstream/client.ts';
import { loadDocuments } from './upstream/documents.ts';
import { loadTracing, type Tracing } from './ops/tracing.ts';

/**
 * The gateway, wired from a validated configuration: the one place that decides what talks to
 * what (NerdGraph client, legacy API, migration modes, diff engine, parity store, /bridge/
 * pages). `npm start` (src/index.ts), the benchmark's gateway and the compare demo all build it
 * here, so none of them can drift from what production runs. With no NerdGraph configured it
 * starts the embedded sandbox on a loopback port and points both upstreams at it.
 */
export interface BuiltGateway {
  app: ReturnType<typeof createApp>;
  metrics: GatewayMetrics;
  /** The parity store; with REDIS_URL, every replica's events (src/compare/shared-parity.ts). */
  store: SharedParityStore;
  /** State shared with the other replicas (Redis with REDIS_URL, else this process's memory). */
  shared: OpenedState;
  /** The NerdGraph endpoint and the legacy REST API the gateway calls. */
  upstream: { graphqlUrl: string; legacyUrl: string };
  /** Set when running on the embedded sandbox. */
  sandbox?: { sandbox: Sandbox; server: RunningSandbox };
  /** OpenTelemetry, when an OTLP endpoint is configured (src/ops/tracing.ts); close() sends its last spans. */
  tracing?: Tracing;
  /** Stops the embedded sandbox, if any, after the last spans and parity records have gone out. */
  close(): Promise<void>;
}

export interface BuildOptions {
  logger: Logger;
  draining?: () => boolean;
  /** Node's process metrics on /metrics (the server process; off in tests and tools). */
  processMetrics?: boolean;
  /** The clock of the gateway and of the embedded sandbox (default Date.now). */
  now?: () => number;
}

async function startEmbeddedSandbox(config: GatewayConfig, now: (() => number) | undefined): Promise<{ sandbox: Sandbox; server: RunningSandbox }> {
  const { createSandbox, parseDivergences } = await import('../sandbox/server.ts');
  const { parseApiKeys } = await import('../sandbox/data.ts');
  const invalid = (name: string, error: unknown): ConfigError => new ConfigError(`Invalid configuration:\n  ${name}: ${(error as Error).message}`);
  let apiKeys;
  let diverge;
  try {
    apiKeys = config.sandbox.apiKeys ? parseApiKeys(config.sandbox.apiKeys) : undefined;
  } catch (error) {
    throw invalid('SANDBOX_API_KEYS', error);
  }
  try {
    diverge = parseDivergences(config.sandbox.diverge.join(','));
  } catch (error) {
    throw invalid('SANDBOX_DIVERGE', error);
  }
  const sandbox = createSandbox({
    seed: config.sandbox.seed,
    apmApps: config.sandbox.apmApps,
    diverge,
    legacyJitter: config.sandbox.legacyJitter,
    ...(apiKeys ? { apiKeys } : {}),
    ...(now ? { now } : {}),
  });
  return { sandbox, server: await sandbox.listen(0, '127.0.0.1') };
}

/**
 * The diff engine on its own thread (src/compare/thread-comparer.ts), started with the first
 * comparison. COMPARE_THRESHOLDS checked at start-up, so a typo stops the process instead of
 * hiding mismatches.
 */
function comparerFor(config: GatewayConfig): ThreadComparer {
  try {
    return createThreadComparer({ thresholds: parseThresholds(config.compare.thresholds ?? '') });
  } catch (error) {
    if (error instanceof ThresholdSyntaxError) throw new ConfigError(`Invalid configuration:\n  COMPARE_THRESHOLDS: ${error.message}`);
    throw error;
  }
}

/** How long a shutdown waits for the last spans to be taken (the SDK's own export timeout is 10 s, past a drain's 8 s). */
const TRACING_SHUTDOWN_MS = 2_000;

async function stopTracing(tracing: Tracing): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, TRACING_SHUTDOWN_MS);
    timer.unref();
  });
  await Promise.race([tracing.shutdown().catch(() => undefined), bound]);
  clearTimeout(timer);
}

/** Throws ConfigError for settings that only make sense together with the mappings or upstreams. */
export async function buildGateway(config: GatewayConfig, options: BuildOptions): Promise<BuiltGateway> {
  const comparer = comparerFor(config);
  if (config.nerdgraphUrl && (config.sandbox.diverge.length > 0 || config.sandbox.legacyJitter)) {
    options.logger.warn('SANDBOX_DIVERGE and SANDBOX_LEGACY_JITTER only shape the embedded sandbox: ignored with a real NerdGraph');
  }
  // Loaded only when configured: with tracing off, no OpenTelemetry module is ever imported.
  const tracing = config.tracing === undefined ? undefined : await loadTracing(config.tracing);
  const embedded = config.nerdgraphUrl ? undefined : await startEmbeddedSandbox(config, options.now);
  let shared: OpenedState | undefined;
  let store: SharedParityStore | undefined;
  try {
    const graphqlUrl = config.nerdgraphUrl ?? `${embedded?.server.url}/graphql`;
    // LEGACY_REST_URL, else the region's host (config.ts), else the sandbox's legacy face.
    const legacyUrl = config.legacyRestUrl ?? (embedded?.server.url as string);
    const metrics = createMetrics({ defaultMetrics: options.processMetrics ?? false });
    shared = openSharedState(config.sharedState, metrics, options.now);
    const documents = loadDocuments();
    const nerdgraph = createNerdGraphClient({
      url: graphqlUrl,
      documents,
      metrics,
      timeoutMs: config.upstreamTimeoutMs,
      retries: config.upstreamRetries,
      microCache: { ...config.microCache, identityOf: shared.identityOf, shared },
      budget: createBudgets({ ...shared, limits: config.budgets, metrics, callBoundMs: config.upstreamTimeoutMs }),
    });
    const mappings = await loadMappings();
    const ownStore = createParityStore({ mappings, registry: metrics.registry, maxRecords: config.parityRecordsMax, ...(options.now ? { now: options.now } : {}) });
    store = shareParityStore(ownStore, shared, metrics.registry);
    const app = createApp({
      config,
      modes: {
        rules: config.routeModes,
        legacyUrl,
        comparer: (input) => comparer.compare(input),
        sink: store,
        sampleRate: config.compare.sampleRate,
        concurrency: config.compare.concurrency,
        queueMax: config.compare.queueMax,
        maxBodyBytes: config.compare.maxBodyBytes,
        maxLoopUtilisation: config.compare.maxLoopUtilisation,
        documents,
      },
      bridge: { store, probeReportPath: config.probeReportPath, ...(config.bridgeToken ? { bridgeToken: config.bridgeToken } : {}) },
      shared,
      ...(config.replicaName ? { replicaName: config.replicaName } : {}),
      ...(tracing ? { tracing } : {}),
      nerdgraph,
      nerdgraphUrl: graphqlUrl,
      mappings,
      metrics,
      logger: options.logger,
      ...(options.now ? { now: options.now } : {}),
      ...(options.draining ? { draining: options.draining } : {}),
      readiness: async () => {
        // Any HTTP answer (even 401/405) proves NerdGraph is reachable; no key is sent.
        const response = await fetch(graphqlUrl, { method: 'GET', signal: AbortSignal.timeout(2000) });
        await response.body?.cancel();
        return true;
      },
    });
    return {
      app,
      metrics,
      store,
      shared,
      upstream: { graphqlUrl, legacyUrl },
      ...(embedded ? { sandbox: embedded } : {}),
      ...(tracing ? { tracing } : {}),
      close: async () => {
        // Judgements still pending are cut first (not recorded), so none lands after the store's last publish.
        await comparer.close();
        // What this replica has not published yet goes out before the state closes.
        await store?.close();
        await shared?.state.close();
        await embedded?.server.close();
        // The last spans (the drained requests') go out; an unreachable collector neither fails nor holds the shutdown.
        if (tracing) await stopTracing(tracing);
      },
    };
  } catch (error) {
    if (tracing) await stopTracing(tracing);
    await comparer.close();
    await store?.close();
    await shared?.state.close();
    await embedded?.server.close();
    throw error;
  }
}
