import { afterAll, beforeAll, expect } from 'vitest';
import type { Registry } from 'prom-client';
import type { StatusReporting } from '../../src/state/degrading-state.ts';
import { MemoryState } from '../../src/state/memory-state.ts';
import { RedisState } from '../../src/state/redis-state.ts';
import type { SharedState } from '../../src/state/shared-state.ts';
import { redisAvailable, startRedis, type TestRedis } from './redis.ts';

/** Waits (bounded) until a shared state has reached Redis, and fails the test if it never does. */
export async function untilShared(state: StatusReporting): Promise<void> {
  for (let i = 0; i < 200 && state.status().state !== 'shared'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(state.status().state).toBe('shared');
}

/** The sum of every series of one metric in a registry. */
export async function metricSum(registry: Registry, metric: string): Promise<number> {
  const text = await registry.getSingleMetricAsString(metric);
  return text
    .split('\n')
    .filter((line) => line.startsWith(metric))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * The SharedState backends a test runs against, by name: memory, and Redis when redis-server is
 * installed (a server of its own, started and stopped by hooks this declares: call it where
 * hooks may be declared). Each call of a backend opens a new state.
 */
export function stateBackends(): Array<[string, () => SharedState]> {
  const backends: Array<[string, () => SharedState]> = [['memory', () => new MemoryState()]];
  if (!redisAvailable()) return backends;
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  backends.push(['redis', () => new RedisState({ url: (redis as TestRedis).url, commandTimeoutMs: 2_000 })]);
  return backends;
}

/** Redis connects in the background: resolves at a state's first answer (or after about 2 s). */
export async function untilAnswering(state: SharedState): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await state.get('warm-up').then(() => true, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
