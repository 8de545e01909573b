import { NO_PARAMS } from '../v2/param-schema.ts';
import type { EntityListMapping, EntityShowMapping, ListParams } from './mapping-reads.ts';
import type { MetricDataMapping, MetricNamesMapping } from './metric-mapping.ts';
import { PASSTHROUGH_OPERATION, type PassthroughMapping, type ReadPlanMapping, type UnsupportedMapping, type WriteMapping } from './mapping-operations.ts';

/**
 * The declarative contract of one v2 route (one module in mappings/), by family: what every
 * mapping declares and gets (mapping-base.ts), the entity read kinds (mapping-reads.ts), the metric kinds (metric-mapping.ts), the kinds
 * that own their logic or send nothing (mapping-operations.ts). This module joins them into
 * Mapping, with the define* helpers each module calls.
 */
export type { Fidelity, ParameterNote } from '../v2/param-schema.ts';
export * from './mapping-base.ts';
export * from './mapping-reads.ts';
export * from './mapping-operations.ts';
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

export type Mapping =
  | EntityListMapping
  | EntityShowMapping
  | MetricNamesMapping
  | MetricDataMapping
  | ReadPlanMapping
  | WriteMapping
  | UnsupportedMapping
  | PassthroughMapping;

/** The mappings that read: lists, shows, metric names and data, read plans (each may declare a ReadSample). */
export type ReadMapping = EntityListMapping | EntityShowMapping | MetricNamesMapping | MetricDataMapping | ReadPlanMapping;

const READ_KINDS: ReadonlySet<Mapping['kind']> = new Set(['entity-search-list', 'entity-by-id', 'metric-names', 'metric-data', 'read-plan']);

export function isReadMapping(mapping: Mapping): mapping is ReadMapping {
  return READ_KINDS.has(mapping.kind);
}

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

