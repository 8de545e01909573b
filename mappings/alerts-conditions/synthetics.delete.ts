import { conditionDeleteMapping } from './condition-delete.ts';

/** DELETE /v2/alerts_synthetics_conditions/{condition_id}.{json,xml}: alertsConditionDelete; the answer holds the id only. */
export default conditionDeleteMapping({
  namespace: 'alerts_synthetics_conditions',
  singular: 'synthetics_condition',
  keys: ['name', 'monitor_id', 'runbook_url', 'enabled'],
  what: 'synthetics monitor alert condition',
  sampleId: 'synthetics_condition_id',
});
