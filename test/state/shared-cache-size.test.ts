import { describe, expect, it } from 'vitest';
import { CoalescingCache } from '../../src/cache/coalescing-cache.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { MAX_SHARED_SIZE, callerScope, type RouteDeps } from '../../src/routes/types.ts';
import type { Caller } from '../../src/caller/identity.ts';

/**
 * CallerScope.shared keeps walked instance lists (mappings/common/app-instances.ts): its cache is
 * bounded by their total size (instances), not only by the number of lists, so 1,000 lists of
 * 10,000 instances (~2.8 GB) cannot be held at once.
 */
describe('a CoalescingCache with maxSize', () => {
  it('evicts the least recently used entries past the total size, and keeps none larger than the bound', async () => {
    const cache = new CoalescingCache<{ key: string }>('test', createMetrics(), { max: 100, maxSize: 10, ttlMs: 60_000 });
    const loads: string[] = [];
    const get = (key: string, size: number) =>
      cache.get(key, async () => (loads.push(key), { value: { key }, size }), new AbortController().signal);
    await get('a', 6);
    await get('b', 4);
    await get('a', 6); // kept: 10 in all
    expect(loads).toEqual(['a', 'b']);
    // 15 > 10: b, the least recently used, goes; 11 > 10 still: a goes too.
    await get('c', 5);
    await get('c', 5);
    await get('a', 6);
    expect(loads).toEqual(['a', 'b', 'c', 'a']);
    await get('big', 11); // larger than the bound: answered, not kept
    await get('big', 11);
    expect(loads.filter((key) => key === 'big')).toHaveLength(2);
  });

  it('counts an entry without a size as 1', async () => {
    const cache = new CoalescingCache<{ key: string }>('test', createMetrics(), { max: 100, maxSize: 3, ttlMs: 60_000 });
    let loads = 0;
    const get = (key: string) => cache.get(key, async () => (loads++, { value: { key } }), new AbortController().signal);
    for (const key of ['a', 'b', 'c', 'a', 'b', 'c']) await get(key);
    expect(loads).toBe(3);
  });
});

describe('CallerScope.shared', () => {
  const deps = { metrics: createMetrics(), now: () => 0, nerdgraph: {}, mutations: new Set<string>() } as unknown as RouteDeps;
  const scope = callerScope(deps, { caller: { identity: 'user-1', apiKey: 'key' } as Caller, accountId: 1, signal: new AbortController().signal }, 'test');
  const list = (n: number) => ({ instances: Array.from({ length: n }, (_, i) => i) });

  it('holds instance lists up to MAX_SHARED_SIZE instances in all, whatever their number', async () => {
    const perList = 10_000;
    const fit = MAX_SHARED_SIZE / perList;
    const loads = new Map<string, number>();
    const get = (key: string) =>
      scope.shared(
        key,
        30_000,
        async () => (loads.set(key, (loads.get(key) ?? 0) + 1), list(perList)),
        (value) => value.instances.length,
      );
    for (let i = 0; i < fit; i++) await get(`app-${i}`);
    for (let i = 0; i < fit; i++) await get(`app-${i}`);
    expect([...loads.values()].every((n) => n === 1)).toBe(true);
    // One more list: the least recently used one (app-0) is no longer kept.
    await get(`app-${fit}`);
    await get('app-0');
    expect(loads.get('app-0')).toBe(2);
    expect(loads.get(`app-${fit}`)).toBe(1);
  });

  it('keeps walks cut short (CallerScope.keep) under the same total bound', () => {
    const half = MAX_SHARED_SIZE / 2;
    scope.keep.set('walk-a', { n: 'a' }, 60_000, half);
    scope.keep.set('walk-b', { n: 'b' }, 60_000, half);
    expect(scope.keep.get('walk-a')).toEqual({ n: 'a' });
    scope.keep.set('walk-c', { n: 'c' }, 60_000, half);
    // walk-b was the least recently used (walk-a was just read).
    expect(scope.keep.get('walk-b')).toBeUndefined();
    expect(scope.keep.get('walk-a')).toEqual({ n: 'a' });
    scope.keep.set('walk-a', undefined, 60_000);
    expect(scope.keep.get('walk-a')).toBeUndefined();
  });
});
