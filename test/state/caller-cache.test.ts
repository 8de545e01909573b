import { describe, expect, it } from 'vitest';
import { CoalescingCache } from '../../src/cache/coalescing-cache.ts';
import { CallerCache, MAX_CALLER_CACHE_SIZE, type CacheOwner } from '../../src/caller/caller-cache.ts';
import type { Caller } from '../../src/caller/identity.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { callerScope, type RouteDeps } from '../../src/routes/types.ts';
import type { UpstreamCall } from '../../src/upstream/client.ts';
import { runRecorded } from '../../src/upstream/recorded-run.ts';
import type { RecordingClient } from '../../src/upstream/recording-client.ts';

/**
 * The per-caller cache (src/caller/caller-cache.ts) mappings see as CallerScope.cache: an app's
 * walked instance lists, walks cut short, host directories and indexes, list walks' reads. It
 * must stay bounded whatever callers keep, expire each entry on its own TTL, answer a caller only
 * from what that caller kept on that account, and load a key once however many ask at once.
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

const request = () => new AbortController().signal;
const owner = (identity: string, accountId = 1): CacheOwner => ({ caller: { identity }, accountId });

describe('CallerCache', () => {
  it('holds at most its entry bound, the least recently used going first', async () => {
    const cache = new CallerCache(createMetrics(), () => 0, { maxEntries: 3, maxSize: 1_000 });
    const me = owner('user-1');
    for (const key of ['a', 'b', 'c']) cache.set(me, key, { value: { key }, ttlMs: 60_000 });
    expect(cache.get(me, 'a')).toEqual({ key: 'a' });
    cache.set(me, 'd', { value: { key: 'd' }, ttlMs: 60_000 });
    // b was the least recently used (a was just read).
    expect(cache.get(me, 'b')).toBeUndefined();
    expect(cache.get(me, 'a')).toEqual({ key: 'a' });
    expect(cache.get(me, 'd')).toEqual({ key: 'd' });
  });

  it('holds at most its size bound, loaded and set entries alike, and keeps no entry larger than it', async () => {
    const cache = new CallerCache(createMetrics(), () => 0, { maxEntries: 100, maxSize: 10 });
    const me = owner('user-1');
    let loads = 0;
    const walk = () => cache.load(me, 'walk', async () => (loads++, { value: { n: 'walk' }, ttlMs: 60_000, size: 6 }), request());
    await walk();
    cache.set(me, 'progress', { value: { n: 'progress' }, ttlMs: 60_000, size: 4 });
    await walk();
    expect(loads).toBe(1);
    expect(cache.get(me, 'progress')).toEqual({ n: 'progress' });
    // 6 + 4 + 3 > 10: the walk, now the least recently used, goes.
    cache.set(me, 'other', { value: { n: 'other' }, ttlMs: 60_000, size: 3 });
    expect(cache.get(me, 'progress')).toEqual({ n: 'progress' });
    expect(cache.get(me, 'other')).toEqual({ n: 'other' });
    await walk();
    expect(loads).toBe(2);
    cache.set(me, 'huge', { value: { n: 'huge' }, ttlMs: 60_000, size: 11 });
    expect(cache.get(me, 'huge')).toBeUndefined();
  });

  it('expires each entry on its own TTL, on the injected clock; a TTL of 0 keeps nothing', () => {
    // Not from 0: lru-cache reads an entry kept at time 0 as kept with no start, never stale.
    const start = 1_000_000;
    let now = start;
    const cache = new CallerCache(createMetrics(), () => now);
    const me = owner('user-1');
    cache.set(me, 'short', { value: { n: 1 }, ttlMs: 5_000 });
    cache.set(me, 'long', { value: { n: 2 }, ttlMs: 60_000 });
    cache.set(me, 'none', { value: { n: 3 }, ttlMs: 0 });
    expect(cache.get(me, 'none')).toBeUndefined();
    now = start + 5_000;
    expect(cache.get(me, 'short')).toEqual({ n: 1 });
    now = start + 5_001;
    expect(cache.get(me, 'short')).toBeUndefined();
    expect(cache.get(me, 'long')).toEqual({ n: 2 });
    now = start + 60_001;
    expect(cache.get(me, 'long')).toBeUndefined();
  });

  it('answers a caller only from what it kept on that account: two callers, and two accounts of one caller, share nothing', async () => {
    const cache = new CallerCache(createMetrics(), () => 0);
    const loaded: string[] = [];
    const load = (who: CacheOwner) =>
      cache.load(who, 'host-index', async () => (loaded.push(`${who.caller.identity}/${who.accountId}`), { value: { who: `${who.caller.identity}/${who.accountId}` }, ttlMs: 60_000 }), request());
    expect(await load(owner('user-1', 1))).toEqual({ who: 'user-1/1' });
    expect(await load(owner('user-2', 1))).toEqual({ who: 'user-2/1' });
    expect(await load(owner('user-1', 2))).toEqual({ who: 'user-1/2' });
    expect(await load(owner('user-1', 1))).toEqual({ who: 'user-1/1' });
    expect(loaded).toEqual(['user-1/1', 'user-2/1', 'user-1/2']);
    cache.set(owner('user-1', 1), 'walk', { value: { page: 3 }, ttlMs: 60_000 });
    expect(cache.get(owner('user-2', 1), 'walk')).toBeUndefined();
    expect(cache.get(owner('user-1', 2), 'walk')).toBeUndefined();
    cache.forget(owner('user-2', 1), 'walk');
    expect(cache.get(owner('user-1', 1), 'walk')).toEqual({ page: 3 });
  });

  it('keys by the caller identity, never the API key: two keys of one identity share, one key under two identities does not', () => {
    const cache = new CallerCache(createMetrics(), () => 0);
    const caller = (apiKey: string, identity: string): CacheOwner => ({ caller: { apiKey, identity } as Caller, accountId: 1 });
    cache.set(caller('NRAK-ONE', 'identity-a'), 'walk', { value: { page: 1 }, ttlMs: 60_000 });
    expect(cache.get(caller('NRAK-TWO', 'identity-a'), 'walk')).toEqual({ page: 1 });
    expect(cache.get(caller('NRAK-ONE', 'identity-b'), 'walk')).toBeUndefined();
  });

  it('loads a key once for concurrent misses, and keeps no failed load', async () => {
    const cache = new CallerCache(createMetrics(), () => 0);
    const me = owner('user-1');
    let loads = 0;
    let finish: () => void = () => undefined;
    const load = async () => {
      loads++;
      await new Promise<void>((resolve) => (finish = resolve));
      return { value: { n: loads }, ttlMs: 60_000 };
    };
    const asked = [cache.load(me, 'k', load, request()), cache.load(me, 'k', load, request()), cache.load(me, 'k', load, request())];
    finish();
    expect(await Promise.all(asked)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
    expect(loads).toBe(1);

    let failures = 0;
    const failing = async (): Promise<{ value: { n: number }; ttlMs: number }> => {
      failures++;
      throw new Error('NerdGraph failed');
    };
    await expect(cache.load(me, 'f', failing, request())).rejects.toThrow('NerdGraph failed');
    await expect(cache.load(me, 'f', failing, request())).rejects.toThrow('NerdGraph failed');
    expect(failures).toBe(2);
  });

  it('is cold in a recorded run (explain, a dry run): neither answers it nor learns from it', async () => {
    const cache = new CallerCache(createMetrics(), () => 0);
    const me = owner('user-1');
    cache.set(me, 'kept', { value: { n: 'before' }, ttlMs: 60_000 });
    let loads = 0;
    const load = async () => (loads++, { value: { n: 'loaded' }, ttlMs: 60_000 });
    await runRecorded({ recorder: {} as RecordingClient }, async () => {
      expect(cache.get(me, 'kept')).toBeUndefined();
      cache.set(me, 'during', { value: { n: 'during' }, ttlMs: 60_000 });
      cache.forget(me, 'kept');
      await cache.load(me, 'loaded', load, request());
    });
    expect(cache.get(me, 'kept')).toEqual({ n: 'before' });
    expect(cache.get(me, 'during')).toBeUndefined();
    await cache.load(me, 'loaded', load, request());
    expect(loads).toBe(2);
  });
});

describe('CallerScope.cache', () => {
  const scopeOf = (deps: RouteDeps, signal: AbortSignal, identity = 'user-1') =>
    callerScope(deps, { caller: { identity, apiKey: 'key' } as Caller, accountId: 1, signal }, 'test');
  const depsWith = (nerdgraph: unknown = {}) =>
    ({ metrics: createMetrics(), now: () => 0, nerdgraph, mutations: new Set<string>(), callerCache: new CallerCache(createMetrics(), () => 0) }) as unknown as RouteDeps; // only what callerScope uses

  it('holds instance lists up to MAX_CALLER_CACHE_SIZE instances in all, whatever their number', async () => {
    const scope = scopeOf(depsWith(), request());
    const perList = 10_000;
    const fit = MAX_CALLER_CACHE_SIZE / perList;
    const loads = new Map<string, number>();
    const get = (key: string) =>
      scope.cache.load(key, async () => {
        loads.set(key, (loads.get(key) ?? 0) + 1);
        return { value: { instances: Array.from({ length: perList }, (_, i) => i) }, ttlMs: 30_000, size: perList };
      });
    for (let i = 0; i < fit; i++) await get(`app-${i}`);
    for (let i = 0; i < fit; i++) await get(`app-${i}`);
    expect([...loads.values()].every((n) => n === 1)).toBe(true);
    // One more list: the least recently used one (app-0) is no longer kept.
    await get(`app-${fit}`);
    await get('app-0');
    expect(loads.get('app-0')).toBe(2);
    expect(loads.get(`app-${fit}`)).toBe(1);
  });

  it("is one cache for the gateway's scopes: another request of the caller finds what one kept, another caller does not", () => {
    const deps = depsWith();
    scopeOf(deps, request()).cache.set('walk', { value: { page: 2 }, ttlMs: 60_000 });
    expect(scopeOf(deps, request()).cache.get('walk')).toEqual({ page: 2 });
    expect(scopeOf(deps, request(), 'user-2').cache.get('walk')).toBeUndefined();
  });

  it("reads inside a load go under the load's signal, nested loads under their own, and the request's again after", async () => {
    const signals: AbortSignal[] = [];
    const deps = depsWith({ call: async ({ signal }: UpstreamCall) => void signals.push(signal as AbortSignal) });
    const requestSignal = request();
    const scope = scopeOf(deps, requestSignal);
    await scope.cache.load('outer', async (read) => {
      await read('Outer', {});
      await scope.cache.load('inner', async () => (await scope.read('Inner', {}), { value: {}, ttlMs: 60_000 }));
      await scope.read('OuterAgain', {});
      return { value: {}, ttlMs: 60_000 };
    });
    await scope.read('After', {});
    const [outer, inner, outerAgain, after] = signals;
    expect(outer).not.toBe(requestSignal);
    expect(inner).not.toBe(requestSignal);
    expect(inner).not.toBe(outer);
    expect(outerAgain).toBe(outer);
    expect(after).toBe(requestSignal);
  });
});
