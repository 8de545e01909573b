import { describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { seededUserTags } from '../../sandbox/tagging.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT } from '../support/harness.ts';

/**
 * The sandbox's NerdGraph tagging (sandbox/tagging.ts): the real schema's mutations change
 * the tags entity reads and entity search see, refuse in the payload's `errors` (nothing
 * applied, nothing counted), and the seeded user tags are a pure function of the app id.
 */
// Tags are written then searched at once here: no ingest lag (test/sandbox/ingest.test.ts has it).
const sandbox = createSandbox({ seed: 3, apmApps: 60, now: () => FIXED_NOW, behave: { ingestLagMs: 0 } });

async function gql(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

const ADD = 'mutation($guid: EntityGuid!, $tags: [TaggingTagInput!]!) { taggingAddTagsToEntity(guid: $guid, tags: $tags) { errors { message type } } }';
const REMOVE = 'mutation($guid: EntityGuid!, $tagValues: [TaggingTagValueInput!]!) { taggingDeleteTagValuesFromEntity(guid: $guid, tagValues: $tagValues) { errors { message type } } }';
const REMOVE_KEYS = 'mutation($guid: EntityGuid!, $tagKeys: [String!]!) { taggingDeleteTagFromEntity(guid: $guid, tagKeys: $tagKeys) { errors { message type } } }';
const TAGS = 'query($guid: EntityGuid!) { actor { entity(guid: $guid) { tags { key values } } } }';

const primary = sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
const app = primary[0] as SandboxApp;
const tagsOf = async (guid: string): Promise<Array<{ key: string; values: string[] }>> =>
  ((await gql(TAGS, { guid })).data as { actor: { entity: { tags: Array<{ key: string; values: string[] }> } } }).actor.entity.tags;
const written = (field: string): number => sandbox.writes().nerdgraph[field] ?? 0;

describe('sandbox tagging', () => {
  it('seeds user tags as a pure function of the app id, beside the system tags', async () => {
    expect(app.userTags).toEqual(seededUserTags(app));
    const keys = (await tagsOf(app.guid)).map((tag) => tag.key);
    expect(keys[0]).toBe('language');
    expect(keys.at(-1)).toBe('account');
    expect(keys.slice(1, -1)).toEqual(Object.keys(app.userTags ?? {}));
    const categories = new Set(primary.flatMap((a) => Object.keys(a.userTags ?? {})));
    expect([...categories].sort()).toEqual(['Environment', 'Project', 'Region', 'Team', 'Tier']);
  });

  it('adds, reads back, searches, and removes a tag value; each applied mutation counted once', async () => {
    const before = written('taggingAddTagsToEntity');
    expect((await gql(ADD, { guid: app.guid, tags: [{ key: 'Owner', values: ['Jane Doe', 'Ops'] }] })).data).toEqual({ taggingAddTagsToEntity: { errors: [] } });
    expect(written('taggingAddTagsToEntity') - before).toBe(1);
    expect(await tagsOf(app.guid)).toContainEqual({ key: 'Owner', values: ['Jane Doe', 'Ops'] });
    const search = await gql("{ actor { entitySearch(query: \"tags.Owner = 'Ops'\") { results { entities { guid } } } } }");
    expect(JSON.stringify(search.data)).toContain(app.guid);
    // Adding a value again changes nothing (no duplicates).
    await gql(ADD, { guid: app.guid, tags: [{ key: 'Owner', values: ['Ops'] }] });
    expect(app.userTags?.Owner).toEqual(['Jane Doe', 'Ops']);
    expect((await gql(REMOVE, { guid: app.guid, tagValues: [{ key: 'Owner', value: 'Ops' }] })).data).toEqual({ taggingDeleteTagValuesFromEntity: { errors: [] } });
    expect(app.userTags?.Owner).toEqual(['Jane Doe']);
    await gql(REMOVE, { guid: app.guid, tagValues: [{ key: 'Owner', value: 'Jane Doe' }] });
    expect(app.userTags?.Owner).toBeUndefined();
    await gql(ADD, { guid: app.guid, tags: [{ key: 'Scratch', values: ['x'] }] });
    expect((await gql(REMOVE_KEYS, { guid: app.guid, tagKeys: ['Scratch'] })).data).toEqual({ taggingDeleteTagFromEntity: { errors: [] } });
    expect(app.userTags?.Scratch).toBeUndefined();
  });

  it('refuses in the payload, applies nothing and counts nothing', async () => {
    const foreign = sandbox.data.apps.find((a) => a.accountId === SECONDARY_ACCOUNT) as SandboxApp;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ guid: app.guid, tags: [{ key: 'language', values: ['cobol'] }] }, 'INVALID_KEY'],
      [{ guid: app.guid, tags: [{ key: ' ', values: ['x'] }] }, 'INVALID_KEY'],
      // New Relic's own key spaces, as the label rule (isLabelTagKey) has them.
      [{ guid: app.guid, tags: [{ key: 'nr.alertingPolicy', values: ['x'] }] }, 'INVALID_KEY'],
      [{ guid: app.guid, tags: [{ key: 'newrelic.cloudIntegrations', values: ['x'] }] }, 'INVALID_KEY'],
      [{ guid: app.guid, tags: [{ key: 'Ok', values: ['v'.repeat(257)] }] }, 'INVALID_VALUE'],
      [{ guid: entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', 1), tags: [{ key: 'Ok', values: ['x'] }] }, 'NOT_FOUND'],
      [{ guid: 'not a guid', tags: [{ key: 'Ok', values: ['x'] }] }, 'INVALID_ENTITY_GUID'],
      [{ guid: entityGuid(999, 'APM', 'APPLICATION', foreign.id), tags: [{ key: 'Ok', values: ['x'] }] }, 'NOT_PERMITTED'],
    ];
    const before = sandbox.writes().total;
    const tagsBefore = structuredClone(app.userTags);
    for (const [variables, type] of cases) {
      const answer = await gql(ADD, variables);
      expect((answer.data as { taggingAddTagsToEntity: { errors: Array<{ type: string }> } }).taggingAddTagsToEntity.errors.map((e) => e.type), type).toEqual([type]);
    }
    expect(sandbox.writes().total).toBe(before);
    expect(app.userTags).toEqual(tagsBefore);
  });

  it('removing a value the entity does not carry is no error and changes nothing (idempotent)', async () => {
    const tagsBefore = structuredClone(app.userTags);
    const versionBefore = sandbox.data.writes.version;
    expect((await gql(REMOVE, { guid: app.guid, tagValues: [{ key: 'Never', value: 'There' }] })).data).toEqual({ taggingDeleteTagValuesFromEntity: { errors: [] } });
    expect(app.userTags).toEqual(tagsBefore);
    expect(sandbox.data.writes.version).toBe(versionBefore);
  });
});
