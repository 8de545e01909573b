import { checkedParseOrThrow, NO_PARAMS, defineShowMapping, EntityKinds, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { MOBILE_ASSUMPTIONS, MOBILE_ITEM_KEY, MOBILE_NOT_FOUND, MobileEntity, mobileFields, mobileGaps, reshapeMobileApplication } from './mobile-application.ts';
import { mobileApplicationKeys } from './v2-keys.ts';

/** GET /v2/mobile_applications/{id}.{json,xml}: one mobile application, entity(guid) with the GUID computed. */
export default defineShowMapping({
  kind: 'entity-by-id',
  id: 'mobile-applications.show',
  method: 'GET',
  route: '/v2/mobile_applications/{id}.{format}',
  v2Keys: mobileApplicationKeys('application', false),
  sample: { path: { id: '{mobile_application_id}' } },
  operation: 'MobileApplicationByGuid',
  summary: 'Show one mobile application (GUID computed from account and id, then entity(guid))',
  fidelity: 'approximate',
  wrapperKey: MOBILE_ITEM_KEY,
  entityKind: EntityKinds.mobileApplication,
  notFoundTitle: MOBILE_NOT_FOUND,
  parameters: NO_PARAMS,
  fields: mobileFields(MOBILE_ITEM_KEY),
  knownGaps: mobileGaps(MOBILE_ITEM_KEY),
  assumptions: [
    XML_ASSUMPTION,
    ...MOBILE_ASSUMPTIONS,
    `Unknown ids, ids of another account and malformed ids (non-numeric, zero, over-long) all answer 404 "${MOBILE_NOT_FOUND}"; malformed ones without calling NerdGraph.`,
    'The mobile app version ids the metric routes accept are not accepted here (404).',
  ],
  reshape(entity, ctx) {
    return reshapeMobileApplication(checkedParseOrThrow(MobileEntity, entity), ctx);
  },
});
