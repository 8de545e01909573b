import { Writable } from 'node:stream';
import { createApp, type GatewayDeps } from '../../src/app.ts';
import type { GatewayConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { loadTestDocuments, loadTestMappings, type TestRoutes } from './fixture-routes.ts';
import type { OpenedState } from '../../src/state/open.ts';

/** Shared wiring for tests: a gateway app in-process, pointed at any NerdGraph URL. */
export const FIXED_NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
export const DEMO_KEY = 'NRAK-SANDBOX-DEMO';
export const MULTI_KEY = 'NRAK-SANDBOX-MULTI';
export const SECONDARY_KEY = 'NRAK-SANDBOX-SECONDARY';
export const PRIMARY_ACCOUNT = 1000001;
export const SECONDARY_ACCOUNT = 1000002;

export interface TestGateway {
  app: ReturnType<typeof createApp>;
  metrics: GatewayMetrics;
  /** Every log line written, as raw JSON text. */
  logs: string[];
  /** Sum of v2bridge_upstream_requests_total, optionally for one operation. */
  upstreamCount(operation?: string): Promise<number>;
}

type ConfigOverrides = Partial<
  Pick<GatewayConfig, 'defaultAccountId' | 'publicBaseUrl' | 'cursorCacheTtlMs' | 'accountsCacheTtlMs' | 'metricNamesLookbackMs' | 'keyGuard'>
>;

export async function createTestGateway(options: {
  nerdgraphUrl: string;
  /** The client's per-call bound; also the request deadline unless `deadlineMs` is given. */
  timeoutMs?: number;
  /** REQUEST_DEADLINE_MS. */
  deadlineMs?: number;
  retries?: number;
  config?: ConfigOverrides;
  now?: () => number;
  /** MICRO_CACHE_MS; 0 (default here) so tests that change the sandbox between reads see the change. */
  microCacheMs?: number;
  /** State shared with other gateways (replicas); default: this app's own memory. */
  shared?: OpenedState;
  /** A parity store behind /bridge/ (its callers counted by the routing step); default none. */
  bridge?: GatewayDeps['bridge'];
  /** The mapping table served (default real; stage tests serve the fixture routes, test/support/fixture-routes.ts). */
  routes?: TestRoutes;
}): Promise<TestGateway> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const metrics = createMetrics();
  const documents = loadTestDocuments();
  const nerdgraph = createNerdGraphClient({
    url: options.nerdgraphUrl,
    documents,
    metrics,
    timeoutMs: options.timeoutMs ?? 5_000,
    retries: options.retries ?? 0,
    microCache: { ttlMs: options.microCacheMs ?? Number(process.env.TEST_MICRO_CACHE_MS ?? 0), maxBytes: 64 * 1024 * 1024, identityOf: createIdentityHasher() },
  });
  const app = createApp({
    config: {
      defaultAccountId: undefined,
      publicBaseUrl: undefined,
      cursorCacheTtlMs: 300_000,
      accountsCacheTtlMs: 300_000,
      metricNamesLookbackMs: 7 * 86_400_000,
      requestDeadlineMs: options.deadlineMs ?? options.timeoutMs ?? 5_000,
      ...options.config,
    },
    nerdgraph,
    nerdgraphUrl: options.nerdgraphUrl,
    mappings: await loadTestMappings(options.routes ?? 'real'),
    documents,
    metrics,
    logger: createLogger('debug', sink),
    now: options.now ?? (() => FIXED_NOW),
    ...(options.shared ? { shared: options.shared } : {}),
    ...(options.bridge ? { bridge: options.bridge } : {}),
  });
  return {
    app,
    metrics,
    logs,
    async upstreamCount(operation) {
      const metric = await metrics.upstreamRequests.get();
      return metric.values.filter((v) => operation === undefined || v.labels.operation === operation).reduce((n, v) => n + v.value, 0);
    },
  };
}

export async function startSandbox(options: { apmApps?: number; seed?: number; ingestClock?: () => number } = {}) {
  const sandbox = createSandbox({ seed: options.seed ?? 7, apmApps: options.apmApps ?? 450, now: () => FIXED_NOW, ...(options.ingestClock && { ingestClock: options.ingestClock }) });
  const server = await sandbox.listen(0, '127.0.0.1');
  return { sandbox, url: server.url, graphqlUrl: `${server.url}/graphql`, close: server.close };
}
