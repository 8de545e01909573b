/**
 * Entity tags the user set (v2 labels, routes-next.md §6) on the sandbox's APM applications:
 * their seed, the writes both faces share, and the NerdGraph tagging mutations
 * (`taggingAddTagsToEntity`, `taggingDeleteTagValuesFromEntity`, `taggingDeleteTagFromEntity`).
 *
 * - Seed: a pure function of the app id (no draw from the generator's stream, so nothing
 *   else in the world changes): Environment, Team, Region (sometimes two values), Tier and
 *   Project, about 55 distinct labels over a few hundred apps, i.e. 3+ pages of 20.
 * - System tags (`account`, `language`, ...) are not stored here: the entity views add them,
 *   and the one rule of tag-rules.ts keeps them out of labels. NerdGraph refuses to write
 *   them (INVALID_KEY), as New Relic does for its reserved keys (`nr.*`, `newrelic.*` too).
 * - Removing a value an entity does not carry is no error (idempotent, as in NerdGraph).
 * - Mutations answer problems in the payload's `errors` (TaggingMutationResult), never as
 *   GraphQL errors; nothing is applied when one is reported, and only an applied mutation is
 *   counted as a write (graphql.ts counts a payload without errors).
 * - Only APM applications carry user tags in the sandbox: other GUIDs answer NOT_FOUND.
 * - Ingest lag (ingest.ts): every write is noted, and entity search shows it only once indexed;
 *   the mutations' own checks and the legacy face read the tags as written.
 */
import { guidParts, fnv1a32 } from './ids.ts';
import { MAX_TAG_KEY_LENGTH as MAX_CATEGORY_LENGTH, MAX_TAG_VALUE_LENGTH as MAX_NAME_LENGTH, isUserTagKey as isLabelTagKey } from './tag-rules.ts';
import type { SandboxApp, SandboxData } from './model.ts';
import type { SandboxIndex } from './actor.ts';
import { noteTagWrite } from './ingest.ts';

const ENVIRONMENTS = ['Production', 'Staging', 'Development', 'QA'] as const;
const TEAMS = ['Payments', 'Checkout', 'Search', 'Identity', 'Platform', 'Mobile', 'Data Platform', 'Growth', 'Billing', 'SRE'] as const;
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2', 'sa-east-1'] as const;
const TIERS = ['1', '2', '3'] as const;
const PROJECTS = [
  'Apollo', 'Borealis', 'Cobalt', 'Delta', 'Ember', 'Falcon', 'Granite', 'Harbor', 'Iris', 'Juniper',
  'Kestrel', 'Lumen', 'Meridian', 'Nimbus', 'Onyx', 'Polaris', 'Quartz', 'Raven', 'Sierra', 'Tundra',
  'Umbra', 'Vertex', 'Willow', 'Xenon', 'Yukon', 'Zephyr', 'Atlas', 'Beacon', 'Cascade', 'Dune',
] as const;

/** At most this many tag keys per entity, and values per key (NerdGraph's TOO_MANY_TAG_* limits). */
const MAX_TAG_KEYS = 100;
const MAX_TAG_VALUES = 100;

const pickOf = <T>(list: readonly T[], draw: number): T => list[draw % list.length] as T;

/** The user tags an app starts with: a pure function of its id. */
export function seededUserTags(app: Pick<SandboxApp, 'id'>): Record<string, string[]> {
  const draw = (salt: string): number => fnv1a32(`labels|${salt}|${app.id}`);
  const tags: Record<string, string[]> = {};
  if (draw('env?') % 10 < 9) tags.Environment = [pickOf(ENVIRONMENTS, draw('env'))];
  if (draw('team?') % 10 < 7) tags.Team = [pickOf(TEAMS, draw('team'))];
  if (draw('region?') % 10 < 5) {
    const first = pickOf(REGIONS, draw('region'));
    const second = pickOf(REGIONS, draw('region2'));
    tags.Region = draw('region+') % 10 === 0 && second !== first ? [first, second] : [first];
  }
  if (draw('tier?') % 10 < 4) tags.Tier = [pickOf(TIERS, draw('tier'))];
  if (draw('project?') % 20 < 7) tags.Project = [pickOf(PROJECTS, draw('project'))];
  return tags;
}

