import { defineReadPlanMapping, pageOfList, defineParams, param, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { DEPLOYMENT_TOP_LINKS, readDeployments } from './deployment.ts';
import { applicationGuid } from '../common/application-ref.ts';

const PAGE_SIZE = 200;

const parameters = defineParams({ page: param.page({ fidelity: 'exact', note: '200 per page, newest first, v2 Link header.' }) });

/** GET /v2/applications/{id}/deployments.{json,xml}: legacy Deployment and change-tracking markers, newest first. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'applications.deployments.list',
  method: 'GET',
  route: '/v2/applications/{id}/deployments.{format}',
  v2Keys: {
    wrapper: 'deployments',
    list: true,
    source: 'SHAPES §5; SW DeploymentResponseType; CG pkg/apm/deployments_test.go',
    paths: { id: 'int', revision: 'string', changelog: 'string', description: 'string', user: 'string', timestamp: 'time', links: 'object', 'links.application': 'int' },
  },
  sample: { path: { id: '{application_id}' } },
  operation: 'ApplicationDeployments',
  summary: 'List deployments: NRQL over Deployment and ChangeTrackingEvent (category Deployment) for the app, 13 months back, paged locally',
  fidelity: 'approximate',
  parameters,
  fields: [
    { field: 'deployments[].id', fidelity: 'approximate', source: 'deploymentV2Id(changeTrackingId or deploymentId): a stable integer, not the id v2 had' },
    { field: 'deployments[].revision', fidelity: 'exact', source: 'version (null for the fixed version of a v0 deployment sent without a revision, mappings/deployments/v0.ts)' },
    { field: 'deployments[].changelog', fidelity: 'exact', source: 'changelog (null when not set)' },
    { field: 'deployments[].description', fidelity: 'exact', source: 'description (null when not set)' },
    { field: 'deployments[].user', fidelity: 'exact', source: 'user (null when not set)' },
    { field: 'deployments[].timestamp', fidelity: 'exact', source: 'timestamp (epoch ms) as ISO 8601 UTC' },
    { field: 'deployments[].links.application', fidelity: 'exact', source: 'the app id of the path' },
  ],
  knownGaps: [
    { path: 'deployments[].id', description: 'Deployment ids are derived from change-tracking ids; ids stored from the real v2 API will not match.' },
    { description: 'Only the last 13 months (change-tracking retention) and at most 5,000 deployments are listed.' },
    { description: 'v2 showed timestamps in the account\'s offset (e.g. -08:00); the gateway shows UTC.' },
    {
      description:
        'NRQL shows a deployment only once ingested. One recorded through the gateway (any replica) is listed from its answer on, until NRQL shows it, for at most 10 minutes (src/state/recent-writes.ts); one recorded elsewhere (NerdGraph, a CI integration) is listed only once ingested.',
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Legacy Deployment events carry the revision as `version` and their id as `deploymentId` (unconfirmed attribute names).',
    'Page size 200, as other v2 lists.',
  ],
  async load(ctx) {
    const { page } = parameters.parse(ctx.params);
    const { id, guid } = applicationGuid(ctx, ctx.pathParams.id);
    const { deployments } = await readDeployments(ctx, id, guid, 'MAX');
    return pageOfList(deployments, { page, pageSize: PAGE_SIZE, wrapperKey: 'deployments', publicUrl: ctx.publicUrl, topLinks: DEPLOYMENT_TOP_LINKS });
  },
});
