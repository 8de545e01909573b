import { conditionDeleteMapping } from './condition-delete.ts';

/** DELETE /v2/alerts_location_failure_conditions/{condition_id}.{json,xml}: alertsConditionDelete; the answer holds the id only. */
export default conditionDeleteMapping({
  namespace: 'alerts_location_failure_conditions',
  singular: 'location_failure_condition',
  keys: ['name', 'enabled', 'entities', 'terms', 'violation_time_limit_seconds', 'runbook_url'],
  what: 'synthetics multi-location failure alert condition',
  sampleId: 'location_failure_condition_id',
});
