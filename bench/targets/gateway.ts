import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { serve } from '@hono/node-server';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { loadDocuments } from '../../src/upstream/documents.ts';
import { announce } from './announce.ts';

/**
 * Target: the gateway, wired as src/index.ts wires it (same config defaults, default metrics,
 * per-request info logs, written to stdout, which the parent discards), pointed at
 * NERDGRAPH_URL; only the port (0) and the IPC announcement differ.
 */
const config = loadConfig();
if (!config.nerdgraphUrl) throw new Error('bench gateway: NERDGRAPH_URL must be set by the parent');
const metrics = createMetrics({ defaultMetrics: true });
const nerdgraph = createNerdGraphClient({
  url: config.nerdgraphUrl,
  documents: loadDocuments(),
  metrics,
  timeoutMs: config.upstreamTimeoutMs,
  retries: config.upstreamRetries,
  microCache: { ...config.microCache, identityOf: createIdentityHasher() },
});
const app = createApp({ config, nerdgraph, mappings: await loadMappings(), metrics, logger: createLogger(config.logLevel) });
// Plain HTTP options, so serve() creates a node:http Server.
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
