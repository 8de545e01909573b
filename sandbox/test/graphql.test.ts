import { describe, expect, it } from 'vitest';
import type { SandboxApp } from '../model.ts';
import { createSandbox } from '../server.ts';

const NOW = 1_750_000_000_000;
const sandbox = createSandbox({ seed: 11, apmApps: 450, now: () => NOW });
const DEMO = 'NRAK-SANDBOX-DEMO';
const MULTI = 'NRAK-SANDBOX-MULTI';

interface GraphqlResponse<T = Record<string, unknown>> {
  status: number;
  body: { data?: T; errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }> };
}

async function post<T = Record<string, unknown>>(
  query: string,
  variables?: Record<string, unknown>,
  apiKey: string | null = DEMO,
): Promise<GraphqlResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey !== null) headers['api-key'] = apiKey;
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as GraphqlResponse<T>['body'] };
}

const SEARCH = `
  query Search($query: String, $cursor: String, $sort: [SortCriterionWithDirection], $sortBy: [EntitySearchSortCriteria], $limit: Int) {
    actor {
      entitySearch(query: $query, sortByWithDirection: $sort, sortBy: $sortBy, options: { limit: $limit }) {
        count
        query
        results(cursor: $cursor) {
          nextCursor
          entities { guid name accountId reporting ... on ApmApplicationEntityOutline { applicationId language } }
        }
      }
    }
  }`;

interface SearchData {
  actor: {
    entitySearch: {
      count: number;
      query: string;
      results: {
        nextCursor: string | null;
        entities: Array<{ guid: string; name: string; accountId: number; reporting: boolean; applicationId: number; language: string }>;
      };
    } | null;
  };
}

/** Follows nextCursor to the end; returns every page's entity names. */
async function searchAllPages(query: string, apiKey = DEMO, extra: Record<string, unknown> = {}) {
  const pages: SearchData['actor']['entitySearch'][] = [];
  let cursor: string | null = null;
  do {
    const { body }: GraphqlResponse<SearchData> = await post<SearchData>(SEARCH, { query, cursor, ...extra }, apiKey);
    expect(body.errors).toBeUndefined();
    const search: SearchData['actor']['entitySearch'] | undefined = body.data?.actor.entitySearch;
    pages.push(search ?? null);
    cursor = search?.results.nextCursor ?? null;
  } while (cursor !== null);
  return pages;
}

function expectedNames(predicate: (app: SandboxApp) => boolean, accounts = [1000001]): string[] {
  return sandbox.data.apps
    .filter((app) => accounts.includes(app.accountId) && predicate(app))
    .map((app) => app.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function names(query: string, apiKey = DEMO): Promise<string[]> {
  const pages = await searchAllPages(query, apiKey);
  return pages.flatMap((page) => page?.results.entities.map((entity) => entity.name) ?? []);
}

describe('POST /graphql transport', () => {
  it.each([
    ['no key', null],
    ['an unknown key', 'NRAK-NOPE'],
  ])('answers 401 BAD_API_KEY for %s', async (_label, apiKey) => {
    const { status, body } = await post('{ actor { user { id } } }', undefined, apiKey);
    expect(status).toBe(401);
    expect(body).toEqual({ errors: [{ message: 'Bad API Key or no API Key provided', extensions: { error_code: 'BAD_API_KEY' } }] });
  });

  it('accepts Api-Key in any case and X-Api-Key', async () => {
    for (const header of ['API-KEY', 'X-Api-Key']) {
      const response = await sandbox.app.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', [header]: DEMO },
        body: JSON.stringify({ query: '{ actor { accounts { id name } } }' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { actor: { accounts: [{ id: 1000001, name: 'Sandbox Primary' }] } } });
    }
  });

  it.each([
    ['not json', 'Request body must be JSON'],
    ['[]', 'Request body must be a JSON object'],
    ['{"query": 5}', 'Request body must contain a "query" string'],
    ['{"query": "{ actor { user { id } } }", "variables": [1]}', '"variables" must be a JSON object'],
    ['{"query": "{ actor { user { id } } }", "operationName": 3}', '"operationName" must be a string'],
  ])('answers 400 for the body %s', async (body, message) => {
    const response = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': DEMO },
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [{ message }] });
  });

  it('answers GraphQL syntax, validation and variable errors with 200 in the graphql-js shape', async () => {
    const syntax = await post('{ actor { ');
    expect(syntax.status).toBe(200);
    expect(syntax.body.errors?.[0]?.message).toMatch(/^Syntax Error/);
    const validation = await post('{ actor { nope } }');
    expect(validation.status).toBe(200);
    expect(validation.body).toEqual({
      errors: [{ message: 'Cannot query field "nope" on type "Actor".', locations: [{ line: 1, column: 11 }] }],
    });
    // Cached documents answer the same the second time.
    expect((await post('{ actor { nope } }')).body).toEqual(validation.body);
    const variables = await post('query($id: Int!) { actor { account(id: $id) { id } } }', { id: 'x' });
    expect(variables.status).toBe(200);
    expect(variables.body.errors?.[0]?.message).toMatch(/Variable "\$id" got invalid value "x"/);
  });

  it('serves GET /healthz', async () => {
    const response = await sandbox.app.request('/healthz');
    expect(await response.json()).toEqual({ status: 'ok' });
  });
});

