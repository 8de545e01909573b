import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveV2 } from './v2/client-error.ts';
import { createApp } from './app.ts';
import { ConfigError, loadConfig, type GatewayConfig } from './ops/config.ts';
import { createLogger } from './ops/logger.ts';
import { loadMappings } from './routes/mappings-loader.ts';
import { bringDeadlinesForward } from './routes/request-signal.ts';
import { createMetrics } from './ops/metrics.ts';
import { createIdentityHasher } from './caller/identity.ts';
import { createNerdGraphClient } from './upstream/client.ts';
import { loadDocuments } from './upstream/documents.ts';
import type { Comparer, ParitySink } from './modes/ports.ts';

/**
 * Process entry (`npm start`): validated configuration, then the gateway. With no NerdGraph
 * configured it starts the embedded sandbox on a loopback port and points itself at it.
 */
async function upstreamUrl(config: GatewayConfig): Promise<{ url: string; legacyUrl: string; demo?: { keys: string[] } }> {
  // LEGACY_REST_URL, else the configured NerdGraph's origin (config.ts); only the sandbox has neither.
  if (config.nerdgraphUrl) return { url: config.nerdgraphUrl, legacyUrl: config.legacyRestUrl ?? new URL(config.nerdgraphUrl).origin };
  const { createSandbox } = await import('./sandbox/server.ts');
  const { parseApiKeys } = await import('./sandbox/data.ts');
  let sandbox: ReturnType<typeof createSandbox>;
  try {
    sandbox = createSandbox({
      seed: config.sandbox.seed,
      apmApps: config.sandbox.apmApps,
      ...(config.sandbox.apiKeys ? { apiKeys: parseApiKeys(config.sandbox.apiKeys) } : {}),
    });
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  SANDBOX_API_KEYS: ${(error as Error).message}`);
  }
  // TODO(merge): pass config.sandbox.diverge and config.sandbox.legacyJitter once createSandbox takes them (helper C).
  const { url } = await sandbox.listen(0, '127.0.0.1');
  // In sandbox mode the legacy REST API is the sandbox's legacy face (unless LEGACY_REST_URL says otherwise).
  return { url: `${url}/graphql`, legacyUrl: config.legacyRestUrl ?? url, demo: { keys: [...sandbox.data.keys.keys()] } };
}

/**
 * TODO(merge): placeholders until the diff engine (src/compare/diff.ts) and the parity store
 * (src/compare/parity-store.ts) land: an exact comparison of status and body, and a sink that
 * keeps nothing.
 */
const placeholderComparer: Comparer = ({ legacy, translated }) => ({
  outcome: legacy.status === translated.status && legacy.body === translated.body ? 'match' : 'mismatch',
  differences: [],
});
const placeholderSink: ParitySink = { noteUsage() {}, record() {}, dropped() {}, observeSide() {} };

async function main(): Promise<void> {
  let config: GatewayConfig;
  let upstream: Awaited<ReturnType<typeof upstreamUrl>>;
  try {
    config = loadConfig();
    upstream = await upstreamUrl(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`v2-bridge: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const metrics = createMetrics({ defaultMetrics: true });
  const documents = loadDocuments();
  const nerdgraph = createNerdGraphClient({
    url: upstream.url,
    documents,
    metrics,
    timeoutMs: config.upstreamTimeoutMs,
    retries: config.upstreamRetries,
    microCache: { ...config.microCache, identityOf: createIdentityHasher() },
  });
  let draining = false;
  let app: ReturnType<typeof createApp>;
  try {
    app = createApp({
      config,
      modes: {
        rules: config.routeModes,
        legacyUrl: upstream.legacyUrl,
        comparer: placeholderComparer,
        sink: placeholderSink,
        sampleRate: config.compare.sampleRate,
        concurrency: config.compare.concurrency,
        queueMax: config.compare.queueMax,
        maxBodyBytes: config.compare.maxBodyBytes,
        documents,
      },
      draining: () => draining,
      nerdgraph,
      mappings: await loadMappings(),
      metrics,
      logger,
      readiness: async () => {
        // Any HTTP answer (even 401/405) proves NerdGraph is reachable; no key is sent.
        const response = await fetch(upstream.url, { method: 'GET', signal: AbortSignal.timeout(2000) });
        await response.body?.cancel();
        return true;
      },
    });
  } catch (error) {
    // ROUTE_MODES rules the mappings make impossible (e.g. translating a passthrough-only route).
    if (error instanceof ConfigError) {
      process.stderr.write(`v2-bridge: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  if (!config.publicBaseUrl && !['127.0.0.1', 'localhost', '::1'].includes(config.host)) {
    // Behind a proxy, Link URLs built from the Host header would point clients (and their
    // keys) at whatever origin the request named: say where the gateway really lives.
    logger.warn('PUBLIC_BASE_URL is not set: Link headers will use the origin each request names; set it when serving beyond loopback');
  }

  const server = serveV2({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    const base = `http://${info.address.includes(':') ? `[${info.address}]` : info.address}:${info.port}`;
    logger.info({ port: info.port, upstream: upstream.demo ? 'embedded sandbox' : upstream.url }, 'v2-bridge listening');
    if (upstream.demo) {
      const demoKey = upstream.demo.keys[0] ?? '';
      process.stdout.write(
        `\nv2-bridge is running on the embedded sandbox (a simulated New Relic account).\n` +
          `  sandbox keys: ${upstream.demo.keys.join(', ')}\n` +
          `  demo key:     ${demoKey}\n` +
          `  try:          curl -H 'X-Api-Key: ${demoKey}' ${base}/v2/applications.json\n\n`,
      );
    }
  });

  // Requests in flight, so a shutdown knows what it waits for (and what a cut would drop).
  let inFlight = 0;
  // Draining: once nothing is in flight, every connection left is idle or never sent a request
  // (opened ahead by a load balancer, a TCP health check, a slowloris): closeIdleConnections()
  // leaves the latter open until the drain bound, so they are all closed then.
  const closeUnusedConnections = (): void => {
    if (inFlight === 0) server.closeAllConnections();
    else server.closeIdleConnections();
  };
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (draining) closeUnusedConnections();
    });
  });

  /**
   * SIGTERM (docker stop, Kubernetes) or SIGINT (Ctrl-C): stop accepting connections, answer
   * /readyz with 503, let the requests in flight finish (their connections close after the
   * answer; connections with no request in progress close now), then exit 0. Request deadlines
   * are brought forward to end a margin before SHUTDOWN_DRAIN_MS, so a request still waiting on
   * NerdGraph answers 504 (or "outcome unknown") rather than being cut. After SHUTDOWN_DRAIN_MS
   * whatever is still open is cut and the exit code is 1; a second signal exits at once.
   */
  const shutdown = (signal: NodeJS.Signals): void => {
    if (draining) {
      logger.warn({ signal, inFlight }, 'second signal during drain: exiting now');
      process.exit(1);
    }
    draining = true;
    logger.info({ signal, inFlight, drainMs: config.shutdownDrainMs }, 'shutting down: draining requests in flight');
    // Time left after the deadline to write the answer: up to 1 s, a quarter of a short drain.
    bringDeadlinesForward(config.shutdownDrainMs - Math.min(1000, Math.floor(config.shutdownDrainMs / 4)));
    const bound = setTimeout(() => {
      logger.warn({ inFlight }, 'drain bound reached: cutting the requests still in flight');
      server.closeAllConnections();
      process.exit(1);
    }, config.shutdownDrainMs);
    server.close(() => {
      clearTimeout(bound);
      logger.info('drained: exiting');
      process.exit(0);
    });
    closeUnusedConnections();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

await main();
