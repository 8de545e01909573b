import { z } from 'zod';
import { defineParams, defineWriteMapping, EntityKinds, objectAt, param, parseAnswer, V2Error, writeRefused } from '../../../../src/mapping-api.ts';
import { MAX_NOTE_LENGTH, NOTE_TAG_KEY, WIDGET_ASSUMPTIONS, WIDGET_NOTE, WidgetTitles, readWidget } from './widgets.ts';

const Payload = z.object({ taggingAddTagsToEntity: z.object({ errors: z.array(z.object({ message: z.string(), type: z.string() })).nullable() }) });

/**
 * Test fixture, a translated write: POST /v2/fixture_widgets/{id}/notes.{json,xml} with
 * `{"note":{"text":"..."}}` reads the widget (404 when the account has none), then writes the
 * text as the tag fixture_note on its application (one taggingAddTagsToEntity) and answers 201
 * `{"note":{"widget_id","text"}}`.
 */
export default defineWriteMapping({
  kind: 'write',
  id: 'fixture_widgets.notes.create',
  method: 'POST',
  route: '/v2/fixture_widgets/{id}/notes.{format}',
  sample: { path: { id: '{reporting_app_id}' }, body: { json: { note: { text: 'costs-{call}' } } } },
  operation: WIDGET_NOTE,
  summary: "Note a fixture widget: one read of the widget, then one taggingAddTagsToEntity on its application's GUID",
  fidelity: 'exact',
  successStatus: 201,
  unconfirmedTitle: WidgetTitles.noteUnconfirmed,
  parameters: defineParams({ text: param.bodyField('note.text', { fidelity: 'exact', note: `Required, at most ${MAX_NOTE_LENGTH} characters; the tag's value` }) }),
  fields: [
    { field: 'note.widget_id', fidelity: 'exact', source: 'the path id' },
    { field: 'note.text', fidelity: 'exact', source: 'as sent' },
  ],
  knownGaps: [],
  assumptions: WIDGET_ASSUMPTIONS,
  async plan(ctx) {
    const ref = ctx.entityRef(EntityKinds.apmApplication, ctx.pathParams.id, WidgetTitles.notFound);
    const text = objectAt(ctx.body, 'note')?.text;
    if (typeof text !== 'string' || text.trim() === '') throw new V2Error(422, WidgetTitles.noteMissing);
    if (text.length > MAX_NOTE_LENGTH) throw new V2Error(422, WidgetTitles.noteTooLong);
    // An id the account does not have is refused before anything is written.
    await readWidget(ctx);
    return {
      variables: { guid: ref.guid, tags: [{ key: NOTE_TAG_KEY, values: [text] }] },
      answer(payload: unknown) {
        const { errors } = parseAnswer(Payload, payload, WIDGET_NOTE).taggingAddTagsToEntity;
        if (errors && errors.length > 0) throw writeRefused(422, WidgetTitles.noteRefused, errors.map((error) => error.message));
        return { note: { widget_id: ref.id, text } };
      },
    };
  },
});
