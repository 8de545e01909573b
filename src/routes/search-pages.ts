import { z } from 'zod';
import { CursorCache } from '../cache/cursor-cache.ts';
import { SingleFlight } from '../cache/single-flight.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { parseAnswer } from '../upstream/answer.ts';
import type { EntityListMapping } from './mapping.ts';
import { isWalkable, pastTheCount, requireWalkable } from './paging.ts';
import { callUpstream } from './request-signal.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * v2 `page=N` of an entity search over NerdGraph cursors: one upstream request per page walked
 * in order, from the nearest page whose cursor is known (src/cache/cursor-cache.ts, shared
 * across replicas), concurrent fetches of the same page coalesced (so clients fetching pages
 * 2..N in parallel also cost one request per page in all).
 */
export const SearchPage = z.object({
  actor: z.object({
    entitySearch: z.object({
      count: z.number().int().nonnegative().nullable().optional(),
      results: z.object({ nextCursor: z.string().nullable().optional(), entities: z.array(z.unknown()).nullable() }).nullable(),
    }),
  }),
});

export interface FetchedPage {
  /** null when NerdGraph gave no count: paging then follows cursors alone. */
  count: number | null;
  entities: unknown[];
  nextCursor: string | null;
}

/** Upper bound of upstream pages one request may walk (a jump to page 250 of a cold search). */
export const MAX_PAGES_WALKED = 250;

export const emptyPage = (count: number | null): FetchedPage => ({ count, entities: [], nextCursor: null });

/** What the search pages keep between requests. */
export interface SearchFetches {
  deps: RouteDeps;
  flights: SingleFlight<FetchedPage>;
  /** The micro-cache's (frozen) answer object -> its page, so one answer is one page object. */
  pagesByAnswer: WeakMap<object, FetchedPage>;
}

export function createSearchFetches(deps: RouteDeps): SearchFetches {
  return { deps, flights: new SingleFlight<FetchedPage>(), pagesByAnswer: new WeakMap() };
}

/** One upstream page of the search, at `cursor`. */
async function fetchOne(fetches: SearchFetches, mapping: EntityListMapping, req: RouteRequest, query: string, cursor: string | null, key: string): Promise<FetchedPage> {
  const { deps, flights, pagesByAnswer } = fetches;
  // A recorded run (explain, a dry run) is cold: it neither joins nor starts a shared fetch, nor
  // reuses a page another read filed (it would skip the enrichment calls it explains).
  const recorded = inRecordedRun();
  const read = async (signal: AbortSignal): Promise<FetchedPage> => {
    const data = await callUpstream(deps.nerdgraph, { operation: mapping.operation, variables: { query, cursor }, apiKey: req.caller.apiKey, signal });
    // The micro-cache hands back the same (frozen) answer object to every read in its
    // window: the same page object then keys the same enrichment and rendering.
    const known = !recorded && data !== null && typeof data === 'object' ? pagesByAnswer.get(data) : undefined;
    if (known !== undefined) return known;
    const search = parseAnswer(SearchPage, data, mapping.operation).actor.entitySearch;
    const fetched = { count: search.count ?? null, entities: search.results?.entities ?? [], nextCursor: search.results?.nextCursor ?? null };
    if (!recorded && data !== null && typeof data === 'object') pagesByAnswer.set(data, fetched);
    return fetched;
  };
  if (recorded) return read(req.signal);
  return flights.run(`${key}|${cursor ?? ''}`, read, req.signal).promise;
}

/** Page `page` of the search, walking from the nearest page whose cursor is known. */
export async function fetchSearchPage(fetches: SearchFetches, mapping: EntityListMapping, req: RouteRequest, query: string, page: number): Promise<FetchedPage> {
  const { cursors } = fetches.deps;
  // Shared state (src/state/): a walk begun on another replica goes on here.
  const key = cursors.keyOf(req.caller.identity, req.accountId, mapping.operation, query);
  const fetchAndLearn = async (at: { page: number; cursor: string | null }): Promise<FetchedPage> => {
    const fetched = await fetchOne(fetches, mapping, req, query, at.cursor, key);
    const next = fetched.nextCursor === null ? undefined : { page: at.page + 1, cursor: fetched.nextCursor };
    // A warm page teaches nothing new (same count, next cursor known): no write to shared state.
    const nearestNext = next === undefined ? undefined : known.nearest(next.page);
    const taughtNothing = known.count === fetched.count && (next === undefined || (nearestNext?.page === next.page && nearestNext.cursor === next.cursor));
    if (!taughtNothing) await cursors.remember(key, fetched.count, next);
    return fetched;
  };
  let known = await cursors.pages(key);
  // A cold search starts with page 1: it tells whether the page asked for exists at all.
  if (page > 1 && known.count === undefined) {
    const first = await fetchAndLearn({ page: 1, cursor: null });
    if (first.nextCursor === null) return emptyPage(first.count);
    // What page 1 taught is all a cold search knows: no second read of shared state.
    known = CursorCache.taught(first.count, { page: 2, cursor: first.nextCursor });
  }

  let start = known.nearest(page);
  // Past the end by the count, and no cursor says otherwise: nothing to fetch.
  if (start.page !== page && pastTheCount(page, known.count, mapping.pageSize)) return emptyPage(known.count ?? null);
  requireWalkable(page, start.page, MAX_PAGES_WALKED);
  let at = start;
  for (let restarted = false; ; ) {
    try {
      for (;;) {
        const fetched = await fetchAndLearn(at);
        if (at.page === page) return fetched;
        if (fetched.nextCursor === null) return emptyPage(fetched.count);
        at = { page: at.page + 1, cursor: fetched.nextCursor };
      }
    } catch (error) {
      // A remembered cursor NerdGraph now refuses (expired: its error is undocumented) is
      // forgotten and the walk starts again from page 1, once. Transient and auth failures
      // are answered as they are: walking again would only multiply them.
      const refusedRememberedCursor =
        at === start && start.cursor !== null && error instanceof UpstreamError && ['invalid_input', 'upstream_failure'].includes(error.errorClass);
      // The fresh walk obeys the same bound as any other.
      if (!refusedRememberedCursor || restarted || !isWalkable(page, 1, MAX_PAGES_WALKED)) throw error;
      await cursors.forget(key);
      // Nothing is known any more: the fresh walk records what it learns again.
      known = await cursors.pages(key);
      restarted = true;
      start = at = { page: 1, cursor: null };
    }
  }
}
