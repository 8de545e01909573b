import { LRUCache } from 'lru-cache';
import { CoalescingCache } from '../cache/coalescing-cache.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import type { CursorCache } from '../cache/cursor-cache.ts';
import type { GatewayContext } from './context.ts';
import type { Caller } from '../caller/identity.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { NerdGraph } from '../upstream/client.ts';
import type { RecentWrites } from '../state/recent-writes.ts';
import type { V2Format } from '../v2/format.ts';
import type { V2Params } from '../v2/params.ts';
import { entityRef, inAccount, requireEntity } from './entity-ref.ts';
import type { CallerScope, ReadOptions } from './mapping.ts';
import type { RequestLog } from '../ops/logger.ts';
import { callUpstream } from './request-signal.ts';

/** What a route strategy needs from the app (built once in app.ts). */
export interface RouteDeps {
  nerdgraph: NerdGraph;
  metrics: GatewayMetrics;
  cursors: CursorCache;
  now: () => number;
  /** How far back metric names are looked for (NerdGraph keeps no list of every name). */
  metricNamesLookbackMs: number;
  /** The operations write mappings send: the only ones a read must never send. */
  mutations: ReadonlySet<string>;
  /** Deployments and label changes written here, until NerdGraph shows them (read-your-writes). */
  recentWrites: RecentWrites;
}

/**
 * Reads through the caller's key, for every runner and mapping that reads beside its main
 * request: query operations only, so a write's one mutation can only be sent by its runner.
 * `signal`: the request's, or a shared load's (none is sent once it fired).
 */
export function readsOf(deps: RouteDeps, caller: Caller, signal: AbortSignal, onDegraded?: (note: string) => void) {
  return (operation: string, variables: Record<string, unknown>, options?: ReadOptions): Promise<unknown> => {
    // Thrown at once, not as a rejection: a mapping that asks for a mutation is a gateway bug.
    if (deps.mutations.has(operation)) throw new Error(`read() takes query operations only, not ${operation}`);
    const optional = options?.optional;
    if (optional === undefined) return callUpstream(deps.nerdgraph, { operation, variables, apiKey: caller.apiKey, signal });
    return readWithOptional(deps, caller, signal, { operation, variables, optional }, onDegraded);
  };
}

/** A read whose `optional` parts may fail alone: each one missing from the answer is told to `onDegraded`. */
async function readWithOptional(
  deps: RouteDeps,
  caller: Caller,
  signal: AbortSignal,
  read: { operation: string; variables: Record<string, unknown>; optional: Readonly<Record<string, string>> },
  onDegraded: ((note: string) => void) | undefined,
): Promise<unknown> {
  const { operation, variables, optional } = read;
  const failures = new Map<string, string>();
  const data = await callUpstream(deps.nerdgraph, {
    operation,
    variables,
    apiKey: caller.apiKey,
    signal,
    optionalFields: Object.keys(optional),
    onOptionalFieldError: (path, error) => failures.set(path, error.errorClass),
  });
  // Told by the data itself too: a read joined through the micro-cache hears no callback.
  for (const [path, without] of Object.entries(optional)) {
    if (valueAt(data, path) === null || valueAt(data, path) === undefined) onDegraded?.(`${operation} ${path} failed (${failures.get(path) ?? 'no result'}): ${without}`);
  }
  return data;
}

