import { z } from 'zod';
import type { MetricDataMapping, MetricNamesMapping } from './mapping.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import { hasControlCharacters } from '../upstream/query-literal.ts';
import { entityRef, requireEntity as requireExactEntity, type EntityRef } from './entity-ref.ts';
import type { RouteRequest } from './types.ts';

/**
 * What the two metric routes share: the entity the path names. Its GUID is computed (account
 * and id are both known), so checking that it exists costs no request of its own: the
 * entity rides along in the metric request's document.
 */
export const EntityProbe = z.object({ guid: z.string(), accountId: z.number() }).nullable();

type TimesliceMapping = MetricDataMapping | MetricNamesMapping;

export type TimesliceEntity = EntityRef;

export function timesliceEntity(mapping: TimesliceMapping, req: RouteRequest): TimesliceEntity {
  return entityRef(mapping.entityKind, req.pathParams.id, req.accountId, mapping.notFoundTitle);
}

/** 404 unless NerdGraph returned exactly that entity, in the caller's account. */
export function requireEntity(
  probe: z.infer<typeof EntityProbe>,
  entity: TimesliceEntity,
  mapping: TimesliceMapping,
  accountId: number,
  metrics: GatewayMetrics,
): void {
  requireExactEntity(probe, entity, { accountId, operation: mapping.operation, metrics }, mapping.notFoundTitle);
}

const MAX_NAME_LENGTH = 1024;

/** Names no metric can have are answered "not found" without being sent anywhere. */
export function isQueryableName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && !hasControlCharacters(name);
}

/** The look-back window for name checks, on whole minutes (rows exist only for whole minutes). */
export function lookbackWindow(now: number, lookbackMs: number): { since: number; until: number } {
  const until = Math.floor(now / 60_000) * 60_000 + 60_000;
  return { since: until - 60_000 - lookbackMs, until };
}

const NamesRow = z.object({ names: z.array(z.string()) });

/** The metric names in the rows of a metricNamesQuery (src/upstream/nrql.ts: `uniques(...) AS names`). */
export function metricNamesIn(results: readonly unknown[]): string[] {
  return results.flatMap((row) => NamesRow.safeParse(row).data?.names ?? []);
}
