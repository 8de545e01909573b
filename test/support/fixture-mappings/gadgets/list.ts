import { definePassthroughMapping } from '../../../../src/mapping-api.ts';

/** Test fixture, passthrough only: GET and POST /v2/fixture_gadgets.{json,xml} (NerdGraph cannot serve gadgets). */
export default definePassthroughMapping({
  id: 'fixture_gadgets.list',
  route: '/v2/fixture_gadgets.{format}',
  methods: ['GET', 'POST'],
  summary: 'Fixture gadgets: list or create, forwarded to the legacy REST API',
  reason: 'Test fixture: NerdGraph has no gadgets, so the legacy REST API answers',
});
