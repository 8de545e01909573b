import type { RecentWrites } from '../state/recent-writes.ts';
import type { Condition } from '../upstream/entity-query.ts';
import type { EntityKind, EntityRef } from './entity-ref.ts';
import type { MetricDataMapping, MetricNamesMapping } from './metric-mapping.ts';
import type { V2Status } from '../v2/errors.ts';
import type { BodyObject, RequestBodyKind } from '../v2/request-body.ts';
import type { V2Format } from '../v2/format.ts';
import type { V2Body } from '../v2/format.ts';
import { NO_PARAMS, type Fidelity, type ParamSchema } from '../v2/param-schema.ts';
import type { V2Params } from '../v2/params.ts';

export type { Fidelity, ParameterNote } from '../v2/param-schema.ts';
// The metric routes' contract lives in its own module; read through here like the rest.
export {
  defineMetricDataMapping,
  defineMetricNamesMapping,
  type MetricDataMapping,
  type MetricDataParams,
  type MetricNamesMapping,
  type MetricNamesParams,
  type MetricTarget,
  type ResolvedWithin,
  type TargetWithin,
  type TimesliceTarget,
  type TimesliceTargetContext,
} from './metric-mapping.ts';

/**
 * The declarative contract of one v2 route (one module in mappings/). The router, the
 * compatibility report and the tests all read these declarations; a route's behaviour lives
 * in its mapping's pure functions, the shared machinery in src/routes/.
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

/** Reads a list mapping may make beside its search (queries only, through the caller's key). */
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
  read(operation: string, variables: Record<string, unknown>): Promise<unknown>;
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
   * A value shared by this caller's requests on this account, whatever the route (e.g. an app's
   * agent instances read over several NerdGraph pages): `load` runs once per key until `ttlMs`
   * passes on the injected clock (concurrent misses share it; a failed load is not kept), and
   * reads through the `read` it is given, which follows the shared load, not one request.
   * `sizeOf`: the value's weight against the cache's total bound (src/routes/types.ts
   * MAX_SHARED_SIZE; default 1): an instance list counts its instances.
   */
  shared<V extends object>(key: string, ttlMs: number, load: (read: CallerScope['read']) => Promise<V>, sizeOf?: (value: V) => number): Promise<V>;
  /**
   * Plain values kept for this caller on this account across requests (e.g. a page walk's
   * progress, so a walk cut short resumes): `set` with undefined forgets; `size` weighs the value
   * against the same total bound as `shared` (default 1).
   */
  keep: {
    get<V extends object>(key: string): V | undefined;
    set(key: string, value: object | undefined, ttlMs: number, size?: number): void;
  };
}

export interface PageReadContext extends CallerScope {
  /**
   * A short-lived answer shared by this caller's requests on this account (e.g. a host index
   * that pages of one filtered list all need): `load` runs once per key until `ttlMs` passes
   * on the injected clock; a failed load is not kept.
   */
  memo<T extends object>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T>;
}

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
}

/** What every paged list's parameters include. */
export interface ListParams {
  page: number;
}

/** A paged v2 list served by an entity search, page numbers emulated over cursors. */
export interface EntityListMapping<P extends ListParams = ListParams> extends MappingBase<P> {
  kind: 'entity-search-list';
  /** The plural v2 wrapper key, e.g. `applications`. */
  wrapperKey: string;
  pageSize: number;
  /**
   * Search conditions for the parameters, scoped to the resolved account; null when the
   * parameters can match nothing (e.g. an empty id list), answered without NerdGraph.
   */
  searchConditions(params: P, accountId: number, ctx: PageReadContext): Condition[] | null | Promise<Condition[] | null>;
  /**
   * One more read for a fetched page, when the search outlines lack what v2 shows (details
   * only entities(guids) returns, per-app links from NRQL, ...): called once per page with its
   * in-account entities; its answer reaches reshapeItem. At most one upstream request.
   */
  enrichPage?(entities: readonly unknown[], ctx: PageReadContext, params: P): Promise<unknown>;
  /**
   * The parameters that change the items beyond the search they select (e.g. exclude_links):
   * pages read with different variants get their own enrichment and rendering.
   */
  renderVariant?(params: P): string;
  /** One upstream entity -> one v2 item (throws on an unexpected shape); `enrichment` is enrichPage's answer. */
  reshapeItem(entity: unknown, ctx: ReshapeContext, enrichment: unknown): V2Body;
  /**
   * Drops items the entity search matched more loosely than v2 would have (e.g. its
   * tokenising LIKE); pages may then hold fewer than pageSize items.
   */
  keepItem?(params: P, item: V2Body): boolean;
}

