import { conditionDeleteMapping } from './condition-delete.ts';

/** DELETE /v2/alerts_conditions/{condition_id}.{json,xml}: alertsConditionDelete; the answer holds the id only. */
export default conditionDeleteMapping({
  namespace: 'alerts_conditions',
  singular: 'condition',
  keys: ['type', 'name', 'enabled', 'entities', 'metric', 'condition_scope', 'violation_close_timer', 'runbook_url', 'terms', 'user_defined', 'gc_metric'],
  what: 'APM, browser or mobile metric alert condition',
  sampleId: 'apm_condition_id',
});
