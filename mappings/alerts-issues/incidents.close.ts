import { incidentActionMapping } from './ai-issues.ts';

/** PUT /v2/alerts_incidents/{id}/close.{json,xml}: aiIssuesResolveIssue on the issue the derived id names. */
export default incidentActionMapping({
  id: 'alerts-incidents.close',
  route: '/v2/alerts_incidents/{id}/close.{format}',
  sample: { path: { id: '{incident_to_close_id}' } },
  operation: 'AlertIncidentClose',
  field: 'aiIssuesResolveIssue',
  summary: 'Close an incident: find the issue by its derived id (scan of 90 days, stopping at the match), one aiIssuesResolveIssue, then read it back',
  unconfirmedTitle: 'The incident may have been closed, but New Relic did not confirm it: list the incidents before retrying',
});
