import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** POST /v2/alerts_conditions/policies/{policy_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_conditions.create',
  route: '/v2/alerts_conditions/policies/{policy_id}.{format}',
  methods: ['POST'],
  summary: 'APM/browser/mobile alert conditions: create in a policy, forwarded to the legacy REST API',
  reason: FamilyReasons.apm,
});
