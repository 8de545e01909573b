import { NO_PARAMS, defineUnsupportedMapping } from '../../src/mapping-api.ts';

/** DELETE /v2/applications/{id}/deployments/{deployment_id}.{json,xml}: change-tracking events are immutable. */
export default defineUnsupportedMapping({
  kind: 'unsupported',
  id: 'applications.deployments.delete',
  method: 'DELETE',
  route: '/v2/applications/{id}/deployments/{deployment_id}.{format}',
  operation: '(none)',
  summary: 'Delete a deployment: no NerdGraph equivalent (change-tracking events are immutable); answered 422',
  fidelity: 'unsupported',
  status: 422,
  title: 'Deployments cannot be deleted: New Relic change tracking events are immutable',
  reason: 'NerdGraph records deployments as change-tracking events, which have no delete mutation.',
  replacement: 'None: record a corrective deployment instead (POST /v2/applications/{id}/deployments.json, NerdGraph changeTrackingCreateDeployment).',
  parameters: NO_PARAMS,
  fields: [],
  knownGaps: [{ description: 'v2 deleted the deployment and answered it; NerdGraph has no way to delete a change-tracking event, so the gateway refuses with 422 and changes nothing.' }],
  assumptions: ['422 rather than 404 or 405, so clients see the route exists and why it cannot work.'],
});