/** The app's user tags (a snapshot: callers change them only through the writes below). */
export function userTagsOf(app: SandboxApp): Readonly<Record<string, readonly string[]>> {
  return app.userTags ?? {};
}

function bumped(data: SandboxData): void {
  data.writes.version++;
}

/** Adds values to a key (no duplicates); returns whether anything changed. */
export function addUserTag(data: SandboxData, app: SandboxApp, key: string, values: readonly string[]): boolean {
  const tags = { ...(app.userTags ?? {}) };
  const before = tags[key] ?? [];
  const after = [...before, ...values.filter((value, i) => !before.includes(value) && values.indexOf(value) === i)];
  if (after.length === before.length) return false;
  tags[key] = after;
  const previous = userTagsOf(app);
  app.userTags = tags;
  noteTagWrite(data, app, previous);
  bumped(data);
  return true;
}

/** Removes one value of a key (the key goes with its last value); returns whether anything changed. */
export function removeUserTagValue(data: SandboxData, app: SandboxApp, key: string, value: string): boolean {
  const before = app.userTags?.[key];
  if (!before || !before.includes(value)) return false;
  const tags = { ...(app.userTags ?? {}) };
  const after = before.filter((v) => v !== value);
  if (after.length === 0) delete tags[key];
  else tags[key] = after;
  const previous = userTagsOf(app);
  app.userTags = tags;
  noteTagWrite(data, app, previous);
  bumped(data);
  return true;
}

/** Removes whole keys; returns whether anything changed. */
export function removeUserTagKeys(data: SandboxData, app: SandboxApp, keys: readonly string[]): boolean {
  const tags = { ...(app.userTags ?? {}) };
  let changed = false;
  for (const key of keys) {
    if (Object.hasOwn(tags, key)) {
      delete tags[key];
      changed = true;
    }
  }
  if (!changed) return false;
  const previous = userTagsOf(app);
  app.userTags = tags;
  noteTagWrite(data, app, previous);
  bumped(data);
  return true;
}

// ---------------------------------------------------------------- NerdGraph mutations

type TaggingErrorType = 'INVALID_ENTITY_GUID' | 'INVALID_KEY' | 'INVALID_VALUE' | 'NOT_FOUND' | 'NOT_PERMITTED' | 'TOO_MANY_TAG_KEYS' | 'TOO_MANY_TAG_VALUES';

export interface TaggingMutationResult {
  errors: Array<{ message: string; type: TaggingErrorType }>;
}

const ok = (): TaggingMutationResult => ({ errors: [] });
const refused = (type: TaggingErrorType, message: string): TaggingMutationResult => ({ errors: [{ type, message }] });

/** Why a key cannot be written, or undefined. */
function keyProblem(key: string): string | undefined {
  if (key.trim() === '') return 'Tag key must not be blank';
  if ([...key].length > MAX_CATEGORY_LENGTH) return `Tag key is longer than ${MAX_CATEGORY_LENGTH} characters`;
  // New Relic's own keys, `nr.*` and `newrelic.*` included, are not the user's to write.
  if (!isLabelTagKey(key)) return `Tag key '${key}' is reserved`;
  return undefined;
}

function valueProblem(value: string): string | undefined {
  if (value.trim() === '') return 'Tag value must not be blank';
  if ([...value].length > MAX_NAME_LENGTH) return `Tag value is longer than ${MAX_NAME_LENGTH} characters`;
  return undefined;
}

/** The tagging mutations of one request, scoped to the accounts the key sees. */
export class TaggingResolver {
  private readonly index: SandboxIndex;
  private readonly visible: ReadonlySet<number>;

