import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';

/** PUT /v2/alerts_location_failure_conditions/{condition_id}.{json,xml}: passthrough (DELETE is translated: alerts-location-failure-conditions.delete.ts). */
export default definePassthroughMapping({
  id: 'alerts_location_failure_conditions.item',
  route: '/v2/alerts_location_failure_conditions/{condition_id}.{format}',
  methods: ['PUT'],
  summary: 'One location failure alert condition: update, forwarded to the legacy REST API',
  reason: FamilyReasons.locationFailure,
});
