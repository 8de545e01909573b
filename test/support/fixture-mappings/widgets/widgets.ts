import { z } from 'zod';
import { EntityKinds, type FieldNote, type KnownGap, type OperationContext, parseAnswer, entityQuery, V2Error, type V2Body, XML_ASSUMPTION } from '../../../../src/mapping-api.ts';

/**
 * Fixture widgets: the caller's account's APM applications seen through a deliberately small
 * v2 shape, `{ id, name }`, so the stage tests have a translated route of their own whose
 * NerdGraph calls the sandbox answers. No real v2 route; never loaded by the gateway.
 */
export const WIDGETS_SEARCH = 'FixtureWidgetsSearch';
export const WIDGET_BY_GUID = 'FixtureWidget';
export const WIDGET_NOTE = 'FixtureWidgetNote';
/** Widgets per v2 page of the list. */
export const WIDGETS_PAGE_SIZE = 10;
/** The most entity-search pages one list answer reads. */
const MAX_SEARCH_PAGES = 10;
/** The tag a widget note is written as. */
export const NOTE_TAG_KEY = 'fixture_note';
export const MAX_NOTE_LENGTH = 64;

export const WidgetTitles = {
  notFound: 'Fixture widget not found',
  noteMissing: 'Invalid parameter note.text: required',
  noteTooLong: `Invalid parameter note.text: at most ${MAX_NOTE_LENGTH} characters`,
  noteUnconfirmed: 'The fixture note may have been written but NerdGraph did not confirm it: list before retrying',
  noteRefused: 'NerdGraph refused the fixture note',
} as const;

export const WIDGET_ASSUMPTIONS: readonly string[] = [XML_ASSUMPTION];

export const widgetFields = (prefix: string): FieldNote[] => [
  { field: `${prefix}.id`, fidelity: 'exact', source: 'entity applicationId' },
  { field: `${prefix}.name`, fidelity: 'exact', source: 'entity name' },
];

export const WIDGET_GAPS: readonly KnownGap[] = [
  { description: 'Test fixture: a widget renamed in the last seconds may show its old name until entity search indexes it.' },
];

const SearchAnswer = z.object({
  actor: z.object({
    entitySearch: z.object({
      results: z.object({
        nextCursor: z.string().nullable(),
        entities: z.array(z.object({ name: z.string(), accountId: z.number().int(), applicationId: z.number().int().optional() })),
      }),
    }),
  }),
});

/** Every widget of the caller's account whose name contains `name` (any case), by id. */
export async function searchWidgets(ctx: OperationContext, name: string | undefined): Promise<V2Body[]> {
  const query = entityQuery([
    { field: 'domain', op: '=', value: EntityKinds.apmApplication.domain },
    { field: 'type', op: '=', value: EntityKinds.apmApplication.type },
    { field: 'accountId', op: '=', value: ctx.accountId },
    ...(name === undefined ? [] : [{ field: 'name', op: 'LIKE' as const, value: name }]),
  ]);
  const widgets: V2Body[] = [];
  let cursor: string | null = null;
  for (let read = 0; read < MAX_SEARCH_PAGES; read += 1) {
    const answer: z.infer<typeof SearchAnswer> = parseAnswer(SearchAnswer, await ctx.read(WIDGETS_SEARCH, { query, cursor }), WIDGETS_SEARCH);
    const { entities, nextCursor } = answer.actor.entitySearch.results;
    for (const entity of entities) {
      if (entity.applicationId !== undefined && entity.accountId === ctx.accountId) widgets.push({ id: entity.applicationId, name: entity.name });
    }
    if (nextCursor === null) return widgets.sort((a, b) => (a.id as number) - (b.id as number));
    cursor = nextCursor;
  }
  throw new V2Error(422, 'Too many fixture widgets for one answer: narrow the list with filter[name]');
}

const EntityAnswer = z.object({
  actor: z.object({ entity: z.object({ guid: z.string(), name: z.string(), accountId: z.number().int(), applicationId: z.number().int() }).nullable() }),
});

/** The widget `{id}` names in the caller's account, or 404. */
export async function readWidget(ctx: OperationContext): Promise<V2Body> {
  const ref = ctx.entityRef(EntityKinds.apmApplication, ctx.pathParams.id, WidgetTitles.notFound);
  const answer = parseAnswer(EntityAnswer, await ctx.read(WIDGET_BY_GUID, { guid: ref.guid }), WIDGET_BY_GUID);
  const entity = ctx.requireEntity(answer.actor.entity, ref, WidgetTitles.notFound);
  return { id: entity.applicationId, name: entity.name };
}
