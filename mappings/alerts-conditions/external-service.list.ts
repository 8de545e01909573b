import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** GET /v2/alerts_external_service_conditions.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_external_service_conditions.list',
  route: '/v2/alerts_external_service_conditions.{format}',
  methods: ['GET'],
  summary: 'External service alert conditions of a policy (policy_id, page), forwarded to the legacy REST API',
  reason: FamilyReasons.externalService,
});
