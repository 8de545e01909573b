import { NO_PARAMS } from '../src/v2/param-schema.ts';
import { defineShowMapping } from '../src/routes/mapping.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { V2Titles } from '../src/v2/errors.ts';
import { APPLICATION_ASSUMPTIONS, APPLICATION_TOP_LINKS, ApmEntity, applicationFields, applicationGaps, reshapeApplication } from './shared/application.ts';

/** GET /v2/applications/{id}.{json,xml}: one APM application with its id links. */
export default defineShowMapping({
  kind: 'entity-by-id',
  id: 'applications.show',
  method: 'GET',
  route: '/v2/applications/{id}.{format}',
  operation: 'ApplicationByGuid',
  summary: 'Show one APM application (app id -> GUID through the cache, then entity(guid))',
  fidelity: 'approximate',
  wrapperKey: 'application',
  entityKind: { domain: 'APM', type: 'APPLICATION' },
  notFoundTitle: V2Titles.applicationNotFound,
  topLinks: APPLICATION_TOP_LINKS,
  parameters: NO_PARAMS,
  fields: [
    ...applicationFields('application'),
    { field: 'application.links.application_instances', fidelity: 'approximate', source: 'applicationInstancesV2 details.id (first page of instances)' },
    { field: 'application.links.application_hosts', fidelity: 'approximate', source: 'synthetic id per (application, host name): v2 host ids do not exist in NerdGraph' },
    { field: 'application.links.servers', fidelity: 'exact', source: 'always [] (legacy Servers API)' },
  ],
  knownGaps: [
    ...applicationGaps('application'),
    { description: 'Host ids are synthetic (stable per application and host name); ids stored from the real v2 API will not match.' },
    { description: 'Only the first page of applicationInstancesV2 is read for the instance id list.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...APPLICATION_ASSUMPTIONS,
    'A non-numeric, zero or over-long id answers 404 "No Application found with the given ID" without calling NerdGraph.',
    'The show answer has the same fields as a list item, plus the links id lists.',
  ],
  reshape(entity, ctx) {
    return reshapeApplication(ApmEntity.parse(entity), ctx, { withLinks: true });
  },
});
