import { definePassthroughMapping } from '../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from './shared/alerts.ts';

/** GET, POST /v2/alerts_policies.{json,xml}: passthrough. */
export default definePassthroughMapping({
  id: 'alerts_policies.collection',
  route: '/v2/alerts_policies.{format}',
  methods: ['GET', 'POST'],
  summary: 'Alert policies: list (filter[name], page) and create, forwarded to the legacy REST API',
  reason: ALERTS_KEPT_ALIVE,
});
