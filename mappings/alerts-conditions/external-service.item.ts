import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';
import { SHOW_UNCONFIRMED } from '../common/alerts.ts';

/** GET, PUT /v2/alerts_external_service_conditions/{condition_id}.{json,xml}: passthrough (DELETE is translated: alerts-external-service-conditions.delete.ts). */
export default definePassthroughMapping({
  id: 'alerts_external_service_conditions.item',
  route: '/v2/alerts_external_service_conditions/{condition_id}.{format}',
  methods: ['GET', 'PUT'],
  summary: 'External service alert conditions: show, update one, forwarded to the legacy REST API',
  reason: FamilyReasons.externalService,
  assumptions: [SHOW_UNCONFIRMED],
});
