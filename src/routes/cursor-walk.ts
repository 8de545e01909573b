import type { CallerScope } from './mapping.ts';
import { V2Error } from '../v2/errors.ts';

/**
 * Following NerdGraph's cursors through one list, for mappings that read a whole list (or
 * enough of it) before answering: bounded in requests, and refusing a cursor NerdGraph already
 * gave (it would loop and repeat rows).
 */
export type CursorReader = Pick<CallerScope, 'read'>;

export interface Walked<T> {
  items: T[];
  /** Whether the walk reached the last NerdGraph page. */
  complete: boolean;
  /** Whether the walk stopped at its page bound with more pages left (the list is cut there). */
  truncated: boolean;
}

/** A repeated cursor: NerdGraph would loop, so the list cannot be read (502, nothing partial). */
export const repeatedCursor = (operation: string): V2Error =>
  new V2Error(502, `New Relic's NerdGraph answered a repeated cursor while listing (${operation}); the list cannot be read whole, nothing partial is shown`, {
    kind: 'upstream_failure',
  });

export interface WalkOptions<T> {
  /** Stop once this many (kept) items are in hand. */
  enough: number;
  /** At most this many requests. */
  maxPages: number;
  /** Items outside the list (kept out of the count). */
  keep?: (item: T) => boolean;
  /** Stop as soon as one item satisfies this (e.g. the id sought). */
  stopAt?: (item: T) => boolean;
}

/**
 * Follows NerdGraph's cursors until `enough` items are in hand, `stopAt` matches or the list
 * ends, at most `maxPages` requests. `pageOf` picks one answer's items and next cursor. A cursor
 * NerdGraph already gave is an upstream failure (it would loop and repeat rows).
 */
export async function walkCursors<T>(
  ctx: CursorReader,
  operation: string,
  variables: Record<string, unknown>,
  pageOf: (answer: unknown) => { items: T[]; nextCursor: string | null | undefined },
  options: WalkOptions<T>,
): Promise<Walked<T>> {
  const { enough, maxPages, keep, stopAt } = options;
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < maxPages; pages++) {
    const page = pageOf(await ctx.read(operation, { ...variables, cursor }));
    const kept = keep ? page.items.filter(keep) : page.items;
    items.push(...kept);
    if (stopAt && kept.some(stopAt)) return { items, complete: !page.nextCursor, truncated: false };
    if (!page.nextCursor) return { items, complete: true, truncated: false };
    if (seen.has(page.nextCursor)) throw repeatedCursor(operation);
    seen.add(page.nextCursor);
    if (items.length >= enough) return { items, complete: false, truncated: false };
    cursor = page.nextCursor;
  }
  return { items, complete: false, truncated: true };
}

