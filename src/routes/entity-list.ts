import { SharedOnce } from '../cache/single-flight.ts';
import { entityQuery } from '../upstream/entity-query.ts';
import type { EntityListMapping, ListParams, PageReadContext } from './mapping.ts';
import { respondText, serialise, type V2Body } from '../v2/format.ts';
import { wrap } from './entities.ts';
import { inAccount } from './entity-ref.ts';
import { linkHeaders, searchPageLink } from './paging.ts';
import { createSearchFetches, emptyPage, fetchSearchPage, type FetchedPage, type SearchFetches } from './search-pages.ts';
import { callerScope, noteDegraded, readsOf, type RouteDeps, type RouteRequest } from './types.ts';

/**
 * Serves a v2 list from entity search: the page's search (src/routes/search-pages.ts, page
 * numbers over cursors), its entities in the caller's account, the mapping's enrichment and
 * reshape, and the Link header (src/routes/paging.ts).
 */
interface ScopedPage {
  entities: unknown[];
  /** Shared by the requests rendering this page: it runs under its own signal (SingleFlight). */
  enrichment: SharedOnce<unknown>;
  /** What the enrichment did without (CallerScope.read's optional parts): such a page is neither kept nor its body cached. */
  degraded: string[];
}

/** What the list stage keeps between requests. */
export interface ListStage {
  deps: RouteDeps;
  fetches: SearchFetches;
  /**
   * Requests coalesced onto one upstream answer also share its rendering: reshaping and
   * serialising a 200-item page is most of a request's CPU. Keyed by the variant, the format
   * and the minute, the only request inputs the body depends on besides the answer (whose
   * search already fixes the parameters).
   */
  renderings: WeakMap<FetchedPage, Map<string, Uint8Array>>;
  scopedPages: WeakMap<FetchedPage, Map<string, ScopedPage>>;
}

export function createListStage(deps: RouteDeps): ListStage {
  return {
    deps,
    fetches: createSearchFetches(deps),
    renderings: new WeakMap(),
    scopedPages: new WeakMap(),
  };
}

/** Serves one page of an entity search list. */
export async function serveList(stage: ListStage, mapping: EntityListMapping, req: RouteRequest): Promise<Response> {
  const params = mapping.parameters.parse(req.params);
  const page = params.page;
  const ctx = callerScope(stage.deps, req, mapping.operation);
  const conditions = await mapping.searchConditions(params, req.accountId, ctx);
  const fetched = conditions === null ? emptyPage(0) : await fetchSearchPage(stage.fetches, mapping, req, entityQuery(conditions), page);
  const text = await renderPage(stage, mapping, params, fetched, ctx, req);
  const link = searchPageLink(req.publicUrl, page, mapping.pageSize, fetched);
  return respondText(req.c, req.format, 200, text, linkHeaders(link));
}

/** The page's entities in the caller's account, and the mapping's enrichment of them: once per fetched page. */
function scopedPage(stage: ListStage, mapping: EntityListMapping, params: ListParams, variant: string, fetched: FetchedPage, ctx: PageReadContext, req: RouteRequest): ScopedPage {
  const { deps } = stage;
  const byVariant = stage.scopedPages.get(fetched) ?? new Map<string, ScopedPage>();
  stage.scopedPages.set(fetched, byVariant);
  let scoped = byVariant.get(variant);
  if (scoped === undefined) {
    const entities = fetched.entities.filter((entity) => inAccount(entity, ctx.accountId, mapping.operation, deps.metrics));
    const enrich = mapping.enrichPage;
    const degraded: string[] = [];
    // Its reads go under the shared signal, not this request's: others may wait for it.
    const enrichment = new SharedOnce<unknown>((signal) =>
      enrich && entities.length > 0 ? enrich(entities, { ...ctx, read: readsOf(deps, req.caller, signal, (note) => degraded.push(note)) }, params) : Promise.resolve(undefined),
    );
    scoped = { entities, enrichment, degraded };
    byVariant.set(variant, scoped);
  }
  return scoped;
}

/** The page's body, encoded once: every request sharing the page sends these bytes as they are. */
async function renderPage(stage: ListStage, mapping: EntityListMapping, params: ListParams, fetched: FetchedPage, ctx: PageReadContext, req: RouteRequest): Promise<Uint8Array> {
  const { deps } = stage;
  const format = req.format;
  const variant = mapping.renderVariant?.(params) ?? '';
  const scoped = scopedPage(stage, mapping, params, variant, fetched, ctx, req);
  const { entities, enrichment } = scoped;
  const extra = await enrichment.get(req.signal);
  // Every request that shares a degraded enrichment says so; the next one reads it again.
  const whole = scoped.degraded.length === 0;
  if (!whole) {
    for (const note of scoped.degraded) noteDegraded(req.c, note);
    const byVariant = stage.scopedPages.get(fetched);
    if (byVariant?.get(variant) === scoped) byVariant.delete(variant);
  }
  const now = deps.now();
  const key = `${variant}|${format}|${Math.floor(now / 60_000)}`;
  const byKey = stage.renderings.get(fetched) ?? new Map<string, Uint8Array>();
  stage.renderings.set(fetched, byKey);
  const cached = whole ? byKey.get(key) : undefined;
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
  const bytes = Buffer.from(serialise(wrap(mapping.wrapperKey, items, mapping.topLinks), format), 'utf8');
  if (whole) byKey.set(key, bytes);
  return bytes;
}

/** The router's list runner: one stage per gateway. */
export function createListRunner(deps: RouteDeps) {
  const stage = createListStage(deps);
  return (mapping: EntityListMapping, req: RouteRequest): Promise<Response> => serveList(stage, mapping, req);
}
