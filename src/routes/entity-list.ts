import { z } from 'zod';
import { SingleFlight } from '../cache/single-flight.ts';
import { entityQuery } from '../entity-query.ts';
import type { EntityListMapping } from '../mapping.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { respondText, serialise, type V2Body, type V2Format } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';
import { parsePage } from '../v2/params.ts';
import { inAccount } from './scope.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/**
 * Serves a v2 list from entity search: v2 `page=N` over NerdGraph cursors, one upstream
 * request per page walked in order, concurrent fetches of the same page coalesced.
 */
const SearchPage = z.object({
  actor: z.object({
    entitySearch: z.object({
      count: z.number().int().nonnegative().nullable(),
      results: z.object({ nextCursor: z.string().nullable().optional(), entities: z.array(z.unknown()).nullable() }).nullable(),
    }),
  }),
});

interface FetchedPage {
  count: number;
  entities: unknown[];
  nextCursor: string | null;
}

export function createListRunner(deps: RouteDeps) {
  const flights = new SingleFlight<FetchedPage>();
  // Requests coalesced onto one upstream answer also share its rendering: reshaping and
  // serialising a 200-item page is most of a request's CPU. The key carries the format and
  // the minute, the only request inputs the body depends on besides the answer itself.
  const renderings = new WeakMap<FetchedPage, Map<string, string>>();

  function render(mapping: EntityListMapping, fetched: FetchedPage, accountId: number, format: V2Format): string {
    const now = deps.now();
    const key = `${format}|${Math.floor(now / 60_000)}`;
    const byKey = renderings.get(fetched) ?? new Map<string, string>();
    renderings.set(fetched, byKey);
    const cached = byKey.get(key);
    if (cached !== undefined) return cached;
    const ctx = { accountId, now };
    const items: V2Body[] = [];
    for (const entity of fetched.entities) {
      if (!inAccount(entity, accountId, mapping.operation, deps.metrics)) continue;
      try {
        items.push(mapping.reshapeItem(entity, ctx));
      } catch {
        throw new UpstreamError('upstream_failure', `unexpected entity shape in ${mapping.operation}`);
      }
    }
    const body: V2Body = { [mapping.wrapperKey]: items, ...(mapping.topLinks ? { links: mapping.topLinks } : {}) };
    const text = serialise(body, format);
    byKey.set(key, text);
    return text;
  }

  async function fetchOne(mapping: EntityListMapping, req: RouteRequest, query: string, cursor: string | null, key: string): Promise<FetchedPage> {
    const { promise } = flights.run(`${key}|${cursor ?? ''}`, async () => {
      const data = await deps.nerdgraph.call({
        operation: mapping.operation,
        variables: { query, cursor },
        apiKey: req.caller.apiKey,
      });
      const parsed = SearchPage.safeParse(data);
      if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected ${mapping.operation} answer`);
      const search = parsed.data.actor.entitySearch;
      return {
        count: search.count ?? 0,
        entities: search.results?.entities ?? [],
        nextCursor: search.results?.nextCursor ?? null,
      };
    });
    return promise;
  }

  /** Page `page` of the search, walking from the nearest page whose cursor is known. */
  async function fetchPage(mapping: EntityListMapping, req: RouteRequest, query: string, page: number): Promise<FetchedPage> {
    const key = `${req.caller.identity}|${req.accountId}|${mapping.operation}|${query}`;
    let restarted = false;
    for (;;) {
      const count = deps.cursors.count(key);
      if (count !== undefined && page > 1 && page > Math.ceil(count / mapping.pageSize)) {
        return { count, entities: [], nextCursor: null };
      }
      const start = deps.cursors.nearest(key, page);
      let fetched: FetchedPage;
      try {
        fetched = await fetchOne(mapping, req, query, start.cursor, key);
      } catch (error) {
        // A remembered cursor may have expired upstream: forget the search and walk again once.
        if (error instanceof UpstreamError && error.errorClass === 'invalid_input' && start.cursor !== null && !restarted) {
          deps.cursors.forget(key);
          restarted = true;
          continue;
        }
        throw error;
      }
      deps.cursors.remember(key, fetched.count, start.page, start.cursor);
      if (fetched.nextCursor !== null) deps.cursors.remember(key, fetched.count, start.page + 1, fetched.nextCursor);
      if (start.page === page) return fetched;
      if (fetched.nextCursor === null) return { count: fetched.count, entities: [], nextCursor: null };
    }
  }

  return async function runList(mapping: EntityListMapping, req: RouteRequest): Promise<Response> {
    const params = mapping.parseParams(req.params);
    const page = parsePage(req.params);
    const query = entityQuery(mapping.searchConditions(params, req.accountId));
    const fetched = await fetchPage(mapping, req, query, page);
    const text = render(mapping, fetched, req.accountId, req.format);
    const link = linkHeader(req.publicUrl, page, Math.ceil(fetched.count / mapping.pageSize));
    return respondText(req.c, req.format, 200, text, link ? { link } : {});
  };
}