/** Search results now hold every entity kind; these tests are about APM applications. */
const APM_APPS = "domain = 'APM' AND type = 'APPLICATION'";

describe('actor.entitySearch', () => {
  it('pages 450 apps as 200 + 200 + 50, sorted by name, without duplicates', async () => {
    const pages = await searchAllPages("domain = 'APM' AND type = 'APPLICATION'");
    expect(pages.map((page) => page?.results.entities.length)).toEqual([200, 200, 50]);
    expect(pages.map((page) => page?.count)).toEqual([450, 450, 450]);
    expect(pages.at(-1)?.results.nextCursor).toBeNull();
    expect(pages[0]?.query).toBe("domain = 'APM' AND type = 'APPLICATION'");
    const all = pages.flatMap((page) => page?.results.entities.map((entity) => entity.name) ?? []);
    expect(all).toEqual(expectedNames(() => true));
    expect(new Set(all).size).toBe(450);
  });

  it('scopes results to the accounts of the key', async () => {
    expect(await names(APM_APPS, MULTI)).toEqual(expectedNames(() => true, [1000001, 1000002]));
    expect(await names(`${APM_APPS} AND accountId = 1000002`, MULTI)).toEqual(expectedNames(() => true, [1000002]));
    expect(await names(`${APM_APPS} AND accountId = 1000002`, DEMO)).toEqual([]);
    expect(await names(`${APM_APPS} AND name LIKE 'checkout'`, 'NRAK-SANDBOX-SECONDARY')).toEqual(
      expectedNames((app) => app.name.toLowerCase().includes('checkout'), [1000002]),
    );
  });

  it('filters by domainId IN, name LIKE (case-insensitive), language and reporting', async () => {
    const [first, second] = sandbox.data.apps;
    expect(await names(`${APM_APPS} AND domainId IN ('${first?.id}', ${second?.id}, '1')`)).toEqual(expectedNames((app) => app === first || app === second));
    const checkout = await names(`${APM_APPS} AND name LIKE 'cHeCkOuT'`);
    expect(checkout.length).toBeGreaterThan(1);
    expect(checkout).toEqual(expectedNames((app) => app.name.toLowerCase().includes('checkout')));
    expect(await names("language = 'ruby' AND reporting = false")).toEqual(expectedNames((app) => app.language === 'ruby' && !app.reporting));
    expect(await names("tags.language IN ('go', 'php')")).toEqual(expectedNames((app) => app.language === 'go' || app.language === 'php'));
    const quoted = sandbox.data.apps.find((app) => app.accountId === 1000001 && app.name.includes("'") && app.name.includes('\\'));
    const literal = `'${quoted?.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    expect(await names(`${APM_APPS} AND name = ${literal}`)).toEqual([quoted?.name]);
  });

  it('reports a malformed query as INVALID_INPUT on entitySearch', async () => {
    const { status, body } = await post<SearchData>(SEARCH, { query: "name = 'unterminated" });
    expect(status).toBe(200);
    expect(body.data).toEqual({ actor: { entitySearch: null } });
    expect(body.errors).toEqual([
      {
        message: 'Invalid query: unterminated string starting at position 7',
        locations: [{ line: 4, column: 7 }],
        path: ['actor', 'entitySearch'],
        extensions: { errorClass: 'INVALID_INPUT' },
      },
    ]);
  });

  it('rejects cursors that are tampered with or belong to another search', async () => {
    const query = "domain = 'APM'";
    const first = await post<SearchData>(SEARCH, { query });
    const cursor = first.body.data?.actor.entitySearch?.results.nextCursor as string;
    for (const [badCursor, otherQuery] of [
      ['garbage', query],
      [`${cursor}x`, query],
      [cursor, "domain = 'APM' AND reporting = true"],
      [Buffer.from(JSON.stringify({ offset: 5000, search: 'x' })).toString('base64url'), query],
    ] as const) {
      const { body } = await post<SearchData>(SEARCH, { query: otherQuery, cursor: badCursor });
      expect(body.errors?.[0]).toMatchObject({
        message: 'Invalid cursor',
        path: ['actor', 'entitySearch', 'results'],
        extensions: { errorClass: 'INVALID_INPUT' },
      });
    }
    // The same cursor under a different key (other accounts) is a different search.
    const otherKey = await post<SearchData>(SEARCH, { query, cursor }, MULTI);
    expect(otherKey.body.errors?.[0]?.message).toBe('Invalid cursor');
  });

  it('sorts by sortByWithDirection over sortBy, and options.limit lowers the page size', async () => {
    const descending = await searchAllPages(APM_APPS, DEMO, { sort: [{ attribute: 'NAME', direction: 'DESC' }], sortBy: ['REPORTING'] });
    expect(descending.flatMap((page) => page?.results.entities.map((entity) => entity.name))).toEqual(expectedNames(() => true).reverse());
    const byReporting = await searchAllPages(APM_APPS, DEMO, { sortBy: ['REPORTING'] });
    const entities = byReporting.flatMap((page) => page?.results.entities ?? []);
    const firstReporting = entities.findIndex((entity) => entity.reporting);
    expect(entities.slice(firstReporting).every((entity) => entity.reporting)).toBe(true);
    expect(entities.slice(0, firstReporting).map((entity) => entity.name)).toEqual(expectedNames((app) => !app.reporting));
    const small = await searchAllPages(APM_APPS, DEMO, { limit: 150 });
    expect(small.map((page) => page?.results.entities.length)).toEqual([150, 150, 150]);
  });
});

const ENTITY_FIELDS = `
  guid name accountId account { id name } domain type entityType reporting alertSeverity permalink
  tags { key values } lastReportingChangeAt
  ... on ApmApplicationEntity {
    applicationId language settings { apdexTarget serverSideConfig }
    apmSummary { responseTimeAverage throughput errorRate apdexScore hostCount instanceCount webThroughput nonWebThroughput }
    apmBrowserSummary { pageLoadTimeAverage pageLoadThroughput ajaxRequestThroughput ajaxResponseTimeAverage jsErrorRate }
    applicationInstancesV2 { nextCursor applicationInstances { details { id host hostDisplayName instanceName language name } } }
  }`;

describe('actor.entity and actor.entities', () => {
  const primaryApp = sandbox.data.apps.find((app) => app.accountId === 1000001 && app.summary && app.browser) as SandboxApp;
  const secondaryApp = sandbox.data.apps.find((app) => app.accountId === 1000002) as SandboxApp;

  it('maps the model onto ApmApplicationEntity fields', async () => {
    const { body } = await post(`query($guid: EntityGuid!) { actor { entity(guid: $guid) { ${ENTITY_FIELDS} } } }`, { guid: primaryApp.guid });
    const app = primaryApp;
    const summary = app.summary as NonNullable<SandboxApp['summary']>;
    const browser = app.browser as NonNullable<SandboxApp['browser']>;
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      actor: {
        entity: {
          guid: app.guid,
          name: app.name,
          accountId: 1000001,
          account: { id: 1000001, name: 'Sandbox Primary' },
          domain: 'APM',
          type: 'APPLICATION',
          entityType: 'APM_APPLICATION_ENTITY',
          reporting: app.reporting,
          alertSeverity: app.alertSeverity,
          permalink: `https://one.newrelic.com/redirect/entity/${app.guid}`,
          tags: [
            { key: 'language', values: [app.language] },
            // Labels (user tags, sandbox/tagging.ts).
            ...Object.entries(app.userTags ?? {}).map(([key, values]) => ({ key, values })),
            { key: 'account', values: ['Sandbox Primary'] },
          ],
          lastReportingChangeAt: app.lastReportingChangeAt,
          applicationId: app.id,
          language: app.language,
          settings: { apdexTarget: app.apdexTarget, serverSideConfig: app.serverSideConfig },
          apmSummary: {
            responseTimeAverage: summary.responseTimeMs / 1000,
            throughput: summary.throughput,
            errorRate: summary.errorRate,
            apdexScore: summary.apdexScore,
            hostCount: app.hosts.length,
            instanceCount: app.hosts.reduce((total, host) => total + host.instances.length, 0),
          },
          apmBrowserSummary: {
            pageLoadTimeAverage: browser.pageLoadTimeSeconds,
            pageLoadThroughput: browser.pageLoadThroughput,
            ajaxRequestThroughput: browser.ajaxRequestThroughput,
            ajaxResponseTimeAverage: browser.ajaxResponseTimeSeconds,
            jsErrorRate: browser.jsErrorRate,
          },
          applicationInstancesV2: {
            nextCursor: null,
            applicationInstances: app.hosts.flatMap((host) =>
              host.instances.map((instance) => ({
                details: {
                  id: String(instance.id),
                  host: host.name,
                  hostDisplayName: host.name,
                  instanceName: instance.instanceName,
                  language: app.language,
                  name: app.name,
                },
              })),
            ),
          },
        },
      },
    });
    const entity = (body.data as { actor: { entity: { apmSummary: { webThroughput: number; nonWebThroughput: number } } } }).actor.entity;
    expect(entity.apmSummary.webThroughput + entity.apmSummary.nonWebThroughput).toBeCloseTo(summary.throughput, 6);
  });

  it('returns null summaries for non-reporting apps and apps without browser monitoring', async () => {
    const quiet = sandbox.data.apps.find((app) => app.accountId === 1000001 && !app.reporting && !app.browser) as SandboxApp;
    const { body } = await post('query($guid: EntityGuid!) { actor { entity(guid: $guid) { ... on ApmApplicationEntity { apmSummary { throughput } apmBrowserSummary { jsErrorRate } } } } }', { guid: quiet.guid });
    expect(body).toEqual({ data: { actor: { entity: { apmSummary: null, apmBrowserSummary: null } } } });
  });

  it('hides entities of accounts the key cannot see', async () => {
    const query = 'query($guid: EntityGuid!) { actor { entity(guid: $guid) { guid } } }';
    expect((await post(query, { guid: secondaryApp.guid }, DEMO)).body).toEqual({ data: { actor: { entity: null } } });
    expect((await post(query, { guid: secondaryApp.guid }, MULTI)).body).toEqual({ data: { actor: { entity: { guid: secondaryApp.guid } } } });
    expect((await post(query, { guid: 'not-a-guid' }, MULTI)).body).toEqual({ data: { actor: { entity: null } } });
  });

  it('entities answers per guid and refuses more than 25', async () => {
    const query = 'query($guids: [EntityGuid]!) { actor { entities(guids: $guids) { guid } } }';
    const { body } = await post(query, { guids: [primaryApp.guid, secondaryApp.guid, null] });
    expect(body).toEqual({ data: { actor: { entities: [{ guid: primaryApp.guid }, null, null] } } });
    const guids = sandbox.data.apps.slice(0, 26).map((app) => app.guid);
    const tooMany = await post(query, { guids });
    expect(tooMany.body.data).toEqual({ actor: { entities: null } });
    expect(tooMany.body.errors?.[0]).toMatchObject({
      message: 'Too many guids: entities accepts at most 25, got 26',
      path: ['actor', 'entities'],
      extensions: { errorClass: 'INVALID_INPUT' },
    });
    expect((await post(query, { guids: guids.slice(0, 25) })).body.errors).toBeUndefined();
  });
});

describe('actor.account, accounts and user', () => {
  it('lists the key accounts and refuses other accounts', async () => {
    const { body } = await post('{ actor { accounts { id name } ok: account(id: 1000001) { id name } other: account(id: 1000002) { id } } }');
    expect(body.data).toEqual({
      actor: { accounts: [{ id: 1000001, name: 'Sandbox Primary' }], ok: { id: 1000001, name: 'Sandbox Primary' }, other: null },
    });
    expect(body.errors).toEqual([
      {
        message: 'You are not authorized to query account 1000002',
        locations: [{ line: 1, column: 69 }],
        path: ['actor', 'other'],
        extensions: { errorClass: 'FORBIDDEN' },
      },
    ]);
  });

  it('answers a stable user per key', async () => {
    const first = await post('{ actor { user { id name email timeZoneName } } }');
    const again = await post('{ actor { user { id name email timeZoneName } } }');
    expect(first.body).toEqual(again.body);
    expect(first.body.data).toMatchObject({ actor: { user: { name: 'Sandbox User', timeZoneName: 'Etc/UTC' } } });
  });
});
