/**
 * The sandbox's NerdGraph mutations (sandbox/mutations.ts) over POST /graphql: each
 * mutation's success and error paths, reads after writes, and account scoping. Every document
 * sent here is also checked against the real NerdGraph schema.
 */
import { parse, validate } from 'graphql';
import { beforeEach, describe, expect, it } from 'vitest';
import { entityGuid } from '../../src/v2/ids.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import { hasRealSchema, realNerdGraphSchema } from '../support/schema.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const DAY_MS = 86_400_000;
const DEMO = 'NRAK-SANDBOX-DEMO';
const SECONDARY = 'NRAK-SANDBOX-SECONDARY';
const MULTI = 'NRAK-SANDBOX-MULTI';
const PRIMARY_ID = 1000001;
const SECONDARY_ID = 1000002;

const DOCUMENTS = {
  settingsUpdate: `
    mutation SettingsUpdate($guid: EntityGuid!, $settings: AgentApplicationSettingsUpdateInput!) {
      agentApplicationSettingsUpdate(guid: $guid, settings: $settings) {
        guid
        alias
        apmSettings { alias apmConfig { apdexTarget useServerSideConfig } }
        browserSettings { browserConfig { apdexTarget } browserMonitoring { loader } }
        errors { description errorClass field }
      }
    }`,
  delete: `
    mutation Delete($guid: EntityGuid!) {
      agentApplicationDelete(guid: $guid) { success }
    }`,
  createEvent: `
    mutation CreateEvent($event: ChangeTrackingCreateEventInput!, $rules: ChangeTrackingDataHandlingRules) {
      changeTrackingCreateEvent(changeTrackingEvent: $event, dataHandlingRules: $rules) {
        messages
        changeTrackingEvent {
          changeTrackingId
          category
          type
          categoryAndType
          timestamp
          user
          description
          shortDescription
          groupId
          customAttributes
          entity { guid name accountId ... on ApmApplicationEntityOutline { applicationId } }
          ... on ChangeTrackingDeploymentEvent { version changelog commit deepLink }
        }
      }
    }`,
  createMobile: `
    mutation CreateMobile($accountId: Int!, $name: String!) {
      agentApplicationCreateMobile(accountId: $accountId, name: $name) { accountId applicationToken guid name }
    }`,
  createBrowser: `
    mutation CreateBrowser($accountId: Int!, $name: String!, $settings: AgentApplicationBrowserSettingsInput) {
      agentApplicationCreateBrowser(accountId: $accountId, name: $name, settings: $settings) {
        guid
        name
        settings { cookiesEnabled distributedTracingEnabled loaderScript loaderType }
      }
    }`,
  literalAttributes: `
    mutation LiteralAttributes($query: String!) {
      changeTrackingCreateEvent(
        changeTrackingEvent: {
          categoryAndTypeData: { kind: { category: "Deployment", type: "Basic" }, categoryFields: { deployment: { version: "lit-1" } } }
          entitySearch: { query: $query }
          customAttributes: { environment: "staging", attempt: 2, tags: ["a", "b"] }
        }
      ) {
        changeTrackingEvent { customAttributes ... on ChangeTrackingDeploymentEvent { version } }
      }
    }`,
  renameThenDeploy: `
    mutation RenameThenDeploy($guid: EntityGuid!, $settings: AgentApplicationSettingsUpdateInput!, $event: ChangeTrackingCreateEventInput!) {
      agentApplicationSettingsUpdate(guid: $guid, settings: $settings) { alias errors { errorClass } }
      changeTrackingCreateEvent(changeTrackingEvent: $event) { changeTrackingEvent { entity { guid name } } }
    }`,
  entity: `
    query Entity($guid: EntityGuid!, $guids: [EntityGuid]!) {
      actor {
        entity(guid: $guid) {
          guid
          name
          ... on ApmApplicationEntity { settings { apdexTarget serverSideConfig } apmBrowserSummary { pageLoadThroughput } }
        }
        entities(guids: $guids) { guid name }
      }
    }`,
  search: `
    query Search($query: String) {
      actor {
        entitySearch(query: $query) {
          count
          results { entities { guid name accountId } }
        }
      }
    }`,
  deployments: `
    query Deployments($accountId: Int!, $nrql: Nrql!) {
      actor { account(id: $accountId) { nrql(query: $nrql) { results } } }
    }`,
} as const;

type DocumentName = keyof typeof DOCUMENTS;