function valueAt(data: unknown, path: string): unknown {
  let value = data;
  for (const key of path.split('.')) value = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** The request's log line records what its answer did without (ReadOptions.optional), at warn. */
export function noteDegraded(c: GatewayContext | undefined, note: string): void {
  const entry = c?.get('logEntry') as RequestLog | undefined;
  if (entry === undefined) return;
  entry.level = 'warn';
  const notes = entry.degraded === undefined ? [] : entry.degraded.split('; ');
  if (!notes.includes(note)) entry.degraded = [...notes, note].join('; ');
}

/** The caller, account and signal of a request; its context (`c`) when it has one, for its log line. */
type ScopedRequest = Pick<RouteRequest, 'caller' | 'accountId' | 'signal'> & { c?: GatewayContext };

/** Bound of CallerScope.shared entries per gateway: one per large app (only apps whose instances span pages are kept)... */
const MAX_SHARED_ENTRIES = 1_000;
/**
 * ...and of their total size (each entry's `size` given to shared(): an instance list counts its
 * instances), so the cache holds at most this many instances (~30 MB at ~150 bytes each) rather
 * than MAX_SHARED_ENTRIES lists of 10,000 (~2.8 GB): least recently used lists go first.
 */
export const MAX_SHARED_SIZE = 200_000;
/** CallerScope.keep's store, one per gateway, bounded like the shared cache (it holds walks cut short). */
const keptStores = new WeakMap<RouteDeps, LRUCache<string, object>>();

function keptStoreOf(deps: RouteDeps): LRUCache<string, object> {
  let store = keptStores.get(deps);
  if (!store) {
    const clock = deps.now;
    store = new LRUCache<string, object>({ max: MAX_SHARED_ENTRIES, maxSize: MAX_SHARED_SIZE, sizeCalculation: () => 1, ttl: 60_000, perf: { now: clock }, ttlResolution: 0 });
    keptStores.set(deps, store);
  }
  return store;
}

/** CallerScope.shared's cache, one per gateway (its RouteDeps), made on first use. */
const sharedCaches = new WeakMap<RouteDeps, CoalescingCache<object>>();

function sharedCacheOf(deps: RouteDeps): CoalescingCache<object> {
  let cache = sharedCaches.get(deps);
  if (!cache) {
    cache = new CoalescingCache<object>('caller-shared', deps.metrics, { max: MAX_SHARED_ENTRIES, maxSize: MAX_SHARED_SIZE, ttlMs: 60_000, now: deps.now });
    sharedCaches.set(deps, cache);
  }
  return cache;
}

/** The caller's scope every mapping hook starts from; `operation` labels the scope-violation counts. */
export function callerScope(deps: RouteDeps, req: ScopedRequest, operation: string): CallerScope {
  const scope = { accountId: req.accountId, operation, metrics: deps.metrics };
  return {
    accountId: req.accountId,
    now: deps.now(),
    read: readsOf(deps, req.caller, req.signal, (note) => noteDegraded(req.c, note)),
    entityRef: (kind, rawId, notFoundTitle) => entityRef(kind, rawId, req.accountId, notFoundTitle),
    requireEntity: (entity, ref, notFoundTitle) => requireEntity(entity, ref, scope, notFoundTitle),
    inAccount: (entity, label = operation) => inAccount(entity, req.accountId, label, deps.metrics),
    recent: deps.recentWrites,
    shared: <V extends object>(key: string, ttlMs: number, load: (read: CallerScope['read']) => Promise<V>, sizeOf?: (value: V) => number) =>
      // The cast is safe: a key is only ever loaded by the one shared() call site that names it.
      sharedCacheOf(deps).get(
        JSON.stringify([req.caller.identity, req.accountId, key]),
        async (signal) => {
          const value = await load(readsOf(deps, req.caller, signal));
          return { value, ttlMs, size: sizeOf?.(value) ?? 1 };
        },
        req.signal,
      ) as Promise<V>,
    keep: {
      // The cast is safe as shared()'s: a key is only ever kept by the one call site that names it.
      // A recorded run (explain, a dry run) keeps nothing and resumes nothing, as shared() is cold there.
      get: <V extends object>(key: string) => (inRecordedRun() ? undefined : keptStoreOf(deps).get(JSON.stringify([req.caller.identity, req.accountId, key])) as V | undefined),
      set: (key: string, value: object | undefined, ttlMs: number, size = 1) => {
        if (inRecordedRun()) return;
        const full = JSON.stringify([req.caller.identity, req.accountId, key]);
        if (value === undefined) keptStoreOf(deps).delete(full);
        else keptStoreOf(deps).set(full, value, { ttl: ttlMs, size: Math.max(1, Math.ceil(size)) });
      },
    },
  };
}

/**
 * A caller scope for hooks that start shared loads (ctx.memo, ctx.remember), whose load
 * functions read through the scope they closed over. While a load this request started runs
 * (`underLoad`), the scope's reads go under the load's shared signal instead of the request's,
 * so the load keeps going for the other requests that wait for it if this one leaves. A
 * request's hooks run one at a time (each awaits its load), so no other read of this scope
 * happens meanwhile.
 */
export function loadingScope(deps: RouteDeps, req: ScopedRequest, operation: string) {
  let loadSignal: AbortSignal | undefined;
  const scope: CallerScope = {
    ...callerScope(deps, req, operation),
    read: (op, variables, options) => readsOf(deps, req.caller, loadSignal ?? req.signal, (note) => noteDegraded(req.c, note))(op, variables, options),
  };
  async function underLoad<T>(signal: AbortSignal, load: () => Promise<T>): Promise<T> {
    loadSignal = signal;
    try {
      return await load();
    } finally {
      loadSignal = undefined;
    }
  }
  return { scope, underLoad };
}

/** One inbound v2 request, parsed and authorised. */
export interface RouteRequest {
  c: GatewayContext;
  caller: Caller;
  accountId: number;
  params: V2Params;
  format: V2Format;
  pathParams: Record<string, string>;
  /** Absolute URL as the client should see it (gateway origin, raw path and query). */
  publicUrl: string;
  /** The request's deadline and disconnect signal: every upstream call it makes carries it. */
  signal: AbortSignal;
}
