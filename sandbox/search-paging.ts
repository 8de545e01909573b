/**
 * Ordering and cursor paging of entitySearch results.
 *
 * Cursors are opaque to clients: base64url JSON of the next offset plus a hash of
 * everything that decides the result list (query, sort, visible accounts, page size, tag
 * case-sensitivity). A cursor presented to a different search, or tampered with, fails the
 * hash check and is rejected as `Invalid cursor`, rather than silently paging a different list.
 */
import { GraphQLError } from 'graphql';
import type { EntitySearchFields } from './entities/kind.ts';
import { fnv1a32 } from './ids.ts';

export const MAX_PAGE_SIZE = 200;

export type SortAttribute = 'ALERT_SEVERITY' | 'DOMAIN' | 'MOST_RELEVANT' | 'NAME' | 'REPORTING' | 'TYPE';

export interface SortCriterion {
  attribute: SortAttribute | null;
  /** Sort by the first value of this tag (used when attribute is null). */
  tag: string | null;
  direction: 'ASC' | 'DESC';
}

/** GraphQL argument shapes (list items are nullable in the schema). */
export interface SortArguments {
  sortBy?: ReadonlyArray<SortAttribute | null> | null;
  sortByWithDirection?: ReadonlyArray<{
    attribute?: SortAttribute | null;
    direction?: 'ASC' | 'DESC' | null;
    tag?: string | null;
  } | null> | null;
}

/** sortByWithDirection overrides sortBy, as in NerdGraph; nothing given means NAME ascending. */
export function normaliseSort(args: SortArguments): SortCriterion[] {
  const withDirection = (args.sortByWithDirection ?? []).flatMap((item) =>
    item && (item.attribute || item.tag)
      ? [{ attribute: item.attribute ?? null, tag: item.attribute ? null : (item.tag ?? null), direction: item.direction ?? 'ASC' }]
      : [],
  );
  if (withDirection.length > 0) return withDirection;
  const plain = (args.sortBy ?? []).flatMap((attribute) => (attribute ? [{ attribute, tag: null, direction: 'ASC' as const }] : []));
  return plain.length > 0 ? plain : [{ attribute: 'NAME', tag: null, direction: 'ASC' }];
}

export function isDefaultNameOrder(criteria: SortCriterion[]): boolean {
  const first = criteria[0];
  return first?.attribute === 'NAME' && first.direction === 'ASC';
}

/**
 * Sorts entities that are already in the index's total name order. Array.prototype.sort is
 * stable, so ties on the criteria keep that order, which makes paging repeatable.
 */
export function sortEntities<T>(entitiesByName: T[], criteria: SortCriterion[], fieldsOf: (entity: T) => EntitySearchFields): T[] {
  if (isDefaultNameOrder(criteria)) return entitiesByName;
  return [...entitiesByName].sort((a, b) => {
    for (const criterion of criteria) {
      const left = sortKey(fieldsOf(a), criterion);
      const right = sortKey(fieldsOf(b), criterion);
      if (left !== right) {
        const ascending = left < right ? -1 : 1;
        return criterion.direction === 'DESC' ? -ascending : ascending;
      }
    }
    return 0;
  });
}

function sortKey(entity: EntitySearchFields, criterion: SortCriterion): string {
  switch (criterion.attribute) {
    case 'NAME':
      return entity.name;
    case 'ALERT_SEVERITY':
      return entity.alertSeverity;
    case 'REPORTING':
      return String(entity.reporting);
    case 'DOMAIN':
      return entity.domain;
    case 'TYPE':
      return entity.type;
    case 'MOST_RELEVANT': // the sandbox has no relevance score: name order stands
      return '';
    case null:
      return criterion.tag === null ? '' : (entity.tags[criterion.tag]?.[0] ?? '');
  }
}

/** FNV-1a, hex: stable across processes, so cursors survive a sandbox restart with the same seed. */
export function hashText(text: string): string {
  return fnv1a32(text).toString(16).padStart(8, '0');
}

export function encodeCursor(offset: number, searchHash: string): string {
  return Buffer.from(JSON.stringify({ offset, search: searchHash }), 'utf8').toString('base64url');
}

function invalidCursor(): GraphQLError {
  return new GraphQLError('Invalid cursor', { extensions: { errorClass: 'INVALID_INPUT' } });
}

/** Offset a cursor points at; null/empty means the first page. Throws `Invalid cursor` otherwise. */
export function decodeCursor(cursor: string | null | undefined, searchHash: string, total: number): number {
  if (cursor === null || cursor === undefined || cursor === '') return 0;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof decoded !== 'object' || decoded === null) throw invalidCursor();
  const { offset, search } = decoded as { offset?: unknown; search?: unknown };
  if (search !== searchHash || typeof offset !== 'number' || !Number.isInteger(offset) || offset <= 0 || offset >= total) {
    throw invalidCursor();
  }
  return offset;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function pageOf<T>(items: T[], offset: number, pageSize: number, searchHash: string): Page<T> {
  const end = offset + pageSize;
  return {
    items: items.slice(offset, end),
    nextCursor: end < items.length ? encodeCursor(end, searchHash) : null,
  };
}
