import { NO_PARAMS } from '../src/v2/param-schema.ts';
import { defineShowMapping } from '../src/routes/mapping.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { V2Titles } from '../src/v2/errors.ts';
import { EntityKinds } from '../src/routes/entity-ref.ts';
import { APPLICATION_ASSUMPTIONS, APPLICATION_TOP_LINKS, ApmEntity, applicationFields, applicationGaps, reshapeShownApplication } from './shared/application.ts';

/** GET /v2/applications/{id}.{json,xml}: one APM application with its id links. */
export default defineShowMapping({
  kind: 'entity-by-id',
  id: 'applications.show',
  method: 'GET',
  route: '/v2/applications/{id}.{format}',
  operation: 'ApplicationByGuid',
  summary: 'Show one APM application and its browser app (both GUIDs computed, one request)',
  fidelity: 'approximate',
  wrapperKey: 'application',
  entityKind: EntityKinds.apmApplication,
  // The browser app with the same id: its apdex target, in the same request.
  related: { browser: EntityKinds.browserApplication },
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
    'The show answer has the same fields as a list item (links included), from its own sources: links from applicationInstancesV2, the browser apdex from entity(guid) of the browser app.',
    "The browser app serving an APM app has the APM app's id (UNCONFIRMED), so its GUID is computed and read in the same request; without one, settings.end_user_apdex_threshold is 7, v2's documented default (rest-v2-shapes.md §1).",
  ],
  reshape(entity, ctx, related) {
    return reshapeShownApplication(ApmEntity.parse(entity), related.browser, ctx);
  },
});
