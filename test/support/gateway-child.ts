import { pino } from 'pino';
import { buildGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { serveV2 } from '../../src/v2/client-error.ts';
import type { AddressInfo } from 'node:net';

/**
 * A gateway in a child process, as `npm start` builds it (configuration from the environment,
 * the embedded sandbox when no NerdGraph is set, the v2 server), for tests that need its own
 * heap: the parent forks this under `--max-old-space-size` and `--expose-gc`. Over IPC it says
 * `{ port }` once listening, and answers `'heap'` with the heap in use right after a full GC.
 */
const config = loadConfig();
const gateway = await buildGateway(config, { logger: pino({ level: 'silent' }) });
serveV2({ fetch: gateway.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  process.send?.({ port: info.port });
});

// A parent that dies (a cancelled run, a killed worker) must not leave this gateway listening.
process.on('disconnect', () => process.exit(0));

// Exposed by --expose-gc; without it the heap figure would include garbage.
const collect = (globalThis as { gc?: () => void }).gc;
process.on('message', (message: unknown) => {
  if (message === 'heap') {
    collect?.();
    process.send?.({ heapUsed: process.memoryUsage().heapUsed, collected: collect !== undefined });
  }
});
