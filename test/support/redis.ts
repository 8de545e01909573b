import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * A real Redis for tests: Debian's redis-server (installed by .ci/run), on a free loopback
 * port, with no persistence, in a temporary directory. `kill()` SIGKILLs it (Redis gone
 * mid-run); `restart()` starts it again on the same port, empty; `stop()` ends it for good.
 * A test file that needs it and finds no redis-server fails in CI (REQUIRE_REDIS=1) and is
 * skipped with a notice elsewhere.
 */
export const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

export function redisAvailable(): boolean {
  if (existsSync(REDIS_SERVER)) return true;
  if (process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but ${REDIS_SERVER} is missing (apt-get install redis-server)`);
  process.stderr.write(`[skipped] ${REDIS_SERVER} not found: the shared-state tests need Debian's redis-server\n`);
  return false;
}

export interface TestRedis {
  url: string;
  port: number;
  /** A client for the test's own inspection (SCAN, GET); closed by stop(). */
  inspect(): Redis;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function waitForPing(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch {
      client.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`redis-server on port ${port} never answered`);
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  let inspector: Redis | undefined;

  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', join(dir, 'redis.log')];
    const started = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    child = started;
    const exitedEarly = new Promise<never>((_, reject) => started.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before answering`))));
    exitedEarly.catch(() => undefined);
    await Promise.race([waitForPing(port), exitedEarly]);
  };

  // A port found free can be taken before redis-server binds it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }

  const killed = async (): Promise<void> => {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    inspect() {
      if (inspector === undefined) {
        inspector = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
        inspector.on('error', () => undefined);
      }
      return inspector;
    },
    kill: killed,
    restart: launch,
    async stop() {
      inspector?.disconnect();
      await killed();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every string stored under `key`, whatever its type: for the scans that look for API keys in Redis. */
export async function valuesOf(client: Redis, key: string): Promise<string[]> {
  const type = await client.type(key);
  switch (type) {
    case 'string':
      return [(await client.get(key)) ?? ''];
    case 'hash':
      return Object.entries(await client.hgetall(key)).flat();
    case 'zset':
      return client.zrange(key, '0', '-1');
    case 'set':
      return client.smembers(key);
    case 'list':
      return client.lrange(key, 0, -1);
    case 'stream':
      return (await client.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
    default:
      return [`unexpected type ${type}`];
  }
}
