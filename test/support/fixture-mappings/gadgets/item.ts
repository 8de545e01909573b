import { definePassthroughMapping } from '../../../../src/mapping-api.ts';

/** Test fixture, passthrough only: GET, PUT and DELETE /v2/fixture_gadgets/{gadget_id}.{json,xml}. */
export default definePassthroughMapping({
  id: 'fixture_gadgets.item',
  route: '/v2/fixture_gadgets/{gadget_id}.{format}',
  methods: ['GET', 'PUT', 'DELETE'],
  summary: 'Fixture gadgets: show, update or delete one, forwarded to the legacy REST API',
  reason: 'Test fixture: NerdGraph has no gadgets, so the legacy REST API answers',
});
