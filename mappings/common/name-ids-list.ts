import { type Condition, type KnownGap, type V2Body, MAX_PAGES_WALKED, defineParams, param } from '../../src/mapping-api.ts';

/**
 * The `filter[name]`, `filter[ids]`, `page` lists (key transactions, mobile and browser applications):
 * their parameters, search conditions and the substring re-check, shared so the routes
 * cannot drift. User text reaches the search only through entity-query.ts (quoteLiteral).
 */
export const nameIdsListParams = defineParams({
  name: param.text('filter[name]', {
    fidelity: 'approximate',
    note: "entity search `name LIKE '<text>'`, then v2's case-insensitive substring test on each item",
  }),
  ids: param.idList('filter[ids]', { fidelity: 'exact', note: '`domainId IN (...)`; raw or encoded commas, repeated, or filter[ids][]' }),
  page: param.page({ fidelity: 'exact', note: '200 per page (page size UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); emulated over entity-search cursors with a page-cursor cache' }),
});

export type NameIdsListParams = ReturnType<typeof nameIdsListParams.parse>;

/** domain/type/account plus the filters; null when `filter[ids]` is sent empty (nothing can match). */
export function nameIdsConditions(kind: { domain: string; type: string }, params: NameIdsListParams, accountId: number): Condition[] | null {
  const conditions: Condition[] = [
    { field: 'domain', op: '=', value: kind.domain },
    { field: 'type', op: '=', value: kind.type },
    { field: 'accountId', op: '=', value: accountId },
  ];
  if (params.name !== undefined) conditions.push({ field: 'name', op: 'LIKE', value: params.name });
  if (params.ids !== undefined) {
    if (params.ids.length === 0) return null;
    conditions.push({ field: 'domainId', op: 'IN', values: params.ids.map(String) });
  }
  return conditions;
}

/** v2's filter[name]: a case-insensitive substring of the name. */
export function nameMatches(params: NameIdsListParams, item: V2Body): boolean {
  return params.name === undefined || String(item.name).toLowerCase().includes(params.name.toLowerCase());
}

export const NAME_IDS_LIST_GAPS: readonly KnownGap[] = [
  { description: 'Entities the entity platform no longer indexes are not listed, while v2 listed them.' },
  { description: 'Pages are sorted by name; v2 documented no order.' },
  {
    description:
      "filter[name]: NerdGraph's LIKE treats `.,;:*-_` as word separators, so it can miss names v2 matched by substring; items it matches too loosely are dropped, so such pages can hold fewer than 200 items.",
  },
  { description: `A page more than ${MAX_PAGES_WALKED} pages past the last page read is refused (422): reaching it would cost one NerdGraph request per page.` },
];

export const NAME_IDS_LIST_ASSUMPTIONS: readonly string[] = [
  'Page size 200 (UNCONFIRMED for this route, as for other v2 lists; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); NerdGraph entity search returns 200 entities per page, so v2 page N is NerdGraph page N.',
  'An empty filter[ids] (`filter[ids]=` or only commas) matches nothing.',
  'A `page` past the last page answers an empty list with `first`/`prev` links; page must be a positive integer (422 otherwise).',
];
