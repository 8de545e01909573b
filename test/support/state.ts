import { expect } from 'vitest';
import type { Registry } from 'prom-client';
import type { StatusReporting } from '../../src/state/degrading-state.ts';

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
