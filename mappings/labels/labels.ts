import { z } from 'zod';
import { checkedParse, type CallerScope, type WritePlan, entityQuery, walkCursors, parseAnswer, UpstreamError, redactKeys, V2Error, writeRefused, type V2Body, type LabelChange, type RememberedLabelChange, type RequestBodyKind } from '../../src/mapping-api.ts';
import { LabelTitles, UpstreamTags, carries, healthBucket, type LabelBodyKind, type LabelledApplication } from './label-rules.ts';
import { EntityHealth } from '../common/entity-schemas.ts';

/**
 * Labels over NerdGraph tagging (routes-next.md §6), shared by the list, PUT and DELETE
 * mappings: the account's APM applications with their tags (every page of one entity search,
 * bounded), and the chained writes, one tagging mutation per application.
 */
export const TAGGED_ENTITIES_OPERATION = 'LabelsTaggedEntities';

/** How the label body arrived, for the label rules (no body reads as JSON: nothing to read). */
export const labelBodyKind = (kind: RequestBodyKind | undefined): LabelBodyKind => (kind === 'xml' || kind === 'form' ? kind : 'json');

/** Entity search pages of 200: at most 50 of them, 10,000 applications (beyond: 502, documented). */
const MAX_SEARCH_PAGES = 50;

const TaggedEntity = EntityHealth.extend({
  tags: UpstreamTags,
  applicationId: z.number().int().positive().nullable().optional(),
});

const SearchAnswer = z.object({
  actor: z.object({
    entitySearch: z
      .object({
        results: z.object({ nextCursor: z.string().nullable().optional(), entities: z.array(z.unknown()).nullable().optional() }).nullable().optional(),
      })
      .nullable(),
  }),
});

export interface TaggedApplication extends LabelledApplication {
  guid: string;
}

/** Every APM application of the caller's account with its tags, in the account only, by application id. */
export async function readTaggedApplications(ctx: CallerScope): Promise<Map<number, TaggedApplication>> {
  const query = entityQuery([
    { field: 'domain', op: '=', value: 'APM' },
    { field: 'type', op: '=', value: 'APPLICATION' },
    { field: 'accountId', op: '=', value: ctx.accountId },
  ]);
  const pageOf = (data: unknown): { items: TaggedApplication[]; nextCursor: string | null | undefined } => {
    const results = parseAnswer(SearchAnswer, data, TAGGED_ENTITIES_OPERATION).actor.entitySearch?.results;
    const items = (results?.entities ?? []).flatMap((raw): TaggedApplication[] => {
      // Another account's entity in the answer is dropped (and counted) like every list's.
      if (!ctx.inAccount(raw, TAGGED_ENTITIES_OPERATION)) return [];
      const entity = checkedParse(TaggedEntity, raw);
      if (!entity.success || entity.data.applicationId === null || entity.data.applicationId === undefined) return [];
      const id = entity.data.applicationId;
      return [{ id, guid: entity.data.guid, health: healthBucket(entity.data.reporting === true, entity.data.alertSeverity ?? 'NOT_CONFIGURED'), tags: entity.data.tags }];
    });
    return { items, nextCursor: results?.nextCursor };
  };
  const walked = await walkCursors(ctx, TAGGED_ENTITIES_OPERATION, { query }, pageOf, { enough: Number.POSITIVE_INFINITY, maxPages: MAX_SEARCH_PAGES });
  if (walked.truncated) throw new UpstreamError('upstream_failure', `${TAGGED_ENTITIES_OPERATION}: more than ${MAX_SEARCH_PAGES} pages of applications`);
  const apps = new Map(walked.items.map((app) => [app.id, app]));
  await withRecentChanges(ctx, apps);
  return apps;
}

/**
 * Read-your-writes: label changes written here that entity search does not show yet (its
 * index lags behind tagging) are applied to the applications read; those it shows are
 * forgotten (src/state/recent-writes.ts). An application the search no longer lists gets none.
 */
