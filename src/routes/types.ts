import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallerCache } from '../caller/caller-cache.ts';
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
  /** What mappings keep per caller and account between requests (CallerScope.cache). */
  callerCache: CallerCache;
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

/**
 * The signal of the CallerScope.cache load the current code runs inside, if any: the scope's
 * reads go under it instead of the request's, so a load keeps going for the other requests that
 * wait for it when the one that started it leaves. Per async chain, so nested loads and
 * concurrent ones of one request each read under their own.
 */
const loadSignals = new AsyncLocalStorage<AbortSignal>();

/** The caller's scope every mapping hook starts from; `operation` labels the scope-violation counts. */
export function callerScope(deps: RouteDeps, req: ScopedRequest, operation: string): CallerScope {
  const scope = { accountId: req.accountId, operation, metrics: deps.metrics };
  const read: CallerScope['read'] = (op, variables, options) => readsOf(deps, req.caller, loadSignals.getStore() ?? req.signal, (note) => noteDegraded(req.c, note))(op, variables, options);
  const { callerCache } = deps;
  return {
    accountId: req.accountId,
    now: deps.now(),
    read,
    entityRef: (kind, rawId, notFoundTitle) => entityRef(kind, rawId, req.accountId, notFoundTitle),
    requireEntity: (entity, ref, notFoundTitle) => requireEntity(entity, ref, scope, notFoundTitle),
    inAccount: (entity, label = operation) => inAccount(entity, req.accountId, label, deps.metrics),
    recent: deps.recentWrites,
    cache: {
      load: (key, load) => callerCache.load(req, key, (signal) => loadSignals.run(signal, () => load(read)), req.signal),
      get: (key) => callerCache.get(req, key),
      set: (key, entry) => callerCache.set(req, key, entry),
      forget: (key) => callerCache.forget(req, key),
    },
  };
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
