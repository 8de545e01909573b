import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { REDIS_SERVER, startRedis, type TestRedis } from '../test/support/redis.ts';
import { startTarget, type Target } from './children.ts';
import { startNodeFlags } from '../scripts/start-flags.ts';

/**
 * The bench's scale-out row, (h): the cached show (one request repeated) served by replica B after replica A warmed the shared
 * state. Two gateway targets share one Redis (Debian's redis-server on a free loopback port) and
 * STATE_SECRET, and the bench's canned upstream, as two replicas behind a load balancer do; the
 * row's warm-up runs against A, its measurement against B, so B starts on what A left in Redis
 * (accounts, the micro-cache) rather than on its own memory. B's code is warmed first with
 * another key (REPLICA_JIT_WARMUP_KEY), so the row does not measure a cold process. Compared
 * with the single gateway (b) and the proxy floor (d) on the same upstream in the same run.
 */
export const REPLICA_ROW_SCENARIO = 'application show (cached)';

/**
 * The key B's code warm-up sends: not the scenario's, so nothing B caches then serves the
 * measured requests. The canned upstream answers any key alike.
 */
export const REPLICA_JIT_WARMUP_KEY = 'NRAK-BENCH-REPLICA-B-CODE-WARMUP';

export interface SideSample {
  cpuUs: number;
  commands: number;
  fallbacks: number;
}

export interface ReplicaPair {
  a: Target;
  b: Target;
  /**
   * Redis's own CPU (user + system, µs) and commands processed so far (what sharing costs beyond
   * B), and B's shared-state fallbacks to memory so far (Redis too slow or gone: B was not sharing).
   */
  sample(): Promise<SideSample>;
  stop(): Promise<void>;
}

const ReadyzBody = z.object({ sharedState: z.object({ state: z.string() }).optional() });

/** Until the gateway's shared state is on Redis ('shared'), not the memory it starts on. */
async function waitUntilShared(target: Target, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const body = ReadyzBody.parse(await (await fetch(`${target.base}/readyz`)).json());
      last = body.sharedState?.state ?? 'no sharedState in /readyz';
      if (last === 'shared') return;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`bench replica ${name}: shared state never on Redis (last: ${last})`);
}

const InfoNumber = (info: string, field: string): number => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);

/** Undefined (with the reason) when no redis-server is installed: the row is skipped, not the bench. */
export function replicaRowUnavailable(): string | undefined {
  return existsSync(REDIS_SERVER) ? undefined : `no redis-server at ${REDIS_SERVER} (apt-get install redis-server, or REDIS_SERVER_PATH)`;
}

export async function startReplicaPair(graphqlUrl: string): Promise<ReplicaPair> {
  const redis: TestRedis = await startRedis();
  // Backstop: never leave a redis-server behind (kill() sends SIGKILL before its first await).
  const onExit = (): void => void redis.kill();
  process.on('exit', onExit);
  const env = { NERDGRAPH_URL: graphqlUrl, REDIS_URL: redis.url, STATE_SECRET: randomBytes(32).toString('base64url') };
  const [a, b] = await Promise.all([
    startTarget('gateway', { ...env, REPLICA_NAME: 'A' }, startNodeFlags()),
    startTarget('gateway', { ...env, REPLICA_NAME: 'B' }, startNodeFlags()),
  ]);
  await Promise.all([waitUntilShared(a, 'A'), waitUntilShared(b, 'B')]);
  return {
    a,
    b,
    async sample() {
      const [cpu, stats, metrics] = await Promise.all([redis.inspect().info('cpu'), redis.inspect().info('stats'), fetch(`${b.base}/metrics`).then((r) => r.text())]);
      let fallbacks = 0;
      for (const match of metrics.matchAll(/^v2bridge_shared_state_fallbacks_total(?:\{[^}]*\})?\s+(\S+)$/gm)) fallbacks += Number(match[1]);
      return {
        cpuUs: (InfoNumber(cpu, 'used_cpu_user') + InfoNumber(cpu, 'used_cpu_sys')) * 1e6,
        commands: InfoNumber(stats, 'total_commands_processed'),
        fallbacks,
      };
    },
    async stop() {
      process.off('exit', onExit);
      await redis.stop();
    },
  };
}