/** A v2 show route addressed by a numeric id, resolved to a GUID through the cache. */
export interface EntityShowMapping extends MappingBase {
  kind: 'entity-by-id';
  /** The singular v2 wrapper key, e.g. `application`. */
  wrapperKey: string;
  entityKind: { domain: string; type: string };
  notFoundTitle: string;
  /**
   * Entities of other kinds with the same id read in the same request (e.g. the browser app
   * serving an APM app): alias -> kind. Each GUID is computed and sent as `$<alias>Guid`; the
   * alias's answer reaches reshape after the account check, null when absent.
   */
  related?: Readonly<Record<string, EntityKind>>;
  reshape(entity: unknown, ctx: ReshapeContext, related: Readonly<Record<string, unknown>>): V2Body;
}

/**
 * What a read-plan or write mapping gets: the parsed request, and reads through the caller's
 * key. `read` refuses mutations, so a write mapping's only mutation is the one the runner sends.
 */
export interface OperationContext extends CallerScope {
  format: V2Format;
  pathParams: Readonly<Record<string, string>>;
  /** Query string and form body parameters (v2 spellings normalised). */
  params: V2Params;
  /** The parsed write body (JSON, XML or form); empty for reads. */
  body: BodyObject;
  /** How the write body arrived (labels: the Rails XML list rule is for XML only); 'none' for reads. */
  bodyKind?: RequestBodyKind;
  /** Absolute URL as the client should see it, for Link headers. */
  publicUrl: string;
}

export interface PlannedAnswer {
  body: V2Body;
  headers?: Record<string, string>;
}

/** A read whose logic the mapping owns (e.g. deployments over NRQL): one `load` per request. */
export interface ReadPlanMapping extends MappingBase {
  kind: 'read-plan';
  load(ctx: OperationContext): Promise<PlannedAnswer>;
}

/**
 * A write: validation and the reads its rules need, then its mutations, each sent exactly once.
 * Most writes are one step (`answer`). A write v2 did in one call that NerdGraph needs several
 * mutations for (a label on three applications, a channel that needs its destination first)
 * chains steps with `next`: each step is sent only once the one before it was confirmed, and
 * gets that step's payload.
 */
interface WriteStep {
  /** Variables of this step's mutation; null when there is nothing to write. */
  variables: Record<string, unknown> | null;
  /** This step's mutation: the mapping's `operation` unless named (then one of its `stepOperations`). */
  operation?: string;
}

export type WritePlan = WriteStep &
  (
    | {
        /** The v2 answer once NerdGraph confirmed the last step (payload null when nothing was written). */
        answer(payload: unknown): Promise<V2Body> | V2Body;
        next?: undefined;
      }
    | {
        /**
         * The step after this one, given this one's confirmed payload (null when it wrote
         * nothing). Once any step was sent, every failure after it answers the mapping's
         * `unconfirmedTitle` (never "nothing was changed"), and nothing is resent.
         */
        next(payload: unknown): Promise<WritePlan> | WritePlan;
        answer?: undefined;
      }
  );

