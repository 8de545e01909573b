import { z } from 'zod';
import type { MetricDataMapping, MetricNamesMapping, MetricTarget, TimesliceTarget, TimesliceTargetContext } from './metric-mapping.ts';
import type { NrqlEquality } from '../upstream/nrql.ts';
import { notFound } from '../v2/errors.ts';
import { hasControlCharacters } from '../upstream/query-literal.ts';
import { checkedParse } from '../upstream/compiled-check.ts';
import { requireEntity as requireExactEntity } from './entity-ref.ts';
import { callerScope, type RouteDeps, type RouteRequest } from './types.ts';

/**
 * What the metric routes share: the target the path names (an app, a mobile app, or a host
 * or instance inside an app). The probed entity's GUID is computed (account and id are both
 * known), so checking that it exists costs no request of its own: it rides along in the metric
 * request's document. Fields beyond guid and accountId (an app's instances) are kept for the
 * target's own `inside.holds` check, which parses them.
 */
export const EntityProbe = z.looseObject({ guid: z.string(), accountId: z.number() }).nullable();

type TimesliceMapping = MetricDataMapping | MetricNamesMapping;

/**
 * A mapping's target (plain data, src/routes/metric-mapping.ts) for the request's path: the
 * entity `{id}` names, its rows by the declared attribute, and the host or instance within it.
 */
export async function resolveTarget(target: MetricTarget, ctx: TimesliceTargetContext): Promise<TimesliceTarget> {
  const entity = ctx.entityRef(target.entity, ctx.pathParams.id, target.notFoundTitle);
  const rows: NrqlEquality = { attribute: target.attribute, value: target.value === 'id' ? entity.id : entity.guid };
  const { within } = target;
  if (within === undefined) return { entity, notFoundTitle: target.notFoundTitle, scope: [rows], key: String(entity.id) };
  const found = await within.resolve(ctx, entity);
  return {
    entity,
    notFoundTitle: target.notFoundTitle,
    scope: [rows, ...found.scope],
    key: `${entity.id}/${found.key}`,
    inside: { notFoundTitle: within.notFoundTitle, holds: found.holds },
  };
}

/**
 * Resolves a mapping's target for a request. What targets keep (a host directory) is in the
 * caller's cache (CallerScope.cache), shared by the names and data routes of one gateway.
 */
export function createTargetResolver(deps: RouteDeps) {
  return function resolveMappingTarget(mapping: TimesliceMapping, req: RouteRequest): Promise<TimesliceTarget> {
    const ctx: TimesliceTargetContext = { ...callerScope(deps, req, mapping.operation), pathParams: req.pathParams };
    return resolveTarget(mapping.target, ctx);
  };
}

export type TargetResolver = ReturnType<typeof createTargetResolver>;

/** 404 unless NerdGraph returned exactly the probed entity, in the caller's account, still holding the target. */
export async function requireTarget(probe: z.infer<typeof EntityProbe>, target: TimesliceTarget, mapping: TimesliceMapping, accountId: number, deps: Pick<RouteDeps, 'metrics'>): Promise<void> {
  const entity = requireExactEntity(probe, target.entity, { accountId, operation: mapping.operation, metrics: deps.metrics }, target.notFoundTitle);
  // `holds` may read (an app's later pages of instances), so it is awaited.
  if (target.inside && !(await target.inside.holds(entity))) throw notFound(target.inside.notFoundTitle);
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
  return results.flatMap((row) => checkedParse(NamesRow, row).data?.names ?? []);
}
