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

/**
 * The sample requests of a route, which the tools send: `npm run probe` (src/probe/routes.ts)
 * sends a read's sample to the legacy REST API and to the translation, and `npm run compat --
 * --costs` (scripts/compat-costs.ts) counts what a read's or a write's sample costs on the
 * sandbox. The route's template is the request; a sample adds only what the template does not
 * say, as text with placeholders: `{name}` stands for a sample value the tool's fixtures find
 * (an id from the lists, as a client finds it), encoded where it lands in a path or a query; the
 * rest of the text is sent as written. Each path parameter a sample does not name is the sample
 * value of its own name (`{host_id}` is `{host_id}`), and `{format}` is `json`.
 */
interface SampleRequest<V extends string> {
  /** The path parameters that are not the sample value of their own name: `{ id: '{application_id}' }`. */
  path?: Readonly<Record<string, `${string}{${V}}${string}`>>;
  /** The query string the sample adds (without `?`): `policy_id={nrql_policy_id}`. */
  query?: string;
}

/**
 * The sample values of reads. `application_id`, `key_transaction_id`, `mobile_application_id`,
 * `user_id`, `policy_id`: the first of the legacy list (a reporting one where the list says);
 * `host_id`, `instance_id`: the first of that application's; `nrql_policy_id`: a policy that has
 * NRQL conditions; `nrql_condition_id`: the first of that policy's NRQL conditions; `from`, `to`: a
 * closed 30-minute window in the past (ISO seconds).
 */
export type ReadSampleValue = 'application_id' | 'host_id' | 'instance_id' | 'key_transaction_id' | 'mobile_application_id' | 'user_id' | 'policy_id' | 'nrql_policy_id' | 'nrql_condition_id' | 'from' | 'to';

/**
 * A read's sample: the route with its path parameters filled, plus `query`. A placeholder the
 * fixtures found no value for skips the route in the probe and fails the cost table. For its
 * cost a list is also walked page by page; metric names from their whole list (without `query`).
 */
export interface ReadSample extends SampleRequest<ReadSampleValue> {
  /**
   * Query the probe adds to compare both sides on the same items (where they order a list
   * differently), when the fixtures found its values; else the sample is compared without it.
   */
  compareQuery?: string;
}

/**
 * The sample values of writes, found in the sandbox, each distinct from the others so that no
 * sample undoes what another one needs. `call` is `cold` or `warm`, so the two calls write
 * different names. Every other value is an id: a pair (the first on the cold call, the second on
 * the warm one) but `nrql_policy_id` (a policy of static NRQL conditions, on both calls).
 * `reporting_app_id`: reporting applications other than the reads' sample; `silent_app_id`: ones
 * that do not report; `channel_to_delete_id`, `channel_to_link_id`: email channels;
 * `unlinked_policy_id`: policies no channel links yet; `policy_to_rename_id`,
 * `policy_to_delete_id`: the account's last four policies; `incident_to_acknowledge_id`,
 * `incident_to_close_id`: open incidents; `nrql_condition_to_update_id`,
 * `nrql_condition_to_delete_id`: static NRQL conditions; `apm_condition_id`,
 * `external_service_condition_id`, `synthetics_condition_id`, `location_failure_condition_id`:
 * conditions of each family, for its delete.
 */
export type WriteSampleValue =
  | 'call'
  | 'reporting_app_id'
  | 'silent_app_id'
  | 'channel_to_delete_id'
  | 'channel_to_link_id'
  | 'unlinked_policy_id'
  | 'policy_to_rename_id'
  | 'policy_to_delete_id'
  | 'incident_to_acknowledge_id'
  | 'incident_to_close_id'
  | 'nrql_policy_id'
  | 'nrql_condition_to_update_id'
  | 'nrql_condition_to_delete_id'
  | 'apm_condition_id'
  | 'external_service_condition_id'
  | 'synthetics_condition_id'
  | 'location_failure_condition_id';

/** A JSON body with placeholders in its strings; a string that is one id's placeholder becomes the id as a number (v2's ids are numbers). */
export type SampleJson = string | number | boolean | null | readonly SampleJson[] | { readonly [key: string]: SampleJson };

/**
 * A write's sample: the request sent twice on one fresh gateway, cold then warm, each with its
 * own values (the same write again would no longer be the same call).
 */
export interface WriteSample extends SampleRequest<WriteSampleValue> {
  /** The body: JSON (sent as `application/json`) or a form (its text, filled like the query). */
  body?: { json: SampleJson } | { form: string };
  /** The path's `{format}` (default `json`). */
  format?: 'json' | 'xml';
  /** The id of the write whose sample makes what this one's needs (the label it deletes): measured after it. */
  after?: string;
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

/** The type v2 sent at a key path (`time`: ISO seconds with offset; `epoch-ms`: milliseconds since 1970). */
export type V2KeyType = 'int' | 'num' | 'string' | 'bool' | 'time' | 'epoch-ms' | 'int[]' | 'string[]' | 'object';

/**
 * The key paths v2 documented for a GET answer, as data: what a v2 client may read in one list
 * item (or the one shown object, or the metric_data object), with the type v2 sent. Every value
 * may also be null (a key with no NerdGraph source is sent as null), but only at the end of a
 * path: a block sent as null hides the keys inside it. Path syntax: `a.b` nests, `a[]` is every
 * element of the array `a`, and a `?` after a segment marks it optional (v2 left it out at
 * times): the keys under an optional segment are required whenever it is present.
 *
 * Sources, short names as in ../shared/reference/rest-v2-shapes.md: SHAPES (that file, by
 * section), SW (v2-definitions-2016.json, New Relic's own swagger, by definition), CG
 * (newrelic-client-go's tests, pkg/apm/*_test.go and pkg/alerts/*_test.go: the real v2 answers
 * it decodes). Where SW types a field wrongly and SHAPES says so (host and instance `language`:
 * integer in SW, a string in real data), SHAPES wins. Top-level link templates (`links` beside
 * the wrapper) are left out: SHAPES §0 says no client reads them and omitting them is safe.
 */
export interface V2KeyPaths {
  /** Where the items stand: `applications` (a list) or `application` (one object). */
  wrapper: string;
  list: boolean;
  /** Where the paths come from (short names of ../shared/reference: SHAPES, SW, CG). */
  source: string;
  paths: Readonly<Record<string, V2KeyType>>;
}

/** What every read mapping declares beside MappingBase: the sample the tools send (ReadSample), the keys v2 documented. */
export interface ReadMappingBase<P = unknown> extends MappingBase<P> {
  sample?: ReadSample;
  /** Every translated GET declares them: test/differential/key-paths.test.ts checks both faces send each. */
  v2Keys?: V2KeyPaths;
}

/** One resource's key paths, placed under each wrapper it is answered in (`applications`, a list; `application`, one object). */
export function v2KeysOf(source: string, paths: V2KeyPaths['paths']): (wrapper: string, list: boolean) => V2KeyPaths {
  return (wrapper, list) => ({ wrapper, list, source, paths });
}
