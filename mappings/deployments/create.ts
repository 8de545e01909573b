import { defineParams, param, defineWriteMapping, objectAt, XML_ASSUMPTION, V2Error } from '../../src/mapping-api.ts';
import { DeploymentTitles, planDeploymentCreate } from './deployment.ts';
import { applicationGuid } from '../common/application-ref.ts';

/** POST /v2/applications/{id}/deployments.{json,xml}: record a deployment as a change-tracking event. */
export default defineWriteMapping({
  kind: 'write',
  id: 'applications.deployments.create',
  method: 'POST',
  route: '/v2/applications/{id}/deployments.{format}',
  sample: { path: { id: '{reporting_app_id}' }, body: { json: { deployment: { revision: 'costs-{call}' } } } },
  operation: 'DeploymentCreate',
  summary: 'Record a deployment: v2 validation, one read of the latest marker, then one changeTrackingCreateEvent (Deployment/Basic)',
  fidelity: 'approximate',
  successStatus: 201,
  unconfirmedTitle: DeploymentTitles.unconfirmed,
  parameters: defineParams({
    revision: param.bodyField('deployment.revision', { fidelity: 'exact', note: 'Required, at most 127 characters; sent as categoryFields.deployment.version.' }),
    changelog: param.bodyField('deployment.changelog', { fidelity: 'exact', note: 'At most 65,535 characters; categoryFields.deployment.changelog.' }),
    description: param.bodyField('deployment.description', { fidelity: 'exact', note: 'At most 65,535 characters.' }),
    user: param.bodyField('deployment.user', { fidelity: 'exact', note: 'At most 31 characters.' }),
    timestamp: param.bodyField('deployment.timestamp', {
      fidelity: 'approximate',
      note: 'ISO 8601, not in the future, later than the latest deployment; New Relic also refuses more than 24 hours back.',
    }),
  }),
  fields: [
    { field: 'deployment.id', fidelity: 'approximate', source: 'deploymentV2Id(changeTrackingId), the same integer later listings show' },
    { field: 'deployment.timestamp', fidelity: 'exact', source: 'changeTrackingEvent.timestamp' },
    { field: 'deployment.revision / changelog / description / user', fidelity: 'exact', source: 'as validated and sent' },
  ],
  knownGaps: [
    { description: 'A timestamp more than 24 hours old is refused (422): New Relic change tracking allows no more; v2 accepted any time after the latest deployment.' },
    { description: 'When NerdGraph may have received the event but did not confirm it, the answer is a 502/504 saying so; the gateway never resends, so the client must list before retrying.' },
    { description: 'Deployment ids are derived from change-tracking ids, not v2 ids.' },
    { description: 'Text change tracking would cut is refused (422, FAIL_ON_FIELD_LENGTH); v2 stored changelog and description up to 65,535 characters.' },
    {
      description:
        '"Later than the latest deployment" compares with what NRQL shows plus the deployments recorded through the gateway (any replica) in the last 10 minutes that NRQL does not show yet (its ingest lag, src/state/recent-writes.ts); a deployment recorded elsewhere seconds before is not seen until ingested.',
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Success is 201 (v2\'s status is unconfirmed; clients accept any 2xx).',
    'Category and type are written Deployment/Basic (casing unconfirmed).',
    'The body may be JSON, XML or a form (deployment[revision]=...).',
  ],
  async plan(ctx) {
    const app = applicationGuid(ctx, ctx.pathParams.id);
    const wrapper = objectAt(ctx.body, 'deployment');
    if (!wrapper) throw new V2Error(400, DeploymentTitles.missingWrapper, { kind: 'invalid_deployment' });
    return planDeploymentCreate(ctx, app, wrapper, (deployment) => ({ deployment }));
  },
});
