import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** GET, PUT, DELETE /v2/alerts_entity_conditions/{entity_id}.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_entity_conditions',
  route: '/v2/alerts_entity_conditions/{entity_id}.{format}',
  methods: ['GET', 'PUT', 'DELETE'],
  summary: 'Alert conditions of an entity (entity_type, condition_id): list, add, remove, forwarded to the legacy REST API',
  reason: FamilyReasons.entity,
  assumptions: ['The answer wraps conditions under `conditions`/`condition` (UNCONFIRMED); forwarded unchanged, whatever it is (no probe: nothing is translated, so there is nothing to compare).'],
});
