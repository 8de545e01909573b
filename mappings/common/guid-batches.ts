import { checkedParseOrThrow, UpstreamError, type PageReadContext, parseAnswer } from '../../src/mapping-api.ts';
import { z } from 'zod';

/**
 * Details of a list page's entities in ONE upstream request: NerdGraph's `actor.entities` takes
 * at most 25 GUIDs per call (nerdgraph.md §5), so a page of 200 needs 8 calls, sent as the
 * aliased fields `b0` … `b7` of one static document (`entities(guids: $bN) @include(if: $iN)`),
 * each skipped when its batch is empty.
 */
export const GUIDS_PER_ENTITIES_CALL = 25;
export const ENTITIES_CALLS_PER_DOCUMENT = 8;
/** The most GUIDs one details document can carry (a whole 200-item page). */
export const MAX_GUIDS_PER_DOCUMENT = GUIDS_PER_ENTITIES_CALL * ENTITIES_CALLS_PER_DOCUMENT;

/** `$b0..$b7` (the GUID batches, empty when unused) and `$i0..$i7` (whether each call runs). */
export function guidBatchVariables(guids: readonly string[]): Record<string, unknown> {
  // Entity search pages hold at most 200 entities; a larger page is an upstream surprise (502), not a gateway bug.
  if (guids.length > MAX_GUIDS_PER_DOCUMENT) {
    throw new UpstreamError('upstream_failure', `entity search page of ${guids.length} entities: at most ${MAX_GUIDS_PER_DOCUMENT} fit one details document`);
  }
  const variables: Record<string, unknown> = {};
  for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
    const batch = guids.slice(call * GUIDS_PER_ENTITIES_CALL, (call + 1) * GUIDS_PER_ENTITIES_CALL);
    variables[`b${call}`] = batch;
    variables[`i${call}`] = batch.length > 0;
  }
  return variables;
}

const Batch = z.array(z.unknown()).nullable().optional();
// Only the b0..b7 fields are read; a document may select more beside them (e.g. NRQL).
export const Batches = z.object({
  actor: z.object(Object.fromEntries(Array.from({ length: ENTITIES_CALLS_PER_DOCUMENT }, (_, call) => [`b${call}`, Batch])) as Record<string, typeof Batch>),
});

const WithGuid = z.object({ guid: z.string() });

/** An entity's GUID (a search or entities() answer's item); throws when it has none. */
export function guidOf(entity: unknown): string {
  return checkedParseOrThrow(WithGuid, entity).guid;
}

/** The GUIDs of a page's entities (already account-checked by the list runner). */
export function guidsOf(entities: readonly unknown[]): string[] {
  return entities.map(guidOf);
}

/**
 * Every entity of the `b0..b7` calls that is in the caller's account and was asked for, by
 * GUID: NerdGraph answers null for an unknown or inaccessible GUID, and anything else is dropped.
 */
export function entitiesByGuid(data: unknown, operation: string, asked: readonly string[], ctx: Pick<PageReadContext, 'inAccount'>): Map<string, unknown> {
  const actor = parseAnswer(Batches, data, operation).actor;
  const wanted = new Set(asked);
  const found = new Map<string, unknown>();
  for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
    for (const entity of actor[`b${call}`] ?? []) {
      if (!ctx.inAccount(entity)) continue;
      const guid = (entity as { guid: string }).guid;
      if (wanted.has(guid)) found.set(guid, entity);
    }
  }
  return found;
}
