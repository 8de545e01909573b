import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** POST /v2/alerts_synthetics_conditions/policies/{policy_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_synthetics_conditions.create',
  route: '/v2/alerts_synthetics_conditions/policies/{policy_id}.{format}',
  methods: ['POST'],
  summary: 'Synthetics alert conditions: create in a policy, forwarded to the legacy REST API',
  reason: FamilyReasons.synthetics,
});
