import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** GET /v2/alerts_conditions.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_conditions.list',
  route: '/v2/alerts_conditions.{format}',
  methods: ['GET'],
  summary: 'APM/browser/mobile alert conditions of a policy (policy_id, page), forwarded to the legacy REST API',
  reason: FamilyReasons.apm,
});
