import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { SharedState, StateKeyer, StatusReporting } from '../state/shared-state.ts';
import { inRecordedRun } from '../upstream/recorded-run.ts';

/**
 * Page-number paging emulated over NerdGraph cursors. For one search (caller, account,
 * operation, query) it remembers the total count and the cursor that fetches each page seen so
 * far, so a client walking pages 1..N costs one upstream request per page, and a jump to page N
 * starts from the nearest known page. The memory is shared state (src/state/): with Redis,
 * page 2 served by another replica than page 1 continues the walk instead of restarting it.
 * A search is forgotten CURSOR_CACHE_TTL_MS after it was first seen, however often it is used
 * (hashSet's TTL starts at creation), so no cursor outlives that.
 *
 * Stored as one hash per search: `count` (a number, or 'null' when NerdGraph did not say) and
 * `p<N>` = the cursor of page N. Page 1 needs none.
 *
 * While the state is not shared (no Redis, or Redis degraded/connecting) searches are kept in
 * a bounded map of this process instead: at most MAX_SEARCHES searches of at most
 * MAX_PAGES_PER_SEARCH cursors each (the earliest learned go first: a walk needs its latest).
 *
 * A recorded run (src/upstream/recorded-run.ts) is cold: every search is unseen to it, and what
 * it fetches is not remembered, so an explained page N shows the whole walk a cold gateway makes.
 */
export interface SearchPages {
  /** Total matches as NerdGraph last reported them; null when it did not say; undefined: search not seen. */
  readonly count: number | null | undefined;
  /** The highest page <= `page` whose cursor is known (page 1 when nothing is). */
  nearest(page: number): { page: number; cursor: string | null };
}

const PAGE_FIELD = /^p([1-9][0-9]{0,8})$/;
const CountField = z.union([z.literal('null').transform(() => null), z.string().regex(/^[0-9]{1,15}$/).transform(Number)]);

function fieldsOf(count: number | null, next?: { page: number; cursor: string }): Record<string, string> {
  const fields: Record<string, string> = { count: count === null ? 'null' : String(count) };
  if (next) fields[`p${next.page}`] = next.cursor;
  return fields;
}

function pagesOf(fields: Record<string, string>): SearchPages {
  // Whatever another replica (or an older version) wrote: an unreadable count is an unseen search.
  const parsed = fields.count === undefined ? undefined : CountField.safeParse(fields.count);
  const count = parsed?.success ? parsed.data : undefined;
  const cursors = new Map<number, string>();
  if (count !== undefined) {
    for (const [field, cursor] of Object.entries(fields)) {
      const match = PAGE_FIELD.exec(field);
      if (match && cursor !== '') cursors.set(Number(match[1]), cursor);
    }
  }
  return {
    count,
    nearest(page) {
      let best = { page: 1, cursor: null as string | null };
      for (const [p, cursor] of cursors) {
        if (p <= page && p > best.page) best = { page: p, cursor };
      }
      return best;
    },
  };
}

/** As before shared state: searches this process keeps when it keeps them alone. */
const MAX_SEARCHES = 5_000;
const MAX_PAGES_PER_SEARCH = 1_000;

export class CursorCache {
  /** The searches of this process: `count` and `p<N>` fields, as in shared state. */
  private readonly local: LRUCache<string, Map<string, string>>;

  private readonly shared: { state: SharedState & Partial<StatusReporting>; keyOf: StateKeyer };
  private readonly options: { ttlMs: number };

  constructor(
    shared: { state: SharedState & Partial<StatusReporting>; keyOf: StateKeyer },
    options: { ttlMs: number },
  ) {
    this.shared = shared;
    this.options = options;
    this.local = new LRUCache({ max: MAX_SEARCHES, ttl: options.ttlMs, noUpdateTTL: true });
  }

  /** What the first page of a search taught, as pages() would answer after remember(). */
  static taught(count: number | null, next?: { page: number; cursor: string }): SearchPages {
    return pagesOf(fieldsOf(count, next));
  }

  /** Redis answers: the hash in Redis; otherwise this process's bounded map. */
  private isShared(): boolean {
    const { state } = this.shared;
    return state.backend === 'redis' && state.status?.().state === 'shared';
  }

  /** The shared-state name of one search: an HMAC, so neither the caller nor the query shows. */
  keyOf(identity: string, accountId: number, operation: string, query: string): string {
    return this.shared.keyOf('cursors', identity, accountId, operation, query);
  }

  /** What is known of a search (one shared-state read). */
  async pages(key: string): Promise<SearchPages> {
    if (inRecordedRun()) return pagesOf({});
    if (!this.isShared()) return pagesOf(Object.fromEntries(this.local.get(key) ?? []));
    return pagesOf(await this.shared.state.hashGetAll(key));
  }

  /** Records what a fetched page taught: the count, and the cursor of the page after it. */
  async remember(key: string, count: number | null, next?: { page: number; cursor: string }): Promise<void> {
    if (inRecordedRun()) return;
    const fields = fieldsOf(count, next);
    if (this.isShared()) {
      await this.shared.state.hashSet(key, fields, this.options.ttlMs);
      return;
    }
    const known = this.local.get(key);
    if (known === undefined) {
      this.local.set(key, new Map(Object.entries(fields)));
      return;
    }
    for (const [field, value] of Object.entries(fields)) known.set(field, value);
    // `count` plus the pages: the first learned (Map order) go, the walk's frontier stays.
    for (const field of known.keys()) {
      if (known.size <= MAX_PAGES_PER_SEARCH + 1) break;
      if (field !== 'count') known.delete(field);
    }
  }

  async forget(key: string): Promise<void> {
    if (inRecordedRun()) return;
    this.local.delete(key);
    if (this.isShared()) await this.shared.state.delete(key);
  }
}