async function withRecentChanges(ctx: CallerScope, apps: Map<number, TaggedApplication>): Promise<void> {
  const shown: RememberedLabelChange[] = [];
  for (const change of await ctx.recent.labelChanges(ctx.accountId)) {
    const app = apps.get(change.appId);
    if (!app) continue;
    const label = { category: change.category, name: change.name };
    if (carries(app, label) === (change.op === 'add')) {
      if (!change.untilBound) shown.push(change);
      continue;
    }
    apps.set(app.id, { ...app, tags: changedTags(app.tags, change) });
  }
  await ctx.recent.forgetLabels(ctx.accountId, shown);
}

/** The tags with one value added or removed (a key goes with its last value). */
function changedTags(tags: TaggedApplication['tags'], change: LabelChange): TaggedApplication['tags'] {
  if (change.op === 'add') {
    const has = tags.some((tag) => tag.key === change.category);
    return has
      ? tags.map((tag) => (tag.key === change.category ? { key: tag.key, values: [...tag.values, change.name] } : tag))
      : [...tags, { key: change.category, values: [change.name] }];
  }
  return tags.flatMap((tag) => {
    if (tag.key !== change.category) return [tag];
    const values = tag.values.filter((value) => value !== change.name);
    return values.length > 0 ? [{ key: tag.key, values }] : [];
  });
}

/** The named applications, in the order given; 422 for the first id the account does not have. */
export function namedApplications(apps: ReadonlyMap<number, TaggedApplication>, ids: readonly number[]): TaggedApplication[] {
  return ids.map((id) => {
    const app = apps.get(id);
    if (!app) throw new V2Error(422, LabelTitles.unknownApplication(id), { kind: 'invalid_label' });
    return app;
  });
}

const TaggingResult = z.object({ errors: z.array(z.object({ message: z.string().nullable().optional(), type: z.string().nullable().optional() }).nullable()).nullable().optional() }).nullable();
// One schema per mutation field, built on first use and kept (zod compiles a schema on its first parse).
const taggingPayloads = new Map<string, z.ZodType<Record<string, z.infer<typeof TaggingResult>>>>();
const TaggingPayload = (field: string): z.ZodType<Record<string, z.infer<typeof TaggingResult>>> => {
  let schema = taggingPayloads.get(field);
  if (schema === undefined) {
    schema = z.object({ [field]: TaggingResult });
    taggingPayloads.set(field, schema);
  }
  return schema;
};

/**
 * A tagging mutation's confirmation: its payload with no errors. Errors NerdGraph states in the
 * payload are a refusal (nothing applied on that entity): for the first step that is "nothing
 * was changed" (the runner keeps it a refusal); after the first, the runner makes any failure
 * an unknown outcome.
 */
export function confirmTagging(payload: unknown, field: string, operation: string): void {
  const result = parseAnswer(TaggingPayload(field), payload, operation)[field];
  if (!result) throw new UpstreamError('upstream_failure', `${operation}: no ${field} payload`);
  const errors = (result.errors ?? []).filter((e) => e !== null);
  if (errors.length > 0) {
    const detail = errors.map((e) => [e.type, e.message].filter(Boolean).join(': ')).join('; ');
    // NerdGraph's own words, with anything key-shaped taken out.
    throw writeRefused(422, LabelTitles.refused(redactKeys(detail)));
  }
}

/**
 * One mutation per application, chained: each sent only once the one before it was confirmed.
 * `variablesOf` gives an application's mutation variables; `answer` the v2 body once all are
 * confirmed. No applications: nothing is written and the answer comes at once.
 */
export function chainPerApplication(
  ctx: CallerScope,
  apps: readonly TaggedApplication[],
  step: { operation: string; field: string; variablesOf(app: TaggedApplication): Record<string, unknown>; change(app: TaggedApplication): LabelChange },
  answer: () => V2Body,
): WritePlan {
  const from = (index: number): WritePlan => {
    const app = apps[index];
    if (app === undefined) return { variables: null, answer: () => answer() };
    return {
      operation: step.operation,
      variables: step.variablesOf(app),
      next: async (payload) => {
        confirmTagging(payload, step.field, step.operation);
        // Confirmed: every replica's next list shows it, until entity search does.
        await ctx.recent.rememberLabel(ctx.accountId, step.change(app));
        return from(index + 1);
      },
    };
  };
  return from(0);
}
