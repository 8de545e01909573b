import { z } from 'zod';
import { CoalescingCache } from '../cache/coalescing-cache.ts';
import type { MetricNamesMapping, TimesliceTarget } from './mapping.ts';
import { metricNamesQuery } from '../upstream/nrql.ts';
import { NrqlResults, parseAnswer } from '../upstream/answer.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { respondCacheable } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';
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

export function createMetricNamesRunner(deps: RouteDeps, resolveTarget: TargetResolver = createTargetResolver(deps)) {
  const listings = new CoalescingCache<Listing>('metric-names', deps.metrics, { max: 1_000, ttlMs: LISTING_TTL_MS });

  function load(mapping: MetricNamesMapping, req: RouteRequest, target: TimesliceTarget): Promise<Listing> {
    return listings.get(
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

  return async function runMetricNames(mapping: MetricNamesMapping, req: RouteRequest): Promise<Response> {
    const target = await resolveTarget(mapping, req);
    const { page, name: filter } = mapping.parameters.parse(req.params);
    const listing = await load(mapping, req, target);
    await requireTarget(listing.probe, target, mapping, req.accountId, deps);

    const matching = filter === undefined ? listing.names : listing.names.filter((name) => name.includes(filter));
    const items = matching
      .slice((page - 1) * mapping.pageSize, page * mapping.pageSize)
      .map((name) => ({ name, values: Object.keys(mapping.formulasOf(name)) }));
    const link = linkHeader(req.publicUrl, page, Math.ceil(matching.length / mapping.pageSize));
    return respondCacheable(req.c, req.format, { metrics: items }, link ? { link } : {});
  };
}