  constructor(
    index: SandboxIndex,
    visible: ReadonlySet<number>,
  ) {
    this.index = index;
    this.visible = visible;
  }

  /** The APM app with this GUID, or the payload error NerdGraph answers instead. */
  private target(guid: string): SandboxApp | TaggingMutationResult {
    const decoded = guidParts(String(guid));
    if (!decoded) return refused('INVALID_ENTITY_GUID', `Invalid entity guid: ${String(guid).slice(0, 100)}`);
    if (!this.visible.has(decoded.accountId)) return refused('NOT_PERMITTED', `You do not have access to entities of account ${decoded.accountId}`);
    const app = this.index.appsByGuid.get(guid);
    if (!app || !this.visible.has(app.accountId)) return refused('NOT_FOUND', `Entity not found: ${guid}`);
    return app;
  }

  taggingAddTagsToEntity({ guid, tags }: { guid: string; tags: ReadonlyArray<{ key: string; values?: ReadonlyArray<string | null> | null }> }): TaggingMutationResult {
    const app = this.target(guid);
    if (!('id' in app)) return app;
    const current = userTagsOf(app);
    const keys = new Set(Object.keys(current));
    for (const tag of tags) {
      const keyError = keyProblem(tag.key);
      if (keyError) return refused('INVALID_KEY', keyError);
      const values = (tag.values ?? []).filter((v): v is string => v !== null);
      for (const value of values) {
        const valueError = valueProblem(value);
        if (valueError) return refused('INVALID_VALUE', valueError);
      }
      keys.add(tag.key);
      if (new Set([...(current[tag.key] ?? []), ...values]).size > MAX_TAG_VALUES) return refused('TOO_MANY_TAG_VALUES', `Tag key '${tag.key}' would have more than ${MAX_TAG_VALUES} values`);
    }
    if (keys.size > MAX_TAG_KEYS) return refused('TOO_MANY_TAG_KEYS', `An entity may have at most ${MAX_TAG_KEYS} tag keys`);
    for (const tag of tags) addUserTag(this.index.data, app, tag.key, (tag.values ?? []).filter((v): v is string => v !== null));
    return ok();
  }

  taggingDeleteTagValuesFromEntity({ guid, tagValues }: { guid: string; tagValues: ReadonlyArray<{ key: string; value: string }> }): TaggingMutationResult {
    const app = this.target(guid);
    if (!('id' in app)) return app;
    for (const { key } of tagValues) {
      const keyError = keyProblem(key);
      if (keyError) return refused('INVALID_KEY', keyError);
    }
    // Removing a value the entity does not carry is no error (NerdGraph answers no errors).
    for (const { key, value } of tagValues) removeUserTagValue(this.index.data, app, key, value);
    return ok();
  }

  taggingDeleteTagFromEntity({ guid, tagKeys }: { guid: string; tagKeys: readonly string[] }): TaggingMutationResult {
    const app = this.target(guid);
    if (!('id' in app)) return app;
    for (const key of tagKeys) {
      const keyError = keyProblem(key);
      if (keyError) return refused('INVALID_KEY', keyError);
    }
    removeUserTagKeys(this.index.data, app, tagKeys);
    return ok();
  }
}

/** The tagging mutation root fields, for mutations.ts's mutationRoot. */
export function taggingMutationRoot(resolver: TaggingResolver): Record<string, (args: never) => unknown> {
  return {
    taggingAddTagsToEntity: (args: Parameters<TaggingResolver['taggingAddTagsToEntity']>[0]) => resolver.taggingAddTagsToEntity(args),
    taggingDeleteTagValuesFromEntity: (args: Parameters<TaggingResolver['taggingDeleteTagValuesFromEntity']>[0]) => resolver.taggingDeleteTagValuesFromEntity(args),
    taggingDeleteTagFromEntity: (args: Parameters<TaggingResolver['taggingDeleteTagFromEntity']>[0]) => resolver.taggingDeleteTagFromEntity(args),
  };
}
