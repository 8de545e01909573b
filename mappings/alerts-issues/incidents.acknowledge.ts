import { incidentActionMapping } from './ai-issues.ts';

/** PUT /v2/alerts_incidents/{id}/acknowledge.{json,xml}: aiIssuesAckIssue on the issue the derived id names. */
export default incidentActionMapping({
  id: 'alerts-incidents.acknowledge',
  route: '/v2/alerts_incidents/{id}/acknowledge.{format}',
  sample: { path: { id: '{incident_to_acknowledge_id}' } },
  operation: 'AlertIncidentAcknowledge',
  field: 'aiIssuesAckIssue',
  summary: 'Acknowledge an incident: find the issue by its derived id (scan of 90 days, stopping at the match), one aiIssuesAckIssue, then read it back',
  unconfirmedTitle: 'The incident may have been acknowledged, but New Relic did not confirm it: list the incidents before retrying',
});
