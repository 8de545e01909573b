import type { PlannedAnswer } from './mapping.ts';
import { invalidParameter } from '../v2/errors.ts';
import type { V2Body } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';

/**
 * v2 page-number paging, for every list the gateway serves: which items page N holds, the last
 * page the `Link` header announces (src/v2/link.ts) and the pages that cannot be served. Two
 * kinds of list use it:
 * - lists held whole (hosts of an app, deployments, metric names, labels, channels): the page is
 *   a slice, the last page follows from the length;
 * - lists read over NerdGraph cursors, either walked page by page (entity search lists:
 *   src/routes/search-pages.ts) or walked from the start until the page is in hand (the alerts
 *   lists: list.ts of mappings/alerts-*, src/routes/cursor-walk.ts), where the last page is
 *   known only when the walk reached the end of the list, or from NerdGraph's count when the
 *   walk has one (the users list).
 */

/** Items `(page-1)*size .. page*size` of a list in hand. */
function pageItems<T>(list: readonly T[], page: number, pageSize: number): T[] {
  return list.slice((page - 1) * pageSize, page * pageSize);
}

/** How many pages `count` items fill (0 for none). */
export function pageCount(count: number, pageSize: number): number {
  return Math.ceil(count / pageSize);
}

/** `{ link }` when there is a Link header, else nothing: the headers a page answers with. */
export function linkHeaders(link: string | undefined): { link: string } | Record<string, never> {
  return link === undefined ? {} : { link };
}

/** A read plan's answer: the body, and the Link header when there is one. */
export function withLink(body: V2Body, link: string | undefined): PlannedAnswer {
  return { body, ...(link ? { headers: { link } } : {}) };
}

/** A page of a list: its items and its Link header (none on a single page). */
interface ListPage<T> {
  items: T[];
  link: string | undefined;
}

/** Page `page` of a list held whole; a page past the end is empty and points back at the last. */
export function pageOfHeld<T>(list: readonly T[], page: number, pageSize: number, publicUrl: string): ListPage<T> {
  return { items: pageItems(list, page, pageSize), link: linkHeader(publicUrl, page, pageCount(list.length, pageSize)) };
}

/**
 * A v2 page of a list the gateway holds whole, as a read plan answers it: the wrapper key, v2's
 * top-level link templates, and the `Link` header.
 */
export function pageOfList(
  list: readonly V2Body[],
  options: { page: number; pageSize: number; wrapperKey: string; publicUrl: string; topLinks?: V2Body },
): PlannedAnswer {
  const { items, link } = pageOfHeld(list, options.page, options.pageSize, options.publicUrl);
  return withLink({ [options.wrapperKey]: items, ...(options.topLinks ? { links: options.topLinks } : {}) }, link);
}

/**
 * Page `page` of a list read from its start only as far as the page needs, `read.count` the
 * whole list's length as NerdGraph counts it: read to its end, the last page follows from its
 * length; otherwise from the count, and at least the page after the pages read full.
 */
export function pageOfPrefix<T>(list: readonly T[], page: number, pageSize: number, publicUrl: string, read: { complete: boolean; count: number | null }): ListPage<T> {
  const lastPage = read.complete ? pageCount(list.length, pageSize) : Math.max(pageCount(read.count ?? 0, pageSize), Math.floor(list.length / pageSize) + 1);
  return { items: pageItems(list, page, pageSize), link: linkHeader(publicUrl, page, lastPage) };
}

/**
 * The last page an entity search page announces: from NerdGraph's count, and at least the next
 * page while its cursor says there is one; from the cursor alone when NerdGraph gave no count.
 */
function searchLastPage(fetched: { count: number | null; nextCursor: string | null }, page: number, pageSize: number): number {
  const fromCursor = fetched.nextCursor !== null ? page + 1 : page;
  return fetched.count === null ? fromCursor : Math.max(pageCount(fetched.count, pageSize), fetched.nextCursor !== null ? page + 1 : 0);
}

/** The Link header of page `page` of an entity search, by what its fetch said about the rest. */
export function searchPageLink(publicUrl: string, page: number, pageSize: number, fetched: { count: number | null; nextCursor: string | null }): string | undefined {
  return linkHeader(publicUrl, page, searchLastPage(fetched, page, pageSize));
}

/** Whether page `page` lies past the end by the count (nothing to fetch). */
export function pastTheCount(page: number, count: number | null | undefined, pageSize: number): boolean {
  return typeof count === 'number' && page > pageCount(count, pageSize);
}

/** Whether page `page` is fewer than `maxPages` pages past page `from` (the nearest whose cursor is known). */
export function isWalkable(page: number, from: number, maxPages: number): boolean {
  return page - from < maxPages;
}

/** Refuses a page `maxPages` or more pages past the nearest page whose cursor is known (422). */
export function requireWalkable(page: number, from: number, maxPages: number): void {
  if (!isWalkable(page, from, maxPages)) {
    throw invalidParameter(`Invalid parameter page: at most ${maxPages} pages past the last page read can be requested at once; read the pages in order`);
  }
}

/** v2's Link without rel="last" (alerts_violations never sent it, rest-v2.md §3.9). */
function linkWithoutLast(publicUrl: string, page: number, lastPage: number): string | undefined {
  const link = linkHeader(publicUrl, page, lastPage);
  if (link === undefined) return undefined;
  const kept = link.split(', ').filter((entry) => !entry.endsWith('rel="last"'));
  return kept.length > 0 ? kept.join(', ') : undefined;
}

/** How a cursor walk from the start of a list ended. */
interface WalkEnd {
  /** It reached the last NerdGraph page: the list is whole. */
  complete: boolean;
  /** It stopped at its page bound with more left: the list ends at what it read. */
  truncated: boolean;
}

/**
 * Page `page` of a list read by a cursor walk from its start, announcing only pages that can be
 * served. A walk that reached the end knows the last page (sent when `withLast`); a walk that
 * stopped once it had enough knows a next page exists but not the last (next only); a walk cut
 * at its page bound ends the list at the last reachable page (no next), and a page past it is a
 * 422 with `beyondTitle`, never an empty page or a rel that leads nowhere.
 */
export function pageOfWalk<T>(
  list: readonly T[],
  page: number,
  pageSize: number,
  publicUrl: string,
  walked: WalkEnd,
  options: { withLast: boolean; beyondTitle: string },
): ListPage<T> {
  const reachable = pageCount(list.length, pageSize);
  if (walked.truncated && page > Math.max(reachable, 1)) throw invalidParameter(options.beyondTitle);
  const link = walked.complete && options.withLast ? linkHeader(publicUrl, page, reachable) : linkWithoutLast(publicUrl, page, reachable);
  return { items: pageItems(list, page, pageSize), link };
}
