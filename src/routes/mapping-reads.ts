/** The read kinds of mapping: entity lists and shows, metric names and metric data. */
import type { Condition } from '../upstream/entity-query.ts';
import type { EntityKind, EntityRef } from './entity-ref.ts';
import type { NrqlEquality } from '../upstream/nrql.ts';
import type { V2Body } from '../v2/format.ts';
import type { CallerScope, MappingBase, PageReadContext, ReshapeContext } from './mapping-base.ts';

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
 * What a timeslice route's path names, resolved per request (src/routes/timeslice-target.ts):
 * the entity its document probes (GUID computed, existence proved in the metric request
 * itself), the NRQL scope of its rows, and its 404s.
 */
export interface TimesliceTarget {
  /** The entity the document's `$guid` names. */
  entity: EntityRef;
  /** The 404 title when NerdGraph does not return that entity in the caller's account. */
  notFoundTitle: string;
  /** NRQL conditions selecting the target's timeslice rows (values only through the literal builder). */
  scope: NrqlEquality[];
  /** The target within the account, for cache keys (e.g. `1/host/2`). */
  key: string;
  /**
   * For a target inside the probed entity (a host or instance of an app): the 404 title when
   * the entity as returned (zod-parsed by `holds`) does not hold it any more.
   */
  inside?: { notFoundTitle: string; holds(entity: unknown): boolean | Promise<boolean> };
}

/** What resolveTarget may use: the path, and cached reads through the caller's key. */
export interface TimesliceTargetContext extends CallerScope {
  pathParams: Readonly<Record<string, string>>;
  /**
   * A value kept per caller and account under `key` (concurrent misses share one load) for
   * `ttlMs` (default 60 s); a failed load is not kept.
   */
  remember<V extends object>(key: string, load: () => Promise<{ value: V; ttlMs?: number }>): Promise<V>;
}

/** The timeslice metrics of one target: an entity addressed by a numeric id, or a host or instance inside one. */
interface TimesliceMappingBase<P> extends MappingBase<P> {
  /**
   * Resolves the path to its target, before the parameters are parsed (v2 answered 404 before
   * 422). Ids are checked here; a host id needs its host name first, so it may read (through
   * ctx.remember, once per directory lifetime).
   */
  resolveTarget(ctx: TimesliceTargetContext): TimesliceTarget | Promise<TimesliceTarget>;
  /**
   * A metric's v2 values, each with the NRQL expression template that computes it, in v2's
   * order (the formula table of mappings/shared/metric-values.ts): what metrics.json lists and
   * what an answer without values[] holds.
   */
  formulasOf(metricName: string): Readonly<Record<string, string>>;
  /** Also the values computed only when asked for by name (a superset of formulasOf). */
  acceptedFormulasOf(metricName: string): Readonly<Record<string, string>>;
}

/** `metrics.json`: metric names seen in a look-back window, paged locally. */
export interface MetricNamesMapping extends TimesliceMappingBase<MetricNamesParams> {
  kind: 'metric-names';
  pageSize: number;
}

/** What the metric-names runner reads. */
export interface MetricNamesParams {
  page: number;
  /** Substring filter on the names. */
  name: string | undefined;
}

/** What the metric-data runner reads; from, to and period as sent (the window rules check them together). */
export interface MetricDataParams {
  names: string[];
  values: string[];
  summarize: boolean;
  from: string | undefined;
  to: string | undefined;
  period: string | undefined;
}

/** `metrics/data.json`: timeslice values by the REST rules, one NRQL query per request. */
export interface MetricDataMapping extends TimesliceMappingBase<MetricDataParams> {
  kind: 'metric-data';
}

