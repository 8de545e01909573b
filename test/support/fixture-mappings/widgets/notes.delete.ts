import { NO_PARAMS, defineUnsupportedMapping } from '../../../../src/mapping-api.ts';

/** Test fixture, unsupported: DELETE /v2/fixture_widgets/{id}/notes/{note_id}.{json,xml} is always the same 422. */
export default defineUnsupportedMapping({
  kind: 'unsupported',
  id: 'fixture_widgets.notes.delete',
  method: 'DELETE',
  route: '/v2/fixture_widgets/{id}/notes/{note_id}.{format}',
  operation: '(none)',
  summary: 'Delete a fixture note: no NerdGraph equivalent; answered 422',
  fidelity: 'unsupported',
  status: 422,
  title: 'Fixture notes cannot be deleted',
  reason: 'Test fixture: a route NerdGraph cannot serve.',
  replacement: 'None: write a new note instead.',
  parameters: NO_PARAMS,
  fields: [],
  knownGaps: [],
  assumptions: [],
});
