import { defineListMapping } from '../src/routes/mapping.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { MAX_PAGES_WALKED } from '../src/routes/entity-list.ts';
import type { Condition } from '../src/upstream/entity-query.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { APPLICATION_ASSUMPTIONS, APPLICATION_TOP_LINKS, ApmEntity, applicationFields, applicationGaps, reshapeApplication } from './shared/application.ts';

/** GET /v2/applications.{json,xml}: the account's APM applications, 200 per page. */
// Declaration order is parse order: filter[host] is refused before anything else is read.
export const applicationListParams = defineParams({
  host: param.unsupported(
    'filter[host]',
    'filter[host] is not supported by v2-bridge: NerdGraph entity search cannot filter applications by host',
    'answered 422: entity search has no host filter',
  ),
  name: param.text('filter[name]', {
    fidelity: 'approximate',
    note: "entity search `name LIKE '<text>'`, then v2's case-insensitive substring test on each item; `%` and `_` are literal",
  }),
  // filter[id] appears in New Relic's docs as a single-id alias of filter[ids].
  ids: param.idList('filter[ids]', {
    aliases: ['filter[id]'],
    fidelity: 'exact',
    note: '`domainId IN (...)`; raw or encoded commas, repeated, or filter[ids][]; filter[id] is an alias',
  }),
  language: param.token('filter[language]', {
    pattern: /^[a-z0-9_.-]{1,32}$/,
    title: 'Invalid parameter filter[language]: expected an agent language such as java or python',
    fidelity: 'exact',
    note: "`language = '<lang>'` (the language tag), lower-cased",
  }),
  excludeLinks: param.flag('exclude_links', { fidelity: 'approximate', note: 'accepted and validated; list items never carry id links here' }),
  page: param.page({ fidelity: 'exact', note: '200 per page; emulated over entity-search cursors with a page-cursor cache' }),
});

export type ApplicationListParams = ReturnType<typeof applicationListParams.parse>;

export default defineListMapping({
  kind: 'entity-search-list',
  id: 'applications.list',
  method: 'GET',
  route: '/v2/applications.{format}',
  operation: 'ApplicationsSearch',
  summary: 'List APM applications (entity search, page numbers emulated over cursors)',
  fidelity: 'approximate',
  wrapperKey: 'applications',
  pageSize: 200,
  topLinks: APPLICATION_TOP_LINKS,
  parameters: applicationListParams,
  fields: applicationFields('applications[]'),
  knownGaps: [
    ...applicationGaps('applications[]'),
    {
      path: 'applications[].links',
      description: 'Instance and host id lists would cost one NerdGraph call per application; list items omit `links` (GET /v2/applications/{id} has them).',
    },
    { description: 'Applications the entity platform no longer indexes (deleted, or long without data) are not listed, while v2 listed them.' },
    { description: 'Pages are sorted by name; v2 documented its order as indeterminate.' },
    { description: 'filter[host] is refused with 422 instead of being answered without the filter.' },
    {
      description:
        "filter[name]: NerdGraph's LIKE treats `.,;:*-_` as word separators, so it can miss names v2 matched by substring (e.g. `tf_`); items it matches too loosely are dropped, so such pages can hold fewer than 200 items.",
    },
    { description: `A page more than ${MAX_PAGES_WALKED} pages past the last page read is refused (422): reaching it would cost one NerdGraph request per page.` },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...APPLICATION_ASSUMPTIONS,
    'filter[name] narrows the search with NerdGraph `LIKE`, then each item is re-checked with v2 substring matching (case-insensitive).',
    'NerdGraph entity search returns 200 entities per page (community-reported), so v2 page N is NerdGraph page N.',
    "filter[language] is searched as `language = '<lang>'`, the language tag (exact tag syntax UNCONFIRMED).",
    'An empty filter[ids] (`filter[ids]=` or only commas) matches no application.',
    'A `page` past the last page answers an empty list with `first`/`prev` links; page must be a positive integer (422 otherwise).',
  ],
  searchConditions(params, accountId) {
    const conditions: Condition[] = [
      { field: 'domain', op: '=', value: 'APM' },
      { field: 'type', op: '=', value: 'APPLICATION' },
      { field: 'accountId', op: '=', value: accountId },
    ];
    if (params.name !== undefined) conditions.push({ field: 'name', op: 'LIKE', value: params.name });
    if (params.ids !== undefined) {
      // `filter[ids]=` names no application: nothing matches (an empty IN is not valid search syntax).
      if (params.ids.length === 0) return null;
      conditions.push({ field: 'domainId', op: 'IN', values: params.ids.map(String) });
    }
    if (params.language !== undefined) conditions.push({ field: 'language', op: '=', value: params.language });
    return conditions;
  },
  reshapeItem(entity, ctx) {
    return reshapeApplication(ApmEntity.parse(entity), ctx, { withLinks: false });
  },
  keepItem(params, item) {
    return params.name === undefined || String(item.name).toLowerCase().includes(params.name.toLowerCase());
  },
});
