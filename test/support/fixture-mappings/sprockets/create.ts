import { definePassthroughMapping } from '../../../../src/mapping-api.ts';

/** Test fixture: POST /v2/fixture_sprockets.{json,xml} is passthrough only, beside a translated GET of the same template. */
export default definePassthroughMapping({
  id: 'fixture_sprockets.create',
  route: '/v2/fixture_sprockets.{format}',
  methods: ['POST'],
  summary: 'Fixture sprockets: create one, forwarded to the legacy REST API',
  reason: 'Test fixture: NerdGraph cannot create sprockets',
});
