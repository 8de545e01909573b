import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { buildGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { announce, type Handlers } from './announce.ts';

/**
 * Target: the gateway, built as src/index.ts builds it (src/gateway.ts: same config, default
 * metrics, per-request info logs written to stdout, which the parent discards), pointed at
 * NERDGRAPH_URL (and LEGACY_REST_URL, ROUTE_MODES for the migration-mode rows); only the port
 * (0) and the IPC announcement differ. With BENCH_STAGES=1 it also answers profileStart and
 * profileStop (the V8 profiler through node:inspector), so the parent profiles exactly a
 * measured window; the session is opened only then, so other runs pay nothing for it.
 */
const config = loadConfig();
if (!config.nerdgraphUrl) throw new Error('bench gateway: NERDGRAPH_URL must be set by the parent');
const { app } = await buildGateway(config, { logger: createLogger(config.logLevel), processMetrics: true });
// Plain HTTP options, so serve() creates a node:http Server.
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
await once(server, 'listening');

async function profiler(): Promise<Pick<Handlers, 'profileStart' | 'profileStop'>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  let written = 0;
  return {
    profileStart: async () => {
      await session.post('Profiler.start');
      return true as const;
    },
    profileStop: async () => {
      const { profile } = await session.post('Profiler.stop');
      const file = join(tmpdir(), `v2bridge-bench-${process.pid}-${++written}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      return file;
    },
  };
}

announce((server.address() as AddressInfo).port, process.env.BENCH_STAGES === '1' ? await profiler() : {});
