import { NO_PARAMS, defineReadPlanMapping, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { APPLICATION_ASSUMPTIONS, APPLICATION_TOP_LINKS, applicationFields, applicationGaps, endUserApdexGap, readApplication } from './application.ts';
import { applicationGuid } from '../common/application-ref.ts';
import { applicationKeys } from './v2-keys.ts';

/**
 * GET /v2/applications/{id}.{json,xml}: one APM application with its id links. A read plan (not
 * a plain entity-by-id show) because the links need every page of applicationInstancesV2: the
 * first comes with the one request, later pages are read once per app and kept briefly
 * (mappings/common/app-instances.ts).
 */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.show',
  method: 'GET',
  route: '/v2/applications/{id}.{format}',
  v2Keys: applicationKeys('application', false),
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationByGuid',
  summary: 'Show one APM application and its browser app (both GUIDs computed) with its end-user apdex (NRQL), in one request; more only for the later pages of a large app\'s instances',
  fidelity: 'approximate',
  parameters: NO_PARAMS,
  topLinks: APPLICATION_TOP_LINKS,
  fields: [
    ...applicationFields('application'),
    { field: 'application.links.application_instances', fidelity: 'approximate', source: 'applicationInstancesV2 details.id, every page' },
    { field: 'application.links.application_hosts', fidelity: 'approximate', source: 'synthetic id per (application, host name): v2 host ids do not exist in NerdGraph' },
    { field: 'application.links.servers', fidelity: 'exact', source: 'always [] (legacy Servers API)' },
  ],
  knownGaps: [
    ...applicationGaps('application'),
    { path: 'application.links.application_hosts', description: 'Host ids are synthetic (stable per application and host name); ids stored from the real v2 API will not match.' },
    { description: "The end-user apdex score is an NRQL query inside the show's one request, sent with the first read of the app by a caller in a minute; the reads of that minute reuse the score (one more request: the same read without the NRQL). When the NRQL budgets (NRQL_PER_ACCOUNT_PER_MINUTE, the caller's fair share, IDENTICAL_QUERY_PER_MINUTE) would refuse it, the app is read without it and apdex_score is null, never a 429, the request's log line saying so (degraded; the same holds for the reads before an update or a delete)." },
    endUserApdexGap('application'),
    {
      description:
        'Every page of applicationInstancesV2 is read for the links: later pages once per app, kept 30 seconds (per caller and account). Past 20 pages or 10,000 instances the show answers 503 naming the bound, never short links. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.',
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...APPLICATION_ASSUMPTIONS,
    'A non-numeric, zero or over-long id answers 404 "No Application found with the given ID" without calling NerdGraph.',
    'The show answer has the same fields as a list item (links included), from its own sources: links from applicationInstancesV2, the browser apdex and loader from entity(guid) of the browser app.',
    "The browser app serving an APM app has the APM app's id (UNCONFIRMED, (probe: browser-app-carries-apm-app-id)), so its GUID is computed and read in the same request; without one, settings.end_user_apdex_threshold is 7, v2's documented default (rest-v2-shapes.md §1), and enable_real_user_monitoring false.",
    "settings.enable_real_user_monitoring is the configured loader (browserSettings.browserMonitoring.loader of the browser app) not being NONE, whether or not browser traffic arrived lately.",
  ],
  async load(ctx) {
    NO_PARAMS.parse(ctx.params);
    const { guid } = applicationGuid(ctx, ctx.pathParams.id);
    return { body: (await readApplication(ctx, guid, 'refuse')).body };
  },
});
