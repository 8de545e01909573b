import { LRUCache } from 'lru-cache';

/**
 * Page-number paging emulated over NerdGraph cursors. For one search (caller, account,
 * query) it remembers the total count and the cursor that fetches each page seen so far,
 * so a client walking pages 1..N costs one upstream request per page, and a jump to page N
 * starts from the nearest known page. A search is forgotten CURSOR_CACHE_TTL_MS after it
 * was first seen, however often it is used, so no cursor outlives that.
 */
export interface SearchPages {
  /** Total matches as NerdGraph last reported them; null when it did not say. */
  count: number | null;
  /** cursors[p] fetches page p; page 1 needs none (null). */
  cursors: Map<number, string | null>;
}

export class CursorCache {
  private readonly searches: LRUCache<string, SearchPages>;

  constructor(options: { max: number; ttlMs: number }) {
    this.searches = new LRUCache<string, SearchPages>({ max: options.max, ttl: options.ttlMs, noUpdateTTL: true });
  }

  /** The highest page <= `page` whose cursor is known (page 1 when nothing is). */
  nearest(key: string, page: number): { page: number; cursor: string | null } {
    let best = { page: 1, cursor: null as string | null };
    for (const [p, cursor] of this.searches.get(key)?.cursors ?? []) {
      if (p <= page && p > best.page) best = { page: p, cursor };
    }
    return best;
  }

  count(key: string): number | null | undefined {
    return this.searches.get(key)?.count;
  }

  /** Records what a fetched page taught: the count, and the cursor of the page after it. */
  remember(key: string, count: number | null, next?: { page: number; cursor: string }): void {
    const known = this.searches.get(key) ?? { count, cursors: new Map<number, string | null>([[1, null]]) };
    known.count = count;
    if (next) known.cursors.set(next.page, next.cursor);
    this.searches.set(key, known);
  }

  forget(key: string): void {
    this.searches.delete(key);
  }
}
