import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { serve } from '@hono/node-server';
import { buildGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { announce } from './announce.ts';

/**
 * Target: the gateway, built as src/index.ts builds it (src/gateway.ts: same config, default
 * metrics, per-request info logs written to stdout, which the parent discards), pointed at
 * NERDGRAPH_URL (and LEGACY_REST_URL, ROUTE_MODES for the migration-mode rows); only the port
 * (0) and the IPC announcement differ.
 */
const config = loadConfig();
if (!config.nerdgraphUrl) throw new Error('bench gateway: NERDGRAPH_URL must be set by the parent');
const { app } = await buildGateway(config, { logger: createLogger(config.logLevel), processMetrics: true });
// Plain HTTP options, so serve() creates a node:http Server.
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
