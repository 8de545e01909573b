import { z } from 'zod';
import { CoalescingCache } from '../cache/coalescing-cache.ts';
import { CursorCache } from '../cache/cursor-cache.ts';
import { SharedOnce, SingleFlight } from '../cache/single-flight.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';
import { entityQuery } from '../upstream/entity-query.ts';
import { invalidParameter } from '../v2/errors.ts';
import type { EntityListMapping, ListParams, PageReadContext } from './mapping.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { respondText, serialise, type V2Body } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { wrap } from './entities.ts';
import { inAccount } from './entity-ref.ts';
import { callUpstream } from './request-signal.ts';
import { loadingScope, readsOf, type RouteDeps, type RouteRequest } from './types.ts';

/**
 * Serves a v2 list from entity search: v2 `page=N` over NerdGraph cursors, one upstream
 * request per page walked in order, concurrent fetches of the same page coalesced (so
 * clients fetching pages 2..N in parallel also cost one request per page in all).
 */
const SearchPage = z.object({
  actor: z.object({
    entitySearch: z.object({
      count: z.number().int().nonnegative().nullable().optional(),
      results: z.object({ nextCursor: z.string().nullable().optional(), entities: z.array(z.unknown()).nullable() }).nullable(),
    }),
  }),
});

interface FetchedPage {
  /** null when NerdGraph gave no count: paging then follows cursors alone. */
  count: number | null;
  entities: unknown[];
  nextCursor: string | null;
}

interface ScopedPage {
  entities: unknown[];
  /** Shared by the requests rendering this page: it runs under its own signal (SingleFlight). */
  enrichment: SharedOnce<unknown>;
}

/** Upper bound of upstream pages one request may walk (a jump to page 250 of a cold search). */
export const MAX_PAGES_WALKED = 250;

/** Bound of PageReadContext.memo entries per gateway (each a small answer, e.g. a host index). */
const MAX_MEMOS = 1000;

const emptyPage = (count: number | null): FetchedPage => ({ count, entities: [], nextCursor: null });

/** The last page number the Link header announces, from the count and the cursor. */
function lastPageOf(fetched: FetchedPage, page: number, pageSize: number): number {
  const fromCursor = fetched.nextCursor !== null ? page + 1 : page;
  return fetched.count === null ? fromCursor : Math.max(Math.ceil(fetched.count / pageSize), fetched.nextCursor !== null ? page + 1 : 0);
}

