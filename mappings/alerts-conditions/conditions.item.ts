import { definePassthroughMapping } from '../../src/mapping-api.ts';
import { FamilyReasons } from './condition-families.ts';
import { SHOW_UNCONFIRMED } from '../common/alerts.ts';

/** GET, PUT /v2/alerts_conditions/{condition_id}.{json,xml}: passthrough (DELETE is translated: alerts-conditions.delete.ts). */
export default definePassthroughMapping({
  id: 'alerts_conditions.item',
  route: '/v2/alerts_conditions/{condition_id}.{format}',
  methods: ['GET', 'PUT'],
  summary: 'APM/browser/mobile alert conditions: show, update one, forwarded to the legacy REST API',
  reason: FamilyReasons.apm,
  assumptions: [SHOW_UNCONFIRMED],
});