interface GraphqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: Record<string, unknown>;
}

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: GraphqlError[];
}

let sandbox: Sandbox;

beforeEach(() => {
  // Writes are read straight back through NerdGraph here: no ingest lag (test/sandbox/ingest.test.ts has it).
  sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED, behave: { ingestLagMs: 0 } });
});

async function post(name: DocumentName, variables: Record<string, unknown>, apiKey = DEMO): Promise<GraphqlBody> {
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': apiKey },
    body: JSON.stringify({ query: DOCUMENTS[name], variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphqlBody;
}

/** The one field a mutation document returns, asserting there were no GraphQL errors. */
async function ok<T>(name: DocumentName, variables: Record<string, unknown>, apiKey = DEMO): Promise<T> {
  const body = await post(name, variables, apiKey);
  expect(body.errors).toBeUndefined();
  return Object.values(body.data ?? {})[0] as T;
}

/** The GraphQL error of a failed mutation: its field is null and one error names it. */
async function failure(name: DocumentName, variables: Record<string, unknown>, apiKey = DEMO): Promise<{ message: string; errorClass: unknown }> {
  const body = await post(name, variables, apiKey);
  expect(Object.values(body.data ?? {})).toEqual([null]);
  expect(body.errors).toHaveLength(1);
  const [error] = body.errors as [GraphqlError];
  return { message: error.message, errorClass: error.extensions?.errorClass };
}

function apps(predicate: (app: SandboxApp) => boolean): SandboxApp[] {
  return sandbox.data.apps.filter(predicate);
}

function firstApp(predicate: (app: SandboxApp) => boolean): SandboxApp {
  const app = apps(predicate)[0];
  if (!app) throw new Error('no app fits the test');
  return app;
}

const idle = (accountId = PRIMARY_ID) => firstApp((app) => app.accountId === accountId && !app.reporting);
const reporting = (accountId = PRIMARY_ID) => firstApp((app) => app.accountId === accountId && app.reporting);

async function entityName(guid: string, apiKey = DEMO): Promise<string | null> {
  const actor = (await ok<{ entity: { name: string } | null }>('entity', { guid, guids: [guid] }, apiKey)).entity;
  return actor?.name ?? null;
}

async function searchNames(query: string, apiKey = DEMO): Promise<string[]> {
  const actor = await ok<{ entitySearch: { results: { entities: Array<{ name: string }> } } }>('search', { query }, apiKey);
  return actor.entitySearch.results.entities.map((entity) => entity.name);
}

function deploymentEvent(overrides: Record<string, unknown> = {}, deployment: Record<string, unknown> = { version: '1.4.2' }): Record<string, unknown> {
  return {
    categoryAndTypeData: { kind: { category: 'Deployment', type: 'Basic' }, categoryFields: { deployment } },
    entitySearch: { query: `id = '${idle().guid}'` },
    ...overrides,
  };
}

function eventsQuery(guid: string): string {
  return (
    `SELECT timestamp, changeTrackingId, deploymentId, category, type, version, changelog, description, user ` +
    `FROM Deployment, ChangeTrackingEvent WHERE entity.guid = '${guid}' AND (category = 'Deployment' OR category IS NULL) ` +
    `SINCE ${FIXED - 400 * DAY_MS} UNTIL ${FIXED + DAY_MS + 1} LIMIT MAX`
  );
}

async function eventRows(guid: string, accountId = PRIMARY_ID, apiKey = DEMO): Promise<Array<Record<string, unknown>>> {
  const actor = await ok<{ account: { nrql: { results: Array<Record<string, unknown>> } } }>('deployments', { accountId, nrql: eventsQuery(guid) }, apiKey);
  return actor.account.nrql.results;
}

describe.skipIf(!hasRealSchema)('the documents these tests send', () => {
  it.each(Object.keys(DOCUMENTS))('%s validates against the real NerdGraph schema', (name) => {
    const errors = validate(realNerdGraphSchema(), parse(DOCUMENTS[name as DocumentName]));
    expect(errors.map((error) => error.message)).toEqual([]);
  });
});

describe('agentApplicationSettingsUpdate', () => {
  it('applies alias, apdex targets, server-side config and browser monitoring, and answers the new settings', async () => {
    const app = firstApp((candidate) => candidate.accountId === PRIMARY_ID && candidate.browserLoader === 'NONE');
    const before = sandbox.data.writes.version;
    const result = await ok('settingsUpdate', {
      guid: app.guid,
      settings: {
        alias: 'Renamed Checkout',
        apmConfig: { apdexTarget: 0.25, useServerSideConfig: true },
        browserMonitoring: { loader: 'PRO' },
        browserConfig: { apdexTarget: 3.5 },
      },
    });
    expect(result).toEqual({
      guid: app.guid,
      alias: 'Renamed Checkout',
      apmSettings: { alias: 'Renamed Checkout', apmConfig: { apdexTarget: 0.25, useServerSideConfig: true } },
      // Any loader but NONE turns browser monitoring on; the app keeps the loader given.
      browserSettings: { browserConfig: { apdexTarget: 3.5 }, browserMonitoring: { loader: 'PRO' } },
      errors: [],
    });
    expect(sandbox.data.writes.version).toBeGreaterThan(before);
    expect(app).toMatchObject({ name: 'Renamed Checkout', apdexTarget: 0.25, serverSideConfig: true, browser: { apdexTarget: 3.5 } });
  });

  it('turns browser monitoring off with loader NONE', async () => {
    const app = firstApp((candidate) => candidate.accountId === PRIMARY_ID && candidate.browser !== null);
    const result = await ok<{ browserSettings: unknown }>('settingsUpdate', { guid: app.guid, settings: { browserMonitoring: { loader: 'NONE' } } });
    expect(result.browserSettings).toEqual({ browserConfig: { apdexTarget: null }, browserMonitoring: { loader: 'NONE' } });
    expect(app.browser).toBeNull();
    const entity = (await ok<{ entity: { apmBrowserSummary: unknown } }>('entity', { guid: app.guid, guids: [] })).entity;
    expect(entity.apmBrowserSummary).toBeNull();
  });

  it('accepts an apdex target of exactly 100 and leaves what is not given', async () => {
    const app = idle();
    const name = app.name;
    const result = await ok<{ alias: string; apmSettings: unknown }>('settingsUpdate', { guid: app.guid, settings: { apmConfig: { apdexTarget: 100 } } });
    expect(result.alias).toBe(name);
    expect(result.apmSettings).toEqual({ alias: name, apmConfig: { apdexTarget: 100, useServerSideConfig: app.serverSideConfig } });
  });

  it('answers NOT_FOUND in the payload for an unknown GUID', async () => {
    for (const guid of [entityGuid(PRIMARY_ID, 'APM', 'APPLICATION', 1), 'not-a-guid']) {
      const result = await ok('settingsUpdate', { guid, settings: { alias: 'x' } });
      expect(result).toEqual({
        guid,
        alias: null,
        apmSettings: null,
        browserSettings: null,
        errors: [{ errorClass: 'NOT_FOUND', field: 'guid', description: `Entity not found: ${guid}` }],
      });
    }
  });

  it('answers ACCESS_DENIED for a GUID of an account the key cannot see (existing or not), and writes nothing', async () => {
    const foreign = idle(SECONDARY_ID);
    const before = sandbox.data.writes.version;
    for (const guid of [foreign.guid, entityGuid(SECONDARY_ID, 'APM', 'APPLICATION', 1)]) {
      const result = await ok<{ errors: unknown }>('settingsUpdate', { guid, settings: { alias: 'Hijacked' } });
      expect(result.errors).toEqual([
        { errorClass: 'ACCESS_DENIED', field: 'guid', description: `You do not have access to entities of account ${SECONDARY_ID}` },
      ]);
    }
    expect(foreign.name).not.toBe('Hijacked');
    expect(sandbox.data.writes.version).toBe(before);
    // The key that sees the account may write.
    const result = await ok<{ alias: string; errors: unknown[] }>('settingsUpdate', { guid: foreign.guid, settings: { alias: 'Secondary Renamed' } }, SECONDARY);
    expect(result).toMatchObject({ alias: 'Secondary Renamed', errors: [] });
  });

  it.each([
    [{ apmConfig: { apdexTarget: 0 } }, ['apmConfig.apdexTarget']],
    [{ apmConfig: { apdexTarget: -1 } }, ['apmConfig.apdexTarget']],
    [{ apmConfig: { apdexTarget: 100.01 } }, ['apmConfig.apdexTarget']],
    [{ browserConfig: { apdexTarget: 0 } }, ['browserConfig.apdexTarget']],
    [{ alias: '' }, ['alias']],
    [{ alias: '   ' }, ['alias']],
    [{ alias: ' ', apmConfig: { apdexTarget: 0 }, browserConfig: { apdexTarget: 101 } }, ['alias', 'apmConfig.apdexTarget', 'browserConfig.apdexTarget']],
  ])('answers INVALID_INPUT for %j and applies nothing', async (settings, fields) => {
    const app = idle();
    const snapshot = JSON.stringify(app);
    const before = sandbox.data.writes.version;
    const result = await ok<{ alias: unknown; errors: Array<{ errorClass: string; field: string; description: string }> }>('settingsUpdate', {
      guid: app.guid,
      settings: { ...settings, browserMonitoring: { loader: 'SPA' } },
    });
    expect(result.alias).toBeNull();
    expect(result.errors.map((error) => error.field)).toEqual(fields);
    expect(result.errors.every((error) => error.errorClass === 'INVALID_INPUT' && error.description.length > 0)).toBe(true);
    expect(JSON.stringify(app)).toBe(snapshot);
    expect(sandbox.data.writes.version).toBe(before);
  });

  it('renames what every read shows: entity, entities, entitySearch by name, in name order', async () => {
    // Without a browser side (browser-loader.ts), so a name search finds the app alone.
    const app = firstApp((candidate) => candidate.accountId === PRIMARY_ID && !candidate.reporting && candidate.browserLoader === 'NONE');
    const oldName = app.name;
    await ok('settingsUpdate', { guid: app.guid, settings: { alias: 'AAA First By Name' } });
    expect(await entityName(app.guid)).toBe('AAA First By Name');
    const body = await post('entity', { guid: app.guid, guids: [app.guid] });
    expect((body.data as { actor: { entities: unknown } }).actor.entities).toEqual([{ guid: app.guid, name: 'AAA First By Name' }]);
    expect(await searchNames(`name = 'AAA First By Name'`)).toEqual(['AAA First By Name']);
    expect(await searchNames(`name = '${oldName.replace(/'/g, "\\'")}'`)).toEqual([]);
    expect(await searchNames(`name LIKE 'first by'`)).toEqual(['AAA First By Name']);
    const all = await searchNames(`accountId = ${PRIMARY_ID}`);
    expect(all[0]).toBe('AAA First By Name');
    expect(all).toEqual([...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('runs a document’s mutations in order: a rename, then a deployment found by the new name', async () => {
    const app = idle();
    const body = await post('renameThenDeploy', {
      guid: app.guid,
      settings: { alias: 'Fresh Name' },
      event: deploymentEvent({ entitySearch: { query: "name = 'Fresh Name'" } }),
    });
    expect(body).toEqual({
      data: {
        agentApplicationSettingsUpdate: { alias: 'Fresh Name', errors: [] },
        changeTrackingCreateEvent: { changeTrackingEvent: { entity: { guid: app.guid, name: 'Fresh Name' } } },
      },
    });
  });
});

describe('agentApplicationDelete', () => {
  it('removes an application that is not reporting from every read', async () => {
    const app = idle();
    const apmApps = `domain = 'APM' AND type = 'APPLICATION' AND accountId = ${PRIMARY_ID}`;
    const countBefore = (await searchNames(apmApps)).length;
    expect(await ok('delete', { guid: app.guid })).toEqual({ success: true });
    expect(sandbox.data.apps).not.toContain(app);
    const body = await post('entity', { guid: app.guid, guids: [app.guid] });
    expect(body).toEqual({ data: { actor: { entity: null, entities: [null] } } });
    const names = await searchNames(apmApps);
    expect(names).toHaveLength(countBefore - 1);
    expect(names).not.toContain(app.name);
    expect(await searchNames(`id = '${app.guid}'`)).toEqual([]);
    expect(await eventRows(app.guid)).toEqual([]);
    // Deleting it again: it is gone.
    expect(await failure('delete', { guid: app.guid })).toEqual({ message: 'Entity not found', errorClass: 'NOT_FOUND' });
  });

  it('refuses an application that is reporting', async () => {
    const app = reporting();
    expect(await failure('delete', { guid: app.guid })).toEqual({
      message: 'Cannot delete an application that is actively reporting data',
      errorClass: 'INVALID_INPUT',
    });
    expect(sandbox.data.apps).toContain(app);
  });

  it('answers Entity not found for unknown GUIDs and for apps of accounts the key cannot see', async () => {
    const foreign = idle(SECONDARY_ID);
    for (const guid of [entityGuid(PRIMARY_ID, 'APM', 'APPLICATION', 1), 'bogus', foreign.guid]) {
      expect(await failure('delete', { guid })).toEqual({ message: 'Entity not found', errorClass: 'NOT_FOUND' });
    }
    expect(sandbox.data.apps).toContain(foreign);
    expect(await ok('delete', { guid: foreign.guid }, SECONDARY)).toEqual({ success: true });
    expect(sandbox.data.apps).not.toContain(foreign);
  });
});

describe('changeTrackingCreateEvent', () => {
  it('records a deployment for the entity id = GUID names, and answers the event', async () => {
    const app = idle();
    const result = await ok<{ messages: string[]; changeTrackingEvent: Record<string, unknown> }>('createEvent', {
      event: deploymentEvent(
        {
          entitySearch: { query: `id = '${app.guid}'` },
          description: 'Release 1.4.2',
          shortDescription: '1.4.2',
          user: 'deploy-bot',
          groupId: 'release-train-7',
          timestamp: FIXED - 60_000,
          customAttributes: { environment: 'production', canary: false },
        },
        { version: '1.4.2', changelog: 'https://example.invalid/changes', commit: 'abc123', deepLink: 'https://example.invalid/build/77' },
      ),
      rules: { validationFlags: ['FAIL_ON_FIELD_LENGTH'] },
    });
    expect(result.messages).toEqual([]);
    expect(result.changeTrackingEvent).toEqual({
      changeTrackingId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/),
      category: 'Deployment',
      type: 'Basic',
      categoryAndType: 'DEPLOYMENT__BASIC',
      timestamp: FIXED - 60_000,
      user: 'deploy-bot',
      description: 'Release 1.4.2',
      shortDescription: '1.4.2',
      groupId: 'release-train-7',
      customAttributes: { environment: 'production', canary: false },
      entity: { guid: app.guid, name: app.name, accountId: PRIMARY_ID, applicationId: app.id },
      version: '1.4.2',
      changelog: 'https://example.invalid/changes',
      commit: 'abc123',
      deepLink: 'https://example.invalid/build/77',
    });
    const recorded = deploymentsOf(sandbox.data, app).find((deployment) => deployment.changeTrackingId === result.changeTrackingEvent.changeTrackingId);
    expect(recorded).toMatchObject({
      eventType: 'ChangeTrackingEvent',
      revision: '1.4.2',
      changelog: 'https://example.invalid/changes',
      description: 'Release 1.4.2',
      user: 'deploy-bot',
      timestamp: FIXED - 60_000,
    });
  });

  it('shows the event in the NRQL deployment query, newest first, with the seeded Deployment rows', async () => {
    const app = firstApp((candidate) => candidate.accountId === PRIMARY_ID && deploymentsOf(sandbox.data, candidate).length >= 2);
    const seeded = deploymentsOf(sandbox.data, app).map((deployment) => deployment.changeTrackingId);
    const event = (
      await ok<{ changeTrackingEvent: { changeTrackingId: string } }>('createEvent', {
        event: deploymentEvent({ entitySearch: { query: `id = '${app.guid}'` }, user: 'ci' }, { version: '9.9.9' }),
      })
    ).changeTrackingEvent;
    const rows = await eventRows(app.guid);
    expect(rows[0]).toEqual({
      timestamp: FIXED,
      changeTrackingId: event.changeTrackingId,
      deploymentId: null,
      category: 'Deployment',
      type: 'Basic',
      version: '9.9.9',
      changelog: null,
      description: null,
      user: 'ci',
    });
    expect(rows.slice(1).map((row) => row.deploymentId)).toEqual(seeded);
    expect(rows.slice(1).every((row) => row.category === null && row.changeTrackingId === null && row.type === null)).toBe(true);
    const timestamps = rows.map((row) => row.timestamp as number);
    expect(timestamps).toEqual([...timestamps].sort((a, b) => b - a));
  });

  it("finds the entity by domainId = '<id>' AND domain = 'APM'", async () => {
    const app = idle();
    const result = await ok<{ changeTrackingEvent: { entity: { guid: string } } }>('createEvent', {
      event: deploymentEvent({ entitySearch: { query: `domainId = '${app.id}' AND domain = 'APM'` } }),
    });
    expect(result.changeTrackingEvent.entity.guid).toBe(app.guid);
  });

  it.each([
    ['DEPLOYMENT', 'BASIC', 'Basic', 'DEPLOYMENT__BASIC'],
    ['deployment', 'basic', 'Basic', 'DEPLOYMENT__BASIC'],
    ['Deployment', 'Blue Green', 'Blue Green', 'DEPLOYMENT__BLUE_GREEN'],
    ['Deployment', 'blue_green', 'Blue Green', 'DEPLOYMENT__BLUE_GREEN'],
    ['Deployment', 'Canary', 'Canary', 'DEPLOYMENT__CANARY'],
    ['Deployment', 'ROLLING', 'Rolling', 'DEPLOYMENT__ROLLING'],
    ['Deployment', 'shadow', 'Shadow', 'DEPLOYMENT__SHADOW'],
    ['Deployment', 'Other', 'Other', 'DEPLOYMENT__OTHER'],
  ])('accepts category %s and type %s', async (category, type, canonical, categoryAndType) => {
    const app = idle();
    const result = await ok<{ changeTrackingEvent: { type: string; categoryAndType: string; changeTrackingId: string } }>('createEvent', {
      event: { ...deploymentEvent(), categoryAndTypeData: { kind: { category, type }, categoryFields: { deployment: { version: 'v' } } } },
    });
    expect(result.changeTrackingEvent).toMatchObject({ type: canonical, categoryAndType });
    const row = (await eventRows(app.guid)).find((candidate) => candidate.changeTrackingId === result.changeTrackingEvent.changeTrackingId);
    expect(row).toMatchObject({ category: 'Deployment', type: canonical });
  });

  it('accepts a custom deployment type only with ALLOW_CUSTOM_CATEGORY_OR_TYPE', async () => {
    const event = { ...deploymentEvent(), categoryAndTypeData: { kind: { category: 'Deployment', type: 'Big Bang' }, categoryFields: { deployment: { version: 'v' } } } };
    expect(await failure('createEvent', { event })).toEqual({
      message: "Invalid type 'Big Bang' for category 'Deployment': expected one of Basic, Blue Green, Canary, Rolling, Shadow, Other, or set ALLOW_CUSTOM_CATEGORY_OR_TYPE",
      errorClass: 'INVALID_INPUT',
    });
    const result = await ok<{ changeTrackingEvent: unknown }>('createEvent', { event, rules: { validationFlags: ['ALLOW_CUSTOM_CATEGORY_OR_TYPE'] } });
    expect(result.changeTrackingEvent).toMatchObject({ category: 'Deployment', type: 'Big Bang', categoryAndType: 'CUSTOMER_DEFINED__CUSTOM' });
  });

  it.each([
    ['Release', 'Basic', "Invalid category 'Release': not a known change-tracking category; set ALLOW_CUSTOM_CATEGORY_OR_TYPE to use a custom one"],
    ['Feature Flag', 'Basic', "The sandbox records Deployment change-tracking events only, not category 'Feature Flag'"],
  ])('refuses category %s / type %s', async (category, type, message) => {
    const event = { ...deploymentEvent(), categoryAndTypeData: { kind: { category, type }, categoryFields: { deployment: { version: 'v' } } } };
    expect(await failure('createEvent', { event })).toEqual({ message, errorClass: 'INVALID_INPUT' });
  });

  it('requires categoryFields.deployment.version', async () => {
    const message = { message: 'categoryFields.deployment.version is required for the Deployment category', errorClass: 'INVALID_INPUT' };
    const withoutFields = { ...deploymentEvent(), categoryAndTypeData: { kind: { category: 'Deployment', type: 'Basic' } } };
    expect(await failure('createEvent', { event: withoutFields })).toEqual(message);
    expect(await failure('createEvent', { event: deploymentEvent({}, { version: '  ' }) })).toEqual(message);
  });

  it('takes now as the default timestamp and accepts exactly 24 hours either side', async () => {
    for (const timestamp of [undefined, FIXED - DAY_MS, FIXED + DAY_MS]) {
      const result = await ok<{ changeTrackingEvent: { timestamp: number } }>('createEvent', { event: deploymentEvent({ timestamp }) });
      expect(result.changeTrackingEvent.timestamp).toBe(timestamp ?? FIXED);
    }
  });

  it.each([FIXED - DAY_MS - 1, FIXED + DAY_MS + 1, Math.floor(FIXED / 1000)])('refuses the timestamp %i', async (timestamp) => {
    const app = idle();
    const before = deploymentsOf(sandbox.data, app).length;
    expect(await failure('createEvent', { event: deploymentEvent({ timestamp }) })).toEqual({
      message: 'timestamp can not be more than 24 hours in the past or future. Make sure to use epoch milliseconds for timestamp.',
      errorClass: 'INVALID_INPUT',
    });
    expect(deploymentsOf(sandbox.data, app)).toHaveLength(before);
  });

  it('needs the entity search to match exactly one visible application', async () => {
    const foreign = idle(SECONDARY_ID);
    const cases: Array<[string, string]> = [
      [`id = '${entityGuid(PRIMARY_ID, 'APM', 'APPLICATION', 1)}'`, 'No entity found for entitySearch query: '],
      [`id = '${foreign.guid}'`, 'No entity found for entitySearch query: '],
      ["domain = 'APM'", 'entitySearch query must match exactly one entity, but matched more than one: '],
    ];
    const before = sandbox.data.writes.version;
    for (const [query, prefix] of cases) {
      expect(await failure('createEvent', { event: deploymentEvent({ entitySearch: { query } }) })).toEqual({
        message: `${prefix}${query}`,
        errorClass: 'INVALID_INPUT',
      });
    }
    expect(await failure('createEvent', { event: deploymentEvent({ entitySearch: { query: 'id = ' } }) })).toEqual({
      message: 'Invalid query: unexpected end of query (expected a quoted string, an integer, true or false) at position 5',
      errorClass: 'INVALID_INPUT',
    });
    expect(sandbox.data.writes.version).toBe(before);
    // The secondary account's key sees that app.
    const result = await ok<{ changeTrackingEvent: { entity: { accountId: number } } }>(
      'createEvent',
      { event: deploymentEvent({ entitySearch: { query: `id = '${foreign.guid}'` } }) },
      SECONDARY,
    );
    expect(result.changeTrackingEvent.entity.accountId).toBe(SECONDARY_ID);
    expect(await eventRows(foreign.guid, SECONDARY_ID, SECONDARY)).toHaveLength(deploymentsOf(sandbox.data, foreign).length);
  });

  it('counts matches in every account the key sees', async () => {
    const primary = idle();
    const twin = `Twin ${primary.id}`;
    await ok('settingsUpdate', { guid: primary.guid, settings: { alias: twin } });
    await ok('settingsUpdate', { guid: idle(SECONDARY_ID).guid, settings: { alias: twin } }, SECONDARY);
    const event = deploymentEvent({ entitySearch: { query: `name = '${twin}'` } });
    expect((await ok<{ changeTrackingEvent: { entity: { guid: string } } }>('createEvent', { event })).changeTrackingEvent.entity.guid).toBe(primary.guid);
    expect((await failure('createEvent', { event }, MULTI)).message).toMatch(/^entitySearch query must match exactly one entity/);
  });

  it('takes customAttributes as an object, literal or variable, and refuses anything else', async () => {
    const literal = await ok<{ changeTrackingEvent: unknown }>('literalAttributes', { query: `id = '${idle().guid}'` });
    expect(literal.changeTrackingEvent).toEqual({ customAttributes: { environment: 'staging', attempt: 2, tags: ['a', 'b'] }, version: 'lit-1' });
    for (const customAttributes of ['staging', [1], 3]) {
      const body = await post('createEvent', { event: deploymentEvent({ customAttributes }) });
      expect(body.data).toBeUndefined();
      expect(body.errors?.[0]?.message).toMatch(/^Variable "\$event" got invalid value .* ChangeTrackingRawCustomAttributesMap cannot represent/);
    }
  });

  it('trims text of 4,096 characters or more with a message, or refuses it with FAIL_ON_FIELD_LENGTH', async () => {
    const long = 'x'.repeat(5000);
    const trimmed = await ok<{ messages: string[]; changeTrackingEvent: { changelog: string; description: string } }>('createEvent', {
      event: deploymentEvent({ description: long }, { version: '1', changelog: long }),
    });
    expect(trimmed.changeTrackingEvent.changelog).toBe(`${'x'.repeat(4094)}…`);
    expect(trimmed.changeTrackingEvent.description).toHaveLength(4095);
    expect(trimmed.messages).toEqual([
      'changelog was longer than 4095 characters and has been trimmed',
      'description was longer than 4095 characters and has been trimmed',
    ]);
    expect(
      await failure('createEvent', { event: deploymentEvent({}, { version: '1', changelog: long }), rules: { validationFlags: ['FAIL_ON_FIELD_LENGTH'] } }),
    ).toEqual({ message: 'changelog must be shorter than 4096 characters', errorClass: 'INVALID_INPUT' });
  });
});

describe('agentApplicationCreateMobile and agentApplicationCreateBrowser', () => {
  it('creates a mobile application', async () => {
    const result = await ok<{ accountId: number; applicationToken: string; guid: string; name: string }>('createMobile', { accountId: PRIMARY_ID, name: 'Shop iOS' });
    const created = sandbox.data.writes.createdApps.at(-1);
    expect(created).toMatchObject({ kind: 'MOBILE', accountId: PRIMARY_ID, name: 'Shop iOS' });
    expect(result).toEqual({ accountId: PRIMARY_ID, applicationToken: created?.applicationToken, guid: created?.guid, name: 'Shop iOS' });
    expect(Buffer.from(result.guid, 'base64url').toString()).toBe(`${PRIMARY_ID}|MOBILE|APPLICATION|${created?.id}`);
  });

  it('creates a browser application with NerdGraph’s default settings, or the ones given', async () => {
    const defaults = await ok<{ guid: string; name: string; settings: Record<string, unknown> }>('createBrowser', { accountId: PRIMARY_ID, name: 'shop.example.invalid' });
    const created = sandbox.data.writes.createdApps.at(-1);
    expect(created).toMatchObject({ kind: 'BROWSER', accountId: PRIMARY_ID, name: 'shop.example.invalid' });
    expect(defaults).toEqual({
      guid: created?.guid,
      name: 'shop.example.invalid',
      settings: { cookiesEnabled: true, distributedTracingEnabled: true, loaderScript: created?.loaderScript, loaderType: 'SPA' },
    });
    expect(defaults.settings.loaderScript).toContain(created?.browserMonitoringKey);
    const lite = await ok<{ settings: unknown }>('createBrowser', {
      accountId: PRIMARY_ID,
      name: 'lite.example.invalid',
      settings: { cookiesEnabled: false, distributedTracingEnabled: false, loaderType: 'LITE' },
    });
    expect(lite.settings).toEqual({ cookiesEnabled: false, distributedTracingEnabled: false, loaderScript: expect.stringContaining('NREUM'), loaderType: 'LITE' });
  });

  it.each(['createMobile', 'createBrowser'] as const)('%s: refuses accounts the key cannot see, and blank names', async (document) => {
    for (const accountId of [SECONDARY_ID, 999]) {
      expect(await failure(document, { accountId, name: 'App' })).toEqual({
        message: `You are not authorized to query account ${accountId}`,
        errorClass: 'FORBIDDEN',
      });
    }
    expect(await failure(document, { accountId: PRIMARY_ID, name: ' ' })).toEqual({ message: 'name must not be blank', errorClass: 'INVALID_INPUT' });
    expect(sandbox.data.writes.createdApps).toEqual([]);
    const created = await ok<{ name: string }>(document, { accountId: SECONDARY_ID, name: 'Secondary App' }, SECONDARY);
    expect(created.name).toBe('Secondary App');
    expect(sandbox.data.writes.createdApps).toHaveLength(1);
  });

  it('does not make created applications searchable as APM applications', async () => {
    const query = `domain = 'APM' AND type = 'APPLICATION' AND accountId = ${PRIMARY_ID}`;
    const before = await searchNames(query);
    await ok('createMobile', { accountId: PRIMARY_ID, name: 'Shop Android' });
    expect(await searchNames(query)).toEqual(before);
    expect(await searchNames("domain = 'MOBILE' AND name = 'Shop Android'")).toEqual(['Shop Android']);
  });
});

describe('mutations and the gateway’s other keys', () => {
  it('needs a valid API key', async () => {
    const response = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'NRAK-NOPE' },
      body: JSON.stringify({ query: DOCUMENTS.delete, variables: { guid: idle().guid } }),
    });
    expect(response.status).toBe(401);
    expect(sandbox.data.apps).toContain(idle());
  });

  it('lets a key that sees both accounts write to both', async () => {
    const primary = idle();
    const secondary = idle(SECONDARY_ID);
    for (const app of [primary, secondary]) {
      expect(await ok<{ errors: unknown[] }>('settingsUpdate', { guid: app.guid, settings: { alias: `Multi ${app.id}` } }, MULTI)).toMatchObject({ errors: [] });
      expect(await entityName(app.guid, MULTI)).toBe(`Multi ${app.id}`);
    }
    expect(await entityName(secondary.guid)).toBeNull();
  });
});
