import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { Writable } from 'node:stream';
import { createApp, type GatewayDeps, type ModesDeps } from '../../src/app.ts';
import type { ComparisonRecord } from '../../src/compare/types.ts';
import type { RouteMode } from '../../src/ops/route-modes.ts';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { Comparer, ParitySink } from '../../src/modes/ports.ts';
import { parseRouteModes } from '../../src/ops/route-modes.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { loadTestDocuments, loadTestMappings, type TestRoutes } from './fixture-routes.ts';
import { FIXED_NOW } from './harness.ts';
import { listenOnLoopback } from './http.ts';

/** Test wiring for the migration modes: an in-memory sink, a plain comparer, a gateway with modes. */
export interface MemorySink extends ParitySink {
  usage: Array<{ route: string; method: string; mode: RouteMode }>;
  records: ComparisonRecord[];
  drops: Array<{ route: string; method: string }>;
  sides: Array<{ route: string; side: 'legacy' | 'translated'; seconds: number }>;
  /** Every argument the sink was ever given, as JSON (for "the key is nowhere" checks). */
  seen(): string;
  /** Resolves once `count` records have arrived (event-driven; the test timeout bounds it). */
  waitForRecords(count: number): Promise<ComparisonRecord[]>;
}

export function memorySink(): MemorySink {
  const events = new EventEmitter();
  const sink: MemorySink = {
    usage: [],
    records: [],
    drops: [],
    sides: [],
    noteUsage(route, method, mode) {
      sink.usage.push({ route, method, mode });
    },
    record(record) {
      sink.records.push(record);
      events.emit('record');
    },
    dropped(route, method) {
      sink.drops.push({ route, method });
    },
    observeSide(route, side, seconds) {
      sink.sides.push({ route, side, seconds });
    },
    seen: () => JSON.stringify([sink.usage, sink.records, sink.drops, sink.sides]),
    waitForRecords(count) {
      return new Promise((resolve) => {
        const check = (): void => {
          if (sink.records.length < count) return;
          events.off('record', check);
          resolve(sink.records.slice(0, count));
        };
        events.on('record', check);
        check();
      });
    },
  };
  return sink;
}

/** Deep-equal bodies (JSON parsed when both are JSON) and statuses: match, else mismatch at the root. */
export const plainComparer: Comparer = ({ legacy, translated }) => {
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };
  const same = legacy.status === translated.status && isDeepStrictEqual(parse(legacy.body), parse(translated.body));
  return same
    ? { outcome: 'match', differences: [] }
    : { outcome: 'mismatch', differences: [{ path: '', pattern: '', kind: 'value', legacy: legacy.status, translated: translated.status, verdict: 'mismatch' }] };
};

export async function createModesGateway(options: {
  nerdgraphUrl: string;
  legacyUrl: string;
  routeModes?: string;
  sink?: MemorySink;
  comparer?: Comparer;
  sampleRate?: number;
  concurrency?: number;
  queueMax?: number;
  maxBodyBytes?: number;
  deadlineMs?: number;
  publicBaseUrl?: string;
  /** The shadow-work gate (COMPARE_MAX_LOOP_UTILISATION) and an injected utilisation source. */
  maxLoopUtilisation?: number;
  loopUtilisation?: () => number;
  /** A parity store behind /bridge/ (its callers counted by the routing step); default none. */
  bridge?: GatewayDeps['bridge'];
  /** The mapping table served (default: the fixture routes alone, test/support/fixture-routes.ts). */
  routes?: TestRoutes;
}) {
  const logs: string[] = [];
  const metrics = createMetrics();
  const documents = loadTestDocuments();
  const nerdgraph = createNerdGraphClient({
    url: options.nerdgraphUrl,
    documents,
    metrics,
    timeoutMs: 5_000,
    retries: 0,
    microCache: { ttlMs: 0, maxBytes: 1024 * 1024, identityOf: createIdentityHasher() },
  });
  const sink = options.sink ?? memorySink();
  const modes: ModesDeps = {
    rules: parseRouteModes(options.routeModes ?? ''),
    legacyUrl: options.legacyUrl,
    comparer: options.comparer ?? plainComparer,
    sink,
    sampleRate: options.sampleRate ?? 1,
    concurrency: options.concurrency ?? 2,
    queueMax: options.queueMax ?? 64,
    maxBodyBytes: options.maxBodyBytes ?? 2 * 1024 * 1024,
    ...(options.maxLoopUtilisation === undefined ? {} : { maxLoopUtilisation: options.maxLoopUtilisation }),
    ...(options.loopUtilisation ? { loopUtilisation: options.loopUtilisation } : {}),
    documents,
  };
  const app = createApp({
    config: {
      defaultAccountId: undefined,
      publicBaseUrl: options.publicBaseUrl,
      cursorCacheTtlMs: 300_000,
      accountsCacheTtlMs: 300_000,
      metricNamesLookbackMs: 7 * 86_400_000,
      requestDeadlineMs: options.deadlineMs ?? 5_000,
    },
    nerdgraph,
    mappings: await loadTestMappings(options.routes ?? 'fixtures'),
    documents,
    metrics,
    logger: createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString('utf8')), done()) })),
    now: () => FIXED_NOW,
    modes,
    ...(options.bridge ? { bridge: options.bridge } : {}),
  });
  return {
    app,
    sink,
    metrics,
    logs,
    async upstreamCount(operation?: string): Promise<number> {
      const metric = await metrics.upstreamRequests.get();
      return metric.values.filter((v) => operation === undefined || v.labels.operation === operation).reduce((n, v) => n + v.value, 0);
    },
    async callerRequests(): Promise<number> {
      const metric = await metrics.httpRequests.get();
      return metric.values.reduce((n, v) => n + v.value, 0);
    },
  };
}

/** What a loopback legacy server received. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback "legacy REST API": records every request, answers with `handle`. */
export async function startLegacyServer(handle: (req: ReceivedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>) {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      void Promise.resolve(handle(entry, res, req)).catch(() => res.destroy());
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { origin, close, received };
}
