import type { CallerCacheEntry } from '../caller/caller-cache.ts';
import type { RecentWrites } from '../state/recent-writes.ts';
import type { EntityKind, EntityRef } from './entity-ref.ts';
import type { V2Body } from '../v2/format.ts';
import type { Fidelity, ParamSchema } from '../v2/param-schema.ts';

/**
 * What every mapping declares (MappingBase: route, operation, parameters, field notes, gaps,
 * assumptions) and what every mapping hook gets about its caller (CallerScope). The router,
 * the compatibility report and the tests all read these declarations; a route's behaviour
 * lives in its mapping's pure functions, the shared machinery in src/routes/.
 */
export interface FieldNote {
  /** The v2 field, as a path in the body (e.g. `applications[].application_summary.response_time`). */
  field: string;
  fidelity: Fidelity;
  /** Where the value comes from in NerdGraph, and any conversion. */
  source: string;
}

/** Field notes of one body prefix (`applications[]`, `application`): `(field, fidelity, source)` -> a FieldNote. */
export function fieldNotesUnder(prefix: string): (field: string, fidelity: Fidelity, source: string) => FieldNote {
  return (field, fidelity, source) => ({ field: `${prefix}.${field}`, fidelity, source });
}

export interface KnownGap {
  /**
   * The v2 body path the gateway cannot produce faithfully (omitted or different), or
   * undefined for a gap that is not one field. Differential tests ignore exactly these paths.
   */
  path?: string;
  description: string;
}

/** How one CallerScope.read may answer. */
export interface ReadOptions {
  /**
   * Parts of the answer the mapping can do without, by answer path (response keys, aliases as
   * the document names them, e.g. `actor.account.endUser`), each with what the v2 answer shows
   * without it. A GraphQL error in such a part (an NRQL timeout or rate limit) leaves it null
   * instead of failing the read; the request's log line records it as degraded, and the answer
   * is not cached as whole (the micro-cache keeps no answer missing an optional part, a list
   * page no enrichment or body of one). Not for reads inside CallerScope.cache loads: those
   * keep what they load.
   */
  optional?: Readonly<Record<string, string>>;
}


/**
 * What every mapping hook gets about its caller: the account, the clock, reads through the
 * caller's key (queries only), and the one way to entities (src/routes/entity-ref.ts). Built by
 * callerScope in src/routes/types.ts; each runner adds what its kind of mapping needs.
 */
export interface CallerScope {
  accountId: number;
  /** Epoch ms of the request, from the injected clock. */
  now: number;
  /** A query through the caller's key (counted as an upstream request); never a mutation. */
  read(operation: string, variables: Record<string, unknown>, options?: ReadOptions): Promise<unknown>;
  /** The entity a path id names in the caller's account: its GUID is computed (404 when malformed). */
  entityRef(kind: EntityKind, rawId: string | undefined, notFoundTitle: string): EntityRef;
  /** 404 unless `entity` is exactly the one `ref` names, in the caller's account (a foreign one is counted). */
  requireEntity<T>(entity: T | null | undefined, ref: Pick<EntityRef, 'guid'>, notFoundTitle: string): T;
  /** The one account check for an entity an answer carries; counted (under `operation`, default the route's) when it fails. */
  inAccount(entity: unknown, operation?: string): boolean;
  /**
   * Deployments and label changes this gateway (any replica) wrote that NerdGraph may not show
   * yet (its ingest lag): the lists merge them (src/state/recent-writes.ts).
   */
  recent: RecentWrites;
  /**
   * What this caller keeps on this account between requests, whatever the route: the gateway's
   * one per-caller cache (src/caller/caller-cache.ts: bounded, a TTL per entry, cold in a
   * recorded run).
   */
  cache: ScopedCache;
}

/** CallerScope.cache: the per-caller cache (src/caller/caller-cache.ts) as one request's caller and account see it. */
export interface ScopedCache {
  /**
   * The value under `key`, loaded by `load` on a miss (e.g. an app's agent instances read over
   * several NerdGraph pages): concurrent misses share one load, and a failed load is not kept.
   * `load` reads through the `read` it is given, as the scope's own `read` does while it runs:
   * under the shared load's signal, so the load goes on for the other requests waiting for it
   * when the one that started it leaves.
   */
  load<V extends object>(key: string, load: (read: CallerScope['read']) => Promise<CallerCacheEntry<V>>): Promise<V>;
  /** The value kept under `key`, if any (by `load` or `set`). */
  get<V extends object>(key: string): V | undefined;
  /** Keeps a value got without a load (e.g. a page walk's progress, so a walk cut short resumes). */
  set(key: string, entry: CallerCacheEntry<object>): void;
  forget(key: string): void;
}

/** A list's hooks get the caller's scope. */
export type PageReadContext = CallerScope;

export interface ReshapeContext {
  accountId: number;
  /** Epoch ms of the request, from the injected clock. */
  now: number;
}

export interface MappingBase<P = unknown> {
  /** Stable id, e.g. `applications.list`. */
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /**
   * A GET route that also answers POST with the same parameters in a form body (v2 did; a
   * SilverStripe module posts metric-data forms). Such a POST reads, it never writes.
   */
  readOnlyPost?: boolean;
  /** v2 route template; `{format}` is `json` or `xml`. Also the metrics/logs route label. */
  route: string;
  /** Operation name = file name in queries/. */
  operation: string;
  summary: string;
  fidelity: Fidelity;
  /**
   * The v2 parameters the route reads (defineParams of src/v2/param-schema.ts): the runner or
   * the mapping parses the request with it, and the compatibility report lists its notes.
   */
  parameters: ParamSchema<P>;
  fields: readonly FieldNote[];
  knownGaps: readonly KnownGap[];
  /** Choices made where the reference is UNCONFIRMED. */
  assumptions: readonly string[];
  /** Static top-level `links` templates v2 sent beside the data. */
  topLinks?: V2Body;
  /**
   * Why this translated route is passed through to the legacy REST API unless a ROUTE_MODES
   * rule names it (e.g. New Relic keeps the namespace alive): a catch-all rule does not move it.
   */
  passthroughByDefault?: string;
}

