/**
 * The sandbox: a simulated New Relic account served over real HTTP. One Hono app hosts the
 * NerdGraph-compatible face (POST /graphql) and, mounted by the gateway core, the legacy
 * REST v2 reference face; both read the same generated SandboxData.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { serve } from '@hono/node-server';
import { CONTENT_TYPES, errorBody, serialise } from './legacy/wire.ts';
import { Hono } from 'hono';
import { generateSandboxData, type WorldSize } from './data.ts';
import { createRandom } from './world/draws.ts';
import type { SandboxBehaviours } from './behaviours.ts';
import type { DivergenceName } from './divergence.ts';
import { LEGACY_ROUTES } from './legacy/routes.ts';
import { writeCounts, type WriteCounts } from './write-counts.ts';
import { createReadCounter, readCounts, resetReadCounts, type ReadCounts } from './read-counts.ts';
import { createGraphqlHandler } from './graphql.ts';
import { legacyV2Routes } from './legacy/face.ts';
import type { SandboxData } from './model.ts';

export { DIVERGENCE_NAMES, SANDBOX_DIVERGENCES, parseDivergences, type DivergenceName, type DivergenceSpec } from './divergence.ts';
export type { WriteCounts } from './write-counts.ts';
export type { ReadCounts } from './read-counts.ts';
export { DEFAULT_BEHAVIOURS, type SandboxBehaviours } from './behaviours.ts';

export interface SandboxOptions {
  seed?: number;
  apmApps?: number;
  apiKeys?: Map<string, number[]>;
  /** Clock for generation (lastReportingChangeAt) and for both faces' answers (REST metric data, NRQL). */
  now?: () => number;
  /** Make the NerdGraph face differ from the legacy face in these known ways (divergence.ts). */
  diverge?: readonly DivergenceName[];
  /** The legacy face's newest metric timeslice varies per call, as v2's open minute did (legacy/metrics.ts). */
  legacyJitter?: boolean;
  /** Documented New Relic behaviours to switch off or tune (behaviours.ts); all on by default. */
  behave?: Partial<SandboxBehaviours>;
  /** The clock the ingest lag (`behave.ingestLagMs`, ingest.ts) runs on; default real time, whatever `now` is. */
  ingestClock?: () => number;
  /** API key -> the id of its user (several keys may share one); data.ts defaultKeyUsers() when omitted. */
  keyUsers?: Map<string, number>;
  /** Every NerdGraph answer waits for this, still in flight (a test knob: concurrency builds up; graphql.ts). */
  nerdgraphHold?: () => Promise<void>;
  /** Sizes of the world's parts (data.ts WorldSize); defaults when omitted. */
  size?: WorldSize;
}

export interface RunningSandbox {
  url: string;
  /** Stops listening and drops keep-alive connections, so test processes exit promptly. */
  close(): Promise<void>;
}

export interface Sandbox {
  app: Hono;
  data: SandboxData;
  listen(port?: number, host?: string): Promise<RunningSandbox>;
  /** The writes each face has executed so far (a snapshot; write-counts.ts). */
  writes(): WriteCounts;
  /** The NerdGraph requests and NRQL queries answered since the last reset (a snapshot; read-counts.ts). */
  reads(): ReadCounts;
  resetReads(): void;
}

/** Mixed into the seed for the legacy jitter stream. */
const JITTER_STREAM = 0x71_7e_42;

export const SANDBOX_DEFAULTS = { seed: 42, apmApps: 500, host: '127.0.0.1', port: 0 } as const;

export function createSandbox(opts: SandboxOptions = {}): Sandbox {
  const data = generateSandboxData({
    seed: opts.seed ?? SANDBOX_DEFAULTS.seed,
    apmApps: opts.apmApps ?? SANDBOX_DEFAULTS.apmApps,
    apiKeys: opts.apiKeys,
    now: (opts.now ?? Date.now)(),
    ...(opts.diverge && { diverge: opts.diverge }),
    ...(opts.behave && { behave: opts.behave }),
    ...(opts.keyUsers && { keyUsers: opts.keyUsers }),
    ...(opts.size && { size: opts.size }),
  });
  if (opts.ingestClock) data.ingestClock = opts.ingestClock;
  const reads = createReadCounter();
  const graphql = createGraphqlHandler(data, opts.now ?? Date.now, { reads, ...(opts.nerdgraphHold && { hold: opts.nerdgraphHold }) });

  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.post('/graphql', (c) => graphql(c.req.raw));
  // The legacy REST v2 face: the reference answers the gateway is compared against.
  // Jitter draws come from their own seeded stream: a run is repeatable call for call.
  const jitter = opts.legacyJitter ? createRandom(((opts.seed ?? SANDBOX_DEFAULTS.seed) ^ JITTER_STREAM) >>> 0) : undefined;
  app.route('/', legacyV2Routes(data, opts.now ?? Date.now, LEGACY_ROUTES, jitter ? { jitter } : {}));
  // Whatever neither face knows: v2's 404, as the gateway answers it.
  app.notFound(() => new Response(serialise(errorBody('Unknown resource'), 'json'), { status: 404, headers: { 'content-type': CONTENT_TYPES.json } }));

  return {
    app,
    data,
    listen: (port = SANDBOX_DEFAULTS.port, host = SANDBOX_DEFAULTS.host) => listenOn(app, port, host),
    writes: () => writeCounts(data.writes.executed),
    reads: () => readCounts(reads),
    resetReads: () => resetReadCounts(reads),
  };
}

/**
 * Bytes Node's HTTP parser cannot read get a v2 error body (rest-v2.md §3.10) rather than
 * Node's bare 400, and the connection is closed: what follows on it is not trusted.
 */
function answerUnreadableRequests(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const [status, reason, title] =
      error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large', 'Request headers too large'] : [400, 'Bad Request', 'Malformed HTTP request'];
    const body = serialise(errorBody(title), 'json');
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${CONTENT_TYPES.json}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
}

function listenOn(app: Hono, port: number, host: string): Promise<RunningSandbox> {
  return new Promise((resolve, reject) => {
    // Plain HTTP options, so serve() creates a node:http Server.
    const server = serve({ fetch: app.fetch, port, hostname: host }) as Server;
    answerUnreadableRequests(server);
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${urlHost}:${address.port}`,
        close: () =>
          new Promise<void>((resolveClose, rejectClose) => {
            server.close((error) => (error ? rejectClose(error) : resolveClose()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
