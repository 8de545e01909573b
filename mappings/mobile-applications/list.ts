import { checkedParseOrThrow, defineListMapping, XML_ASSUMPTION, EntityKinds } from '../../src/mapping-api.ts';
import { MOBILE_ASSUMPTIONS, MOBILE_LIST_KEY, MobileEntity, mobileFields, mobileGaps, reshapeMobileApplication } from './mobile-application.ts';
import { NAME_IDS_LIST_ASSUMPTIONS, NAME_IDS_LIST_GAPS, nameIdsConditions, nameIdsListParams, nameMatches } from '../common/name-ids-list.ts';
import { mobileApplicationKeys } from './v2-keys.ts';

/** GET /v2/mobile_applications.{json,xml}: the account's mobile applications, 200 per page. */
export default defineListMapping({
  kind: 'entity-search-list',
  id: 'mobile-applications.list',
  method: 'GET',
  route: '/v2/mobile_applications.{format}',
  v2Keys: mobileApplicationKeys('applications', true),
  operation: 'MobileApplicationsSearch',
  summary: 'List mobile applications (entity search with mobileSummary, page numbers emulated over cursors)',
  fidelity: 'approximate',
  wrapperKey: MOBILE_LIST_KEY,
  pageSize: 200,
  parameters: nameIdsListParams,
  fields: mobileFields(`${MOBILE_LIST_KEY}[]`),
  knownGaps: [...mobileGaps(`${MOBILE_LIST_KEY}[]`), ...NAME_IDS_LIST_GAPS],
  assumptions: [
    XML_ASSUMPTION,
    ...MOBILE_ASSUMPTIONS,
    'The swagger lists no parameters; filter[name], filter[ids] and page are read as opsmatters sends them, with the rules of GET /v2/applications (filter[id] is not an alias here).',
    ...NAME_IDS_LIST_ASSUMPTIONS,
  ],
  searchConditions: (params, accountId) => nameIdsConditions(EntityKinds.mobileApplication, params, accountId),
  reshapeItem(entity, ctx) {
    return reshapeMobileApplication(checkedParseOrThrow(MobileEntity, entity), ctx);
  },
  keepItem: nameMatches,
});
