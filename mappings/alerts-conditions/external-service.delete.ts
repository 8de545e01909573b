import { conditionDeleteMapping } from './condition-delete.ts';

/** DELETE /v2/alerts_external_service_conditions/{condition_id}.{json,xml}: alertsConditionDelete; the answer holds the id only. */
export default conditionDeleteMapping({
  namespace: 'alerts_external_service_conditions',
  singular: 'external_service_condition',
  keys: ['type', 'name', 'enabled', 'entities', 'external_service_url', 'metric', 'runbook_url', 'terms'],
  what: 'external service alert condition',
  sampleId: 'external_service_condition_id',
});
