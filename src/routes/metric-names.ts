import { z } from 'zod';
import { CoalescingCache } from '../cache/coalescing-cache.ts';
import type { MetricNamesMapping, TimesliceTarget } from './mapping.ts';
import { metricNamesQuery } from '../upstream/nrql.ts';
import { NrqlResults, parseAnswer } from '../upstream/answer.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { respondCacheable } from '../v2/format.ts';
import { linkHeaders, pageOfHeld } from './paging.ts';
import { EntityProbe, createTargetResolver, lookbackWindow, metricNamesIn, requireTarget, type TargetResolver } from './timeslice-target.ts';
import { callUpstream } from './request-signal.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * Serves `metrics.json`: the names the entity reported in the look-back window, from one
 * `uniques(metricTimesliceName)` query, then filtered, sorted and paged here. Listing names is
 * expensive upstream, so a listing is cached briefly per caller, account and entity: walking
 * its pages (or repeating it) costs one NerdGraph request.
 */
const MetricNamesAnswer = z.object({
  actor: z.object({
    entity: EntityProbe,
    account: z.object({ nrql: NrqlResults }).nullable(),
  }),
});

const LISTING_TTL_MS = 60_000;

interface Listing {
  probe: z.infer<typeof EntityProbe>;
  /** Sorted by UTF-16 code units, as v2 listed them. */
  names: string[];
}

/** What the names stage keeps between requests: listings, and the targets' shared memory. */
export interface MetricNamesStage {
  deps: RouteDeps;
  resolveTarget: TargetResolver;
  listings: CoalescingCache<Listing>;
}

export function createMetricNamesStage(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)): MetricNamesStage {
  return { deps, resolveTarget, listings: new CoalescingCache<Listing>('metric-names', deps.metrics, { max: 1_000, ttlMs: LISTING_TTL_MS }) };
}

/** The target's names in the look-back window, sorted: one NerdGraph request per listing lifetime. */
function loadListing(stage: MetricNamesStage, mapping: MetricNamesMapping, req: RouteRequest, target: TimesliceTarget): Promise<Listing> {
  const { deps } = stage;
  return stage.listings.get(
    JSON.stringify([req.caller.identity, req.accountId, mapping.id, target.key]),
    async (signal) => {
      const now = deps.now();
      const variables = {
        accountId: req.accountId,
        guid: target.entity.guid,
        names: metricNamesQuery({ scope: target.scope, ...lookbackWindow(now, deps.metricNamesLookbackMs) }),
      };
      const data = await callUpstream(deps.nerdgraph, { operation: mapping.operation, variables, apiKey: req.caller.apiKey, signal });
      const answer = parseAnswer(MetricNamesAnswer, data, mapping.operation);
      const results = answer.actor.account?.nrql?.results;
      if (!results) throw new UpstreamError('upstream_failure', `${mapping.operation}: no NRQL results`);
      const names = metricNamesIn(results);
      return { value: { probe: answer.actor.entity, names: [...new Set(names)].sort() } };
    },
    req.signal,
  );
}

/** Serves one page of `metrics.json`: the names matching `name`, each with its value names. */
export async function serveMetricNames(stage: MetricNamesStage, mapping: MetricNamesMapping, req: RouteRequest): Promise<Response> {
  const target = await stage.resolveTarget(mapping, req);
  const { page, name: filter } = mapping.parameters.parse(req.params);
  const listing = await loadListing(stage, mapping, req, target);
  await requireTarget(listing.probe, target, mapping, req.accountId, stage.deps);

  const matching = filter === undefined ? listing.names : listing.names.filter((name) => name.includes(filter));
  const { items, link } = pageOfHeld(matching, page, mapping.pageSize, req.publicUrl);
  const metrics = items.map((name) => ({ name, values: Object.keys(mapping.formulasOf(name)) }));
  return respondCacheable(req.c, req.format, { metrics }, linkHeaders(link));
}

/** The router's names runner; pass the data runner's resolver so a host's directory is shared. */
export function createMetricNamesRunner(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)) {
  const stage = createMetricNamesStage(deps, resolveTarget);
  return (mapping: MetricNamesMapping, req: RouteRequest): Promise<Response> => serveMetricNames(stage, mapping, req);
}