export function createListRunner(deps: RouteDeps) {
  const flights = new SingleFlight<FetchedPage>();
  // Requests coalesced onto one upstream answer also share its rendering: reshaping and
  // serialising a 200-item page is most of a request's CPU. The key carries the format and
  // the minute, the only request inputs the body depends on besides the answer (whose
  // search already fixes the parameters).
  const renderings = new WeakMap<FetchedPage, Map<string, Uint8Array>>();
  const scopedPages = new WeakMap<FetchedPage, Map<string, ScopedPage>>();
  const pagesByAnswer = new WeakMap<object, FetchedPage>();
  // PageReadContext.memo: per caller and account, on the injected clock, bounded, failed loads not kept.
  const memos = new CoalescingCache<object>('list-memos', deps.metrics, { max: MAX_MEMOS, ttlMs: 60_000, now: deps.now });

  async function fetchOne(mapping: EntityListMapping, req: RouteRequest, query: string, cursor: string | null, key: string): Promise<FetchedPage> {
    // A recorded run (explain, a dry run) is cold: it neither joins nor starts a shared fetch, nor
    // reuses a page another read filed (it would skip the enrichment calls it explains).
    const recorded = inRecordedRun();
    const read = async (signal: AbortSignal): Promise<FetchedPage> => {
      const data = await callUpstream(deps.nerdgraph, { operation: mapping.operation, variables: { query, cursor }, apiKey: req.caller.apiKey, signal });
      // The micro-cache hands back the same (frozen) answer object to every read in its
      // window: the same page object then keys the same enrichment and rendering below.
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
  async function fetchPage(mapping: EntityListMapping, req: RouteRequest, query: string, page: number): Promise<FetchedPage> {
    // Shared state (src/state/): a walk begun on another replica goes on here.
    const key = deps.cursors.keyOf(req.caller.identity, req.accountId, mapping.operation, query);
    const fetchAndLearn = async (at: { page: number; cursor: string | null }): Promise<FetchedPage> => {
      const fetched = await fetchOne(mapping, req, query, at.cursor, key);
      const next = fetched.nextCursor === null ? undefined : { page: at.page + 1, cursor: fetched.nextCursor };
      // A warm page teaches nothing new (same count, next cursor known): no write to shared state.
      const nearestNext = next === undefined ? undefined : known.nearest(next.page);
      const taughtNothing = known.count === fetched.count && (next === undefined || (nearestNext?.page === next.page && nearestNext.cursor === next.cursor));
      if (!taughtNothing) await deps.cursors.remember(key, fetched.count, next);
      return fetched;
    };
    let known = await deps.cursors.pages(key);
    // A cold search starts with page 1: it tells whether the page asked for exists at all.
    if (page > 1 && known.count === undefined) {
      const first = await fetchAndLearn({ page: 1, cursor: null });
      if (first.nextCursor === null) return emptyPage(first.count);
      // What page 1 taught is all a cold search knows: no second read of shared state.
      known = CursorCache.taught(first.count, { page: 2, cursor: first.nextCursor });
    }

    let start = known.nearest(page);
    const count = known.count;
    // Past the end by the count, and no cursor says otherwise: nothing to fetch.
    if (start.page !== page && typeof count === 'number' && page > Math.ceil(count / mapping.pageSize)) return emptyPage(count);
    if (page - start.page >= MAX_PAGES_WALKED) {
      throw invalidParameter(`Invalid parameter page: at most ${MAX_PAGES_WALKED} pages past the last page read can be requested at once; read the pages in order`);
    }
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
        if (!refusedRememberedCursor || restarted || page - 1 >= MAX_PAGES_WALKED) throw error;
        await deps.cursors.forget(key);
        // Nothing is known any more: the fresh walk records what it learns again.
        known = await deps.cursors.pages(key);
        restarted = true;
        start = at = { page: 1, cursor: null };
      }
    }
  }

  /** The page's entities in the caller's account, and the mapping's enrichment of them: once per fetched page. */
  function scopedPage(mapping: EntityListMapping, params: ListParams, variant: string, fetched: FetchedPage, ctx: PageReadContext, req: RouteRequest): ScopedPage {
    const byVariant = scopedPages.get(fetched) ?? new Map<string, ScopedPage>();
    scopedPages.set(fetched, byVariant);
    let scoped = byVariant.get(variant);
    if (scoped === undefined) {
      const entities = fetched.entities.filter((entity) => inAccount(entity, ctx.accountId, mapping.operation, deps.metrics));
      const enrich = mapping.enrichPage;
      // Its reads go under the shared signal, not this request's: others may wait for it.
      const enrichment = new SharedOnce<unknown>((signal) =>
        enrich && entities.length > 0 ? enrich(entities, { ...ctx, read: readsOf(deps, req.caller, signal) }, params) : Promise.resolve(undefined),
      );
      scoped = { entities, enrichment };
      byVariant.set(variant, scoped);
    }
    return scoped;
  }

  async function render(mapping: EntityListMapping, params: ListParams, fetched: FetchedPage, ctx: PageReadContext, req: RouteRequest): Promise<Uint8Array> {
    const format = req.format;
    const variant = mapping.renderVariant?.(params) ?? '';
    const { entities, enrichment } = scopedPage(mapping, params, variant, fetched, ctx, req);
    const extra = await enrichment.get(req.signal);
    const now = deps.now();
    const key = `${variant}|${format}|${Math.floor(now / 60_000)}`;
    const byKey = renderings.get(fetched) ?? new Map<string, Uint8Array>();
    renderings.set(fetched, byKey);
    const cached = byKey.get(key);
    if (cached !== undefined) return cached;
    const reshapeCtx = { accountId: ctx.accountId, now };
    const items: V2Body[] = [];
    for (const entity of entities) {
      let item: V2Body;
      try {
        item = mapping.reshapeItem(entity, reshapeCtx, extra);
      } catch {
        // One entity v2 cannot show (say, without an id) should not cost the whole page.
        deps.metrics.droppedItems.inc({ operation: mapping.operation });
        continue;
      }
      if (mapping.keepItem === undefined || mapping.keepItem(params, item)) items.push(item);
    }
    // Encoded once: every request sharing the page sends these bytes as they are.
    const bytes = Buffer.from(serialise(wrap(mapping.wrapperKey, items, mapping.topLinks), format), 'utf8');
    byKey.set(key, bytes);
    return bytes;
  }

  return async function runList(mapping: EntityListMapping, req: RouteRequest): Promise<Response> {
    const params = mapping.parameters.parse(req.params);
    const page = params.page;
    const { scope, underLoad } = loadingScope(deps, req, mapping.operation);
    const ctx: PageReadContext = {
      ...scope,
      memo: <T extends object>(key: string, ttlMs: number, load: () => Promise<T>) =>
        // The cast is safe: a key is only ever loaded by the one memo() call site that names it.
        memos.get(`${req.caller.identity}|${req.accountId}|${key}`, async (shared) => ({ value: await underLoad(shared, load), ttlMs }), req.signal) as Promise<T>,
    };
    const conditions = await mapping.searchConditions(params, req.accountId, ctx);
    const fetched = conditions === null ? emptyPage(0) : await fetchPage(mapping, req, entityQuery(conditions), page);
    const text = await render(mapping, params, fetched, ctx, req);
    const link = linkHeader(req.publicUrl, page, lastPageOf(fetched, page, mapping.pageSize));
    return respondText(req.c, req.format, 200, text, link ? { link } : {});
  };
}
