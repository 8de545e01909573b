import { defineListMapping } from '../src/routes/mapping.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { MAX_PAGES_WALKED } from '../src/routes/entity-list.ts';
import type { Condition } from '../src/upstream/entity-query.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { MOBILE_ASSUMPTIONS, MOBILE_LIST_KEY, MobileEntity, mobileFields, mobileGaps, reshapeMobileApplication } from './shared/mobile-application.ts';

/** GET /v2/mobile_applications.{json,xml}: the account's mobile applications, 200 per page. */
export const mobileApplicationListParams = defineParams({
  name: param.text('filter[name]', {
    fidelity: 'approximate',
    note: "entity search `name LIKE '<text>'`, then v2's case-insensitive substring test on each item",
  }),
  ids: param.idList('filter[ids]', { fidelity: 'exact', note: '`domainId IN (...)`; raw or encoded commas, repeated, or filter[ids][]' }),
  page: param.page({ fidelity: 'exact', note: '200 per page (UNCONFIRMED); emulated over entity-search cursors with a page-cursor cache' }),
});

export default defineListMapping({
  kind: 'entity-search-list',
  id: 'mobile-applications.list',
  method: 'GET',
  route: '/v2/mobile_applications.{format}',
  operation: 'MobileApplicationsSearch',
  summary: 'List mobile applications (entity search with mobileSummary, page numbers emulated over cursors)',
  fidelity: 'approximate',
  wrapperKey: MOBILE_LIST_KEY,
  pageSize: 200,
  parameters: mobileApplicationListParams,
  fields: mobileFields(`${MOBILE_LIST_KEY}[]`),
  knownGaps: [
    ...mobileGaps(`${MOBILE_LIST_KEY}[]`),
    { description: 'Pages are sorted by name; v2 documented no order.' },
    {
      description:
        "filter[name]: NerdGraph's LIKE treats `.,;:*-_` as word separators, so it can miss names v2 matched by substring; items it matches too loosely are dropped, so such pages can hold fewer than 200 items.",
    },
    { description: `A page more than ${MAX_PAGES_WALKED} pages past the last page read is refused (422): reaching it would cost one NerdGraph request per page.` },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...MOBILE_ASSUMPTIONS,
    'The swagger lists no parameters; filter[name], filter[ids] and page are read as opsmatters sends them, with the rules of GET /v2/applications (filter[id] is not an alias here).',
    'Page size 200 (UNCONFIRMED, as for every v2 list); a `page` past the last page answers an empty list with `first`/`prev` links.',
    'An empty filter[ids] (`filter[ids]=` or only commas) matches no application.',
  ],
  searchConditions(params, accountId) {
    const conditions: Condition[] = [
      { field: 'domain', op: '=', value: 'MOBILE' },
      { field: 'type', op: '=', value: 'APPLICATION' },
      { field: 'accountId', op: '=', value: accountId },
    ];
    if (params.name !== undefined) conditions.push({ field: 'name', op: 'LIKE', value: params.name });
    if (params.ids !== undefined) {
      // An empty IN is not valid search syntax, and names nothing anyway.
      if (params.ids.length === 0) return null;
      conditions.push({ field: 'domainId', op: 'IN', values: params.ids.map(String) });
    }
    return conditions;
  },
  reshapeItem(entity, ctx) {
    return reshapeMobileApplication(MobileEntity.parse(entity), ctx);
  },
  keepItem(params, item) {
    return params.name === undefined || String(item.name).toLowerCase().includes(params.name.toLowerCase());
  },
});
