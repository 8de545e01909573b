import type { EntityKind, EntityRef } from './entity-ref.ts';
import type { CallerScope, ReadMappingBase } from './mapping-base.ts';
import type { NrqlEquality } from '../upstream/nrql.ts';

/**
 * The contract of the metric routes (metrics.json and metrics/data.json): what their path names,
 * declared as data on the mapping and resolved per request by src/routes/timeslice-target.ts,
 * and the formula table they compute values with. The rest of the contract is in mapping.ts.
 */

/**
 * What a metric route's path names, as data: the entity its `{id}` addresses, and the NRQL
 * attribute its timeslice rows carry that entity under. E.g. an APM app's rows carry its id as
 * `appId` (`{ entity: EntityKinds.apmApplication, attribute: 'appId', value: 'id' }`), a mobile
 * app's carry its GUID. The probed entity's GUID is computed (account and id are both known).
 */
export interface MetricTarget {
  /** The kind of entity the `{id}` path parameter names. */
  entity: EntityKind;
  /** The 404 title when NerdGraph does not return that entity in the caller's account. */
  notFoundTitle: string;
  /** The NRQL attribute selecting the entity's rows; several: a row matches by any of them. */
  attribute: string | readonly string[];
  /** Which fact of the entity the attribute holds: its v2 id, or its GUID. */
  value: 'id' | 'guid';
  /** A host or instance inside the entity, named by a second path parameter. */
  within?: TargetWithin;
}

/**
 * A target inside the entity (a host or instance of an app): resolved from the path once the
 * entity is known, it narrows the entity's rows and says how to check it still exists.
 */
export interface TargetWithin {
  /** The 404 title when the entity does not hold it. */
  notFoundTitle: string;
  /**
   * Reads the path (ctx.pathParams) for it: ids are checked here, and a host id needs its host
   * name first, so it may read (through ctx.cache, once per directory lifetime).
   */
  resolve(ctx: TimesliceTargetContext, entity: EntityRef): ResolvedWithin | Promise<ResolvedWithin>;
}

export interface ResolvedWithin {
  /** More NRQL conditions on the entity's rows (values only through the literal builder). */
  scope: NrqlEquality[];
  /** Its key within the entity, for cache keys (e.g. `host/2`). */
  key: string;
  /** Whether the entity as returned (zod-parsed here) still holds it; may read later pages. */
  holds(entity: unknown): boolean | Promise<boolean>;
}

/**
 * A metric target resolved for one request: the entity its document probes (existence proved in
 * the metric request itself), the NRQL scope of its rows, and its 404s.
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
  /** For a target inside the probed entity: its 404 title, and whether the entity still holds it. */
  inside?: { notFoundTitle: string; holds(entity: unknown): boolean | Promise<boolean> };
}

/** What a TargetWithin may use: the caller's scope (its cache included) and the path. */
export interface TimesliceTargetContext extends CallerScope {
  pathParams: Readonly<Record<string, string>>;
}

/** The timeslice metrics of one target: an entity addressed by a numeric id, or a host or instance inside one. */
interface TimesliceMappingBase<P> extends ReadMappingBase<P> {
  /** What the path names; resolved before the parameters are parsed (v2 answered 404 before 422). */
  target: MetricTarget;
  /**
   * A metric's v2 values, each with the NRQL expression template that computes it, in v2's
   * order (the formula table of mappings/common/metric-values.ts): what metrics.json lists and
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

/** Identity helpers that keep each module's literal type checked against the contract. */
export function defineMetricNamesMapping(mapping: MetricNamesMapping): MetricNamesMapping {
  return mapping;
}

export function defineMetricDataMapping(mapping: MetricDataMapping): MetricDataMapping {
  return mapping;
}
