import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** GET, POST /v2/alerts_location_failure_conditions/policies/{policy_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_location_failure_conditions.policy',
  route: '/v2/alerts_location_failure_conditions/policies/{policy_id}.{format}',
  methods: ['GET', 'POST'],
  summary: 'Location failure alert conditions of a policy: list and create, forwarded to the legacy REST API',
  reason: FamilyReasons.locationFailure,
});
