import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** GET /v2/alerts_synthetics_conditions.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_synthetics_conditions.list',
  route: '/v2/alerts_synthetics_conditions.{format}',
  methods: ['GET'],
  summary: 'Synthetics alert conditions of a policy (policy_id, page), forwarded to the legacy REST API',
  reason: FamilyReasons.synthetics,
});