export interface WriteMapping extends MappingBase {
  kind: 'write';
  successStatus: 200 | 201;
  /**
   * Answer title when NerdGraph may have applied the write (or, for a chained write, part of
   * it) but did not confirm it.
   */
  unconfirmedTitle: string;
  /**
   * A chained write only: answer title (409, which clients do not retry) when a later step was
   * refused or not sent, so the earlier steps are known applied and this one known not: the
   * outcome is certain but partial, and a retry would repeat the earlier steps. Absent: such a
   * failure answers `unconfirmedTitle` (502) like any other after a step went out.
   */
  partialTitle?: string;
  /** The mutations a chained plan's later steps may name besides `operation` (queries/<name>.graphql each). */
  stepOperations?: readonly string[];
  /** Validates the request (throws V2Error), reads what the rules need, plans the mutation. */
  plan(ctx: OperationContext): Promise<WritePlan>;
  /** A body format of its own (Deployments v0 XML); default: the v2 serialiser. */
  serialise?(body: V2Body, format: V2Format): string;
}

/** A v2 route NerdGraph cannot serve: always the same clear v2 error. */
export interface UnsupportedMapping extends MappingBase {
  kind: 'unsupported';
  status: V2Status;
  /** The error title: what is gone (since when, where known) and what to use instead. */
  title: string;
  /** Why the gateway cannot serve the route (the product retired, no NerdGraph equivalent, ...). */
  reason: string;
  /** What to use instead: the NerdGraph operation or product that replaces the route. */
  replacement: string;
}

/**
 * A v2 route New Relic keeps alive after the end of life (the alert namespaces): never
 * translated, always forwarded unchanged to the legacy REST API (src/modes/passthrough.ts).
 * One template, several methods; `method` is the first of them, for code that reads one.
 */
export interface PassthroughMapping extends MappingBase {
  kind: 'passthrough';
  fidelity: 'passthrough';
  methods: readonly [PassthroughMethod, ...PassthroughMethod[]];
  /** Why the route is passed through rather than translated. */
  reason: string;
}

export type PassthroughMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The placeholder operation of passthrough routes: they send nothing to NerdGraph. */
export const PASSTHROUGH_OPERATION = '(passthrough)';

// Method syntax keeps parameters bivariant, so any EntityListMapping<P> is a Mapping.
export type Mapping =
  | EntityListMapping
  | EntityShowMapping
  | MetricNamesMapping
  | MetricDataMapping
  | ReadPlanMapping
  | WriteMapping
  | UnsupportedMapping
  | PassthroughMapping;

export const MAPPING_KINDS: ReadonlySet<Mapping['kind']> = new Set([
  'entity-search-list',
  'entity-by-id',
  'metric-names',
  'metric-data',
  'read-plan',
  'write',
  'unsupported',
  'passthrough',
]);

/** Identity helpers that keep each module's literal type checked against the contract. */
export function defineListMapping<P extends ListParams>(mapping: EntityListMapping<P>): EntityListMapping<P> {
  return mapping;
}

export function defineShowMapping(mapping: EntityShowMapping): EntityShowMapping {
  return mapping;
}

export function defineReadPlanMapping(mapping: ReadPlanMapping): ReadPlanMapping {
  return mapping;
}

export function defineWriteMapping(mapping: WriteMapping): WriteMapping {
  return mapping;
}

export function defineUnsupportedMapping(mapping: UnsupportedMapping): UnsupportedMapping {
  return mapping;
}

/** What a passthrough module declares; the rest of the contract is the same for all of them. */
export interface PassthroughDeclaration {
  id: string;
  route: string;
  methods: PassthroughMapping['methods'];
  summary: string;
  reason: string;
  assumptions?: readonly string[];
}

export function definePassthroughMapping(declared: PassthroughDeclaration): PassthroughMapping {
  return {
    kind: 'passthrough',
    id: declared.id,
    route: declared.route,
    methods: declared.methods,
    method: declared.methods[0],
    operation: PASSTHROUGH_OPERATION,
    summary: declared.summary,
    fidelity: 'passthrough',
    reason: declared.reason,
    parameters: NO_PARAMS,
    fields: [],
    knownGaps: [],
    assumptions: declared.assumptions ?? [],
  };
}

/** `GET`, or `GET` and `POST`, as the compatibility report and the 405 Allow header show it. */
export function methodsOf(mapping: Mapping): string[] {
  if (mapping.kind === 'passthrough') return [...mapping.methods];
  return mapping.readOnlyPost ? [mapping.method, 'POST'] : [mapping.method];
}
