import { describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT } from '../support/harness.ts';

/**
 * The sandbox's ingest lag (behaviour `ingestLagMs`, sandbox/ingest.ts): a change tracking event
 * reaches NRQL, and a tag write reaches entity search, only once the lag has passed on the
 * ingest clock (stepped by hand here; real time by default, whatever the frozen `now`). The
 * legacy face, v2's own database, shows every write at once.
 */
const LAG = 3_000;

function world(ingestLagMs = LAG) {
  let ingestAt = 1_000_000;
  const sandbox = createSandbox({ seed: 5, apmApps: 20, now: () => FIXED_NOW, behave: { ingestLagMs }, ingestClock: () => ingestAt });
  const app = sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT) as SandboxApp;
  const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY }, body: JSON.stringify({ query, variables }) });
    const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
    expect(body.errors).toBeUndefined();
    return body.data as Record<string, unknown>;
  };
  const legacy = async (path: string): Promise<string> => {
    const response = await sandbox.app.request(path, { headers: { 'x-api-key': DEMO_KEY } });
    expect(response.status).toBe(200);
    return response.text();
  };
  return { sandbox, app, gql, legacy, step: (ms: number) => void (ingestAt += ms) };
}

const CREATE_EVENT = `mutation($event: ChangeTrackingCreateEventInput!) {
  changeTrackingCreateEvent(changeTrackingEvent: $event) { changeTrackingEvent { changeTrackingId } }
}`;
const NRQL = 'query($accountId: Int!, $nrql: Nrql!) { actor { account(id: $accountId) { nrql(query: $nrql) { results } } } }';
const ADD = 'mutation($guid: EntityGuid!, $tags: [TaggingTagInput!]!) { taggingAddTagsToEntity(guid: $guid, tags: $tags) { errors { type } } }';
const REMOVE = 'mutation($guid: EntityGuid!, $tagValues: [TaggingTagValueInput!]!) { taggingDeleteTagValuesFromEntity(guid: $guid, tagValues: $tagValues) { errors { type } } }';
const SEARCH = 'query($query: String!) { actor { entitySearch(query: $query) { results { entities { guid tags { key values } } } } } }';

describe('sandbox ingest lag', () => {
  it('shows a change tracking event to NRQL only after the lag; the legacy face at once', async () => {
    const { app, gql, legacy, step } = world();
    const created = (await gql(CREATE_EVENT, {
      event: { entitySearch: { query: `id = '${app.guid}'` }, categoryAndTypeData: { kind: { category: 'Deployment', type: 'Basic' }, categoryFields: { deployment: { version: 'lag-1' } } }, timestamp: FIXED_NOW - 60_000 },
    })) as { changeTrackingCreateEvent: { changeTrackingEvent: { changeTrackingId: string } } };
    const id = created.changeTrackingCreateEvent.changeTrackingEvent.changeTrackingId;
    const nrql = `SELECT * FROM Deployment, ChangeTrackingEvent WHERE entity.guid = '${app.guid}' SINCE ${FIXED_NOW - 86_400_000} UNTIL ${FIXED_NOW + 60_000} LIMIT MAX`;
    const ids = async (): Promise<unknown[]> =>
      ((await gql(NRQL, { accountId: app.accountId, nrql })) as { actor: { account: { nrql: { results: Array<{ changeTrackingId?: unknown }> } } } }).actor.account.nrql.results.map((row) => row.changeTrackingId);
    expect(await ids()).not.toContain(id);
    // v2's own database: its deployments list has it already.
    expect(await legacy(`/v2/applications/${app.id}/deployments.json`)).toContain('lag-1');
    step(LAG - 1);
    expect(await ids()).not.toContain(id);
    step(1);
    expect(await ids()).toContain(id);
  });

  it('shows a tag write to entity search only after the lag, a removal too; the legacy face at once', async () => {
    const { app, gql, legacy, step } = world();
    const found = async (query: string): Promise<boolean> =>
      JSON.stringify(await gql(SEARCH, { query })).includes(app.guid);
    expect(await gql(ADD, { guid: app.guid, tags: [{ key: 'Lagging', values: ['yes'] }] })).toEqual({ taggingAddTagsToEntity: { errors: [] } });
    expect(await found("tags.Lagging = 'yes'")).toBe(false);
    expect(await legacy('/v2/labels.json')).toContain('Lagging:yes');
    step(LAG);
    expect(await found("tags.Lagging = 'yes'")).toBe(true);

    await gql(REMOVE, { guid: app.guid, tagValues: [{ key: 'Lagging', value: 'yes' }] });
    expect(await legacy('/v2/labels.json')).not.toContain('Lagging:yes');
    // The removal is not indexed yet: the search still finds the tag, and the entity still shows it.
    expect(await found("tags.Lagging = 'yes'")).toBe(true);
    const entityTags = async (): Promise<string> => JSON.stringify(await gql('query($guid: EntityGuid!) { actor { entity(guid: $guid) { tags { key values } } } }', { guid: app.guid }));
    expect(await entityTags()).toContain('Lagging');
    step(LAG);
    expect(await found("tags.Lagging = 'yes'")).toBe(false);
    expect(await entityTags()).not.toContain('Lagging');
  });

  it('with ingestLagMs 0, shows every write at once', async () => {
    const { app, gql } = world(0);
    await gql(ADD, { guid: app.guid, tags: [{ key: 'Lagging', values: ['no'] }] });
    expect(JSON.stringify(await gql(SEARCH, { query: "tags.Lagging = 'no'" }))).toContain(app.guid);
  });
});
