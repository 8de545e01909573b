import { createHash } from 'node:crypto';
import { parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { generateSandboxData, otherEntityCount } from '../../sandbox/data.ts';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { loadSandboxSchema } from '../../sandbox/schema.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { removeApplication, updateApplication } from '../../sandbox/writes.ts';
import { decodeEntityGuid } from '../../src/v2/ids.ts';
import { syntheticHostId } from '../../mappings/common/app-instances.ts';

const NOW = 1_750_000_000_000;
const PRIMARY = 1000001;
const SECONDARY = 1000002;
const DEMO = 'NRAK-SANDBOX-DEMO';
const MULTI = 'NRAK-SANDBOX-MULTI';
const SECONDARY_KEY = 'NRAK-SANDBOX-SECONDARY';

/** sha256 of JSON.stringify(apps), computed with the generator before key transactions, mobile and browser apps existed. */
const APPS_HASHES_BEFORE = {
  '42/500': '621c1b4510c68e543cd8dbc04cfcd404ae2dd36a3bfeb6f53d674f3e5fc87d40',
  '7/10': 'fe0176840a541df50c0198610d38eebc4c0cbf55d5d23e5f49ebd80c0fe83db1',
  '1/0': 'da9b20d404d6c1b3c454a4bcda973a823d5caf6ada13bad39cabcde94ac07eac',
} as const;

const KINDS = [
  { domain: 'APM', type: 'KEY_TRANSACTION', typename: 'KeyTransactionEntity', list: (data: SandboxData) => data.keyTransactions },
  { domain: 'MOBILE', type: 'APPLICATION', typename: 'MobileApplicationEntity', list: (data: SandboxData) => data.mobileApps },
  { domain: 'BROWSER', type: 'APPLICATION', typename: 'BrowserApplicationEntity', list: (data: SandboxData) => data.browserApps },
] as const;

describe('generating key transactions, mobile and browser apps', () => {
  const data = generateSandboxData({ seed: 42, apmApps: 500, now: NOW });

  it('leaves every APM app exactly as before', () => {
    for (const [key, expected] of Object.entries(APPS_HASHES_BEFORE)) {
      const [seed, apmApps] = key.split('/').map(Number) as [number, number];
      // The fleet app's extra hosts (data.ts addFleetHosts) came later, from a stream of their own;
      // so did the labels (userTags, tagging.ts: a pure function of the app id) and the browser
      // loaders (browserLoader, browser-loader.ts: a pure function of the app id and its traffic).
      // Host ids are the world's own row ids now; put back as they were (derived from
      // app and name), every other value must be exactly as before.
      const apps = generateSandboxData({ seed, apmApps, now: 1_700_000_000_000 }).apps.map(({ userTags: _labels, browserLoader: _loader, ...app }) => ({
        ...app,
        hosts: app.hosts.filter((host) => !host.name.startsWith('fleet-')).map((host) => ({ ...host, id: syntheticHostId(app.id, host.name) })),
      }));
      expect(createHash('sha256').update(JSON.stringify(apps)).digest('hex'), key).toBe(expected);
    }
  });

  it('is deterministic for a seed and differs between seeds', () => {
    expect(generateSandboxData({ seed: 42, apmApps: 500, now: NOW })).toEqual(data);
    const other = generateSandboxData({ seed: 43, apmApps: 500, now: NOW });
    expect(other.mobileApps.map((app) => app.name)).not.toEqual(data.mobileApps.map((app) => app.name));
  });

  it.each(KINDS)('fills 3+ pages of 200 $domain/$type in the primary account and ~25 in the secondary', ({ list }) => {
    const primary = list(data).filter((entity) => entity.accountId === PRIMARY);
    expect(primary.length).toBeGreaterThan(600);
    // Browser apps also include the APM-attached ones.
    expect(list(data).filter((entity) => entity.accountId === SECONDARY).length).toBeGreaterThanOrEqual(25);
  });

  it('scales with apmApps but keeps a handful', () => {
    expect(otherEntityCount(PRIMARY, 500)).toBe(650);
    expect(otherEntityCount(PRIMARY, 0)).toBe(5);
    const small = generateSandboxData({ seed: 3, apmApps: 2, now: NOW });
    expect(small.mobileApps.filter((app) => app.accountId === PRIMARY)).toHaveLength(5);
    expect(small.keyTransactions.filter((kt) => kt.accountId === PRIMARY)).toHaveLength(5);
    // No APM apps, no parents: no key transactions in that account.
    expect(generateSandboxData({ seed: 3, apmApps: 0, now: NOW }).keyTransactions.every((kt) => kt.accountId === SECONDARY)).toBe(true);
  });

  it('gives unique names, awkward ones first, and GUIDs that decode to their ids', () => {
    const all = [...data.apps, ...data.keyTransactions, ...data.mobileApps, ...data.browserApps.filter((app) => app.servingApmApplicationId === null)];
    expect(new Set(all.map((entity) => entity.name)).size).toBe(all.length);
    for (const { list, domain, type } of KINDS) {
      const names = list(data).filter((entity) => entity.accountId === PRIMARY && entity.id >= 400_000_000).slice(0, 4).map((entity) => entity.name);
      expect(names.join(' ')).toMatch(/"[^]*\\[^]*\/[^]*O'Brien/);
      for (const entity of list(data)) {
        expect(decodeEntityGuid(entity.guid)).toMatchObject({ accountId: entity.accountId, domain, type, domainId: String(entity.id) });
        expect(entity.id).toBeGreaterThan(0);
      }
    }
  });

  it('ties key transactions to apps of their account, with unique metric names per app', () => {
    const apps = new Map(data.apps.map((app) => [app.id, app]));
    const seen = new Set<string>();
    for (const kt of data.keyTransactions) {
      const app = apps.get(kt.appId) as SandboxApp;
      expect(app.accountId).toBe(kt.accountId);
      // URI-named (`/kt/<slug>`), or custom-named (`<Slug> Page`) as v2 showed such names.
      if (kt.metricName.startsWith('WebTransaction/Uri/')) {
        expect(kt.metricName).toMatch(/^WebTransaction\/Uri\/kt\/[a-z0-9-]+$/);
        expect(kt.transactionName).toBe(kt.metricName.slice('WebTransaction/Uri'.length));
      } else {
        expect(kt.metricName).toMatch(/^WebTransaction\/Custom\/[A-Z][a-z0-9-]* Page$/);
        expect(kt.transactionName).toBe(kt.metricName.slice('WebTransaction/Custom/'.length));
      }
      expect(seen.has(`${kt.appId}|${kt.metricName}`)).toBe(false);
      seen.add(`${kt.appId}|${kt.metricName}`);
      if (!app.reporting) expect(kt.reporting).toBe(false);
      expect(kt.browserApdexTarget).toBe(app.browser?.apdexTarget ?? null);
      expect(kt.id).toBeGreaterThanOrEqual(400_000_000);
    }
    expect(new Set(data.keyTransactions.map((kt) => apps.get(kt.appId)?.reporting))).toEqual(new Set([true, false]));
    expect(new Set(data.keyTransactions.map((kt) => kt.metricName.split('/')[1]))).toEqual(new Set(['Uri', 'Custom']));
  });

  it('gives reporting mobile apps a coherent summary and the others none', () => {
    expect(data.mobileApps.some((app) => !app.reporting)).toBe(true);
    for (const app of data.mobileApps) {
      expect(app.applicationToken).toMatch(/^AA[0-9a-f]{16}-NRMA$/);
      if (!app.reporting) {
        expect(app.summary).toBeNull();
        continue;
      }
      const summary = app.summary;
      expect(summary).not.toBeNull();
      if (summary === null) continue;
      expect(summary.crashRate).toBe(Math.round((summary.crashCount / summary.sessionCount) * 100 * 100) / 100);
      for (const percent of [summary.crashRate, summary.failedCallRate, summary.remoteErrorRate]) {
        expect(percent).toBeGreaterThanOrEqual(0);
        expect(percent).toBeLessThanOrEqual(100);
      }
      expect(summary.usersAffectedCount).toBeLessThanOrEqual(summary.crashCount);
    }
  });

  it('attaches one browser app to every APM app with browser monitoring configured, traffic or not', () => {
    const attached = data.browserApps.filter((app) => app.servingApmApplicationId !== null);
    expect(attached.map((app) => app.id)).toEqual(data.apps.filter((app) => app.browserLoader !== 'NONE').map((app) => app.id));
    // Browser monitoring is a loader setting (browser-loader.ts): every app with traffic has one,
    // and some apps are configured without recent traffic.
    expect(data.apps.filter((app) => app.browser !== null).every((app) => app.browserLoader !== 'NONE')).toBe(true);
    expect(data.apps.some((app) => app.browser === null && app.browserLoader !== 'NONE')).toBe(true);
    for (const loader of ['PRO', 'LITE', 'SPA'] as const) expect(data.apps.some((app) => app.browser !== null && app.browserLoader === loader)).toBe(true);
    for (const browserApp of attached) {
      const app = data.apps.find((candidate) => candidate.id === browserApp.id) as SandboxApp;
      expect(browserApp).toMatchObject({ name: app.name, reporting: app.reporting, apdexTarget: app.browser?.apdexTarget ?? 7, accountId: app.accountId });
    }
    for (const browserApp of data.browserApps) {
      expect(browserApp.loaderScript).toContain(`licenseKey:"${browserApp.browserMonitoringKey}"`);
      expect(browserApp.loaderScript).toContain(`applicationID:"${browserApp.id}"`);
    }
  });
});

describe('APM app writes keep the browser side and key transactions in step', () => {
  it('adds, renames, re-targets and removes the attached browser app; updates and removes key transactions', () => {
    const data = generateSandboxData({ seed: 9, apmApps: 60, now: NOW });
    const app = data.apps.find((candidate) => candidate.browserLoader === 'NONE' && data.keyTransactions.some((kt) => kt.appId === candidate.id)) as SandboxApp;
    const attached = (): SandboxData['browserApps'] => data.browserApps.filter((browserApp) => browserApp.servingApmApplicationId === app.id);
    const keyTransactions = (): SandboxData['keyTransactions'] => data.keyTransactions.filter((kt) => kt.appId === app.id);
    expect(attached()).toEqual([]);
    const version = data.writes.version;
    updateApplication(data, app, { browserMonitoring: true, name: 'Renamed App' });
    expect(data.writes.version).toBeGreaterThan(version);
    expect(attached()).toMatchObject([{ id: app.id, name: 'Renamed App', apdexTarget: 7 }]);
    updateApplication(data, app, { endUserApdexTarget: 2.5 });
    expect(attached()).toMatchObject([{ apdexTarget: 2.5 }]);
    expect(keyTransactions().every((kt) => kt.browserApdexTarget === 2.5)).toBe(true);
    updateApplication(data, app, { browserMonitoring: false });
    expect(attached()).toEqual([]);
    expect(keyTransactions().every((kt) => kt.browserApdexTarget === null)).toBe(true);
    updateApplication(data, app, { browserMonitoring: true });
    const keyTransactionsArray = data.keyTransactions;
    removeApplication(data, app);
    expect(attached()).toEqual([]);
    expect(keyTransactions()).toEqual([]);
    expect(data.keyTransactions).toBe(keyTransactionsArray);
  });
});

interface Outline {
  guid: string;
  name: string;
  accountId: number;
  domain: string;
  type: string;
  __typename: string;
}
interface SearchPage {
  actor: { entitySearch: { count: number; results: { nextCursor: string | null; entities: Outline[] } } };
}

const SEARCH = `
  query Search($query: String, $cursor: String) {
    actor { entitySearch(query: $query) { count results(cursor: $cursor) { nextCursor entities { __typename guid name accountId domain type } } } }
  }`;

const ENTITY = `
  query Entity($guids: [EntityGuid]!) {
    actor {
      entities(guids: $guids) {
        __typename guid name accountId domain type entityType reporting
        ... on KeyTransactionEntity { apdexTarget browserApdexTarget metricName application { guid entity { guid name } } }
        ... on MobileApplicationEntity {
          applicationId
          mobileSummary { appLaunchCount crashCount crashRate httpErrorRate httpRequestCount httpRequestRate httpResponseTimeAverage mobileSessionCount networkFailureRate usersAffectedCount }
        }
        ... on BrowserApplicationEntity {
          applicationId servingApmApplicationId agentInstallType settings { apdexTarget }
          browserSummary { jsErrorRate } browserProperties { jsConfig jsConfigScript jsLoaderScript }
        }
        ... on ApmApplicationEntity { applicationInstances { details { id } } }
      }
    }
  }`;

describe('the NerdGraph face over every entity kind', () => {
  const sandbox = createSandbox({ seed: 5, apmApps: 500, now: () => NOW });
  const data = sandbox.data;

  async function post<T>(query: string, variables: Record<string, unknown>, apiKey = DEMO): Promise<T> {
    const response = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': apiKey },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: unknown[] };
    expect(body.errors).toBeUndefined();
    return body.data as T;
  }

  async function searchAll(query: string, apiKey = DEMO): Promise<{ count: number; pages: number; entities: Outline[] }> {
    const entities: Outline[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let count = 0;
    do {
      const page: SearchPage = await post<SearchPage>(SEARCH, { query, cursor }, apiKey);
      count = page.actor.entitySearch.count;
      entities.push(...page.actor.entitySearch.results.entities);
      cursor = page.actor.entitySearch.results.nextCursor;
      pages++;
    } while (cursor !== null);
    return { count, pages, entities };
  }

  const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

  it('validates the test documents against the sandbox schema', () => {
    for (const document of [SEARCH, ENTITY]) expect(validate(loadSandboxSchema(), parse(document))).toEqual([]);
  });

  it.each(KINDS)('pages every $domain/$type of the key, sorted by name', async ({ domain, type, list }) => {
    const expected = list(data).filter((entity) => entity.accountId === PRIMARY).map((entity) => entity.name).sort(byName);
    const result = await searchAll(`domain = '${domain}' AND type = '${type}'`);
    expect(result.pages).toBeGreaterThanOrEqual(4);
    expect(result.count).toBe(expected.length);
    expect(result.entities.map((entity) => entity.name)).toEqual(expected);
    expect(new Set(result.entities.map((entity) => `${entity.domain}/${entity.type}`))).toEqual(new Set([`${domain}/${type}`]));
  });

  it.each(KINDS)('finds $domain/$type by accountId, domainId, id and exact or LIKE name', async ({ domain, type, list }) => {
    const secondary = list(data).filter((entity) => entity.accountId === SECONDARY);
    const kind = `domain = '${domain}' AND type = '${type}'`;
    expect((await searchAll(`${kind} AND accountId = ${SECONDARY}`, MULTI)).entities.map((entity) => entity.guid).sort()).toEqual(
      secondary.map((entity) => entity.guid).sort(),
    );
    expect((await searchAll(`${kind} AND accountId = ${SECONDARY}`, DEMO)).entities).toEqual([]);
    const awkward = list(data).find((entity) => entity.accountId === PRIMARY && entity.name.includes("'")) ?? list(data)[0];
    const literal = `'${awkward?.name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    const exact = await searchAll(`${kind} AND name = ${literal}`);
    expect(exact.entities.map((entity) => entity.guid)).toEqual([awkward?.guid]);
    expect((await searchAll(`${kind} AND domainId = ${awkward?.id}`)).entities.map((entity) => entity.guid)).toEqual([awkward?.guid]);
    expect((await searchAll(`id = '${awkward?.guid}'`)).entities.map((entity) => entity.guid)).toEqual([awkward?.guid]);
    const quiet = await searchAll(`${kind} AND reporting = false AND tags.account = 'sandbox primary'`);
    expect(quiet.entities.length).toBeGreaterThan(0);
    expect(quiet.entities.map((entity) => entity.name)).toEqual(
      list(data).filter((entity) => entity.accountId === PRIMARY && !entity.reporting).map((entity) => entity.name).sort(byName),
    );
    const like = await searchAll(`${kind} AND name LIKE 'o\\'brien'`);
    expect(like.entities.length).toBeGreaterThan(0);
    expect(like.entities.every((entity) => entity.name.toLowerCase().includes("o'brien"))).toBe(true);
  });

  it('mixes every kind in one name-sorted search', async () => {
    const result = await searchAll("name LIKE 'checkout'");
    const names = result.entities.map((entity) => entity.name);
    expect(names).toEqual([...names].sort(byName));
    expect(new Set(result.entities.map((entity) => entity.__typename))).toEqual(
      new Set(['ApmApplicationEntityOutline', 'KeyTransactionEntityOutline', 'MobileApplicationEntityOutline', 'BrowserApplicationEntityOutline']),
    );
  });

  it('returns the full entity of each kind', async () => {
    const kt = data.keyTransactions.find((candidate) => candidate.accountId === PRIMARY);
    const mobile = data.mobileApps.find((app) => app.accountId === PRIMARY && app.summary !== null);
    const browser = data.browserApps.find((app) => app.accountId === PRIMARY && app.servingApmApplicationId !== null);
    const parent = data.apps.find((app) => app.id === kt?.appId);
    const result = await post<{ actor: { entities: Array<Record<string, unknown>> } }>(ENTITY, { guids: [kt?.guid, mobile?.guid, browser?.guid] });
    const [ktEntity, mobileEntity, browserEntity] = result.actor.entities;
    expect(ktEntity).toMatchObject({
      __typename: 'KeyTransactionEntity',
      entityType: 'KEY_TRANSACTION_ENTITY',
      metricName: kt?.metricName,
      apdexTarget: kt?.apdexTarget,
      browserApdexTarget: kt?.browserApdexTarget,
      application: { guid: parent?.guid, entity: { guid: parent?.guid, name: parent?.name } },
    });
    const summary = mobile?.summary;
    expect(mobileEntity).toMatchObject({
      __typename: 'MobileApplicationEntity',
      applicationId: mobile?.id,
      mobileSummary: {
        appLaunchCount: summary?.launchCount,
        crashCount: summary?.crashCount,
        crashRate: summary?.crashRate,
        httpErrorRate: summary?.remoteErrorRate,
        httpRequestCount: summary?.httpRequestCount,
        httpRequestRate: summary?.throughput,
        httpResponseTimeAverage: summary?.responseTimeSeconds,
        mobileSessionCount: summary?.sessionCount,
        networkFailureRate: summary?.failedCallRate,
        usersAffectedCount: summary?.usersAffectedCount,
      },
    });
    expect(browserEntity).toMatchObject({
      __typename: 'BrowserApplicationEntity',
      applicationId: browser?.id,
      servingApmApplicationId: browser?.servingApmApplicationId,
      settings: { apdexTarget: browser?.apdexTarget },
      browserProperties: { jsConfig: { licenseKey: browser?.browserMonitoringKey, applicationID: String(browser?.id) }, jsLoaderScript: browser?.loaderScript },
    });
    const quietMobile = data.mobileApps.find((app) => app.accountId === PRIMARY && app.summary === null);
    const quiet = await post<{ actor: { entities: Array<{ mobileSummary: unknown }> } }>(ENTITY, { guids: [quietMobile?.guid] });
    expect(quiet.actor.entities[0]?.mobileSummary).toBeNull();
  });

  it.each(KINDS)('never shows a $domain/$type of another account', async ({ list }) => {
    const secondary = list(data).find((entity) => entity.accountId === SECONDARY);
    const primary = list(data).find((entity) => entity.accountId === PRIMARY);
    const guids = [secondary?.guid, primary?.guid];
    const asDemo = await post<{ actor: { entities: Array<{ guid: string } | null> } }>(ENTITY, { guids });
    expect(asDemo.actor.entities.map((entity) => entity?.guid ?? null)).toEqual([null, primary?.guid]);
    const asSecondary = await post<{ actor: { entities: Array<{ guid: string } | null> } }>(ENTITY, { guids }, SECONDARY_KEY);
    expect(asSecondary.actor.entities.map((entity) => entity?.guid ?? null)).toEqual([secondary?.guid, null]);
  });

  it('lists no application instances for an app that is not reporting', async () => {
    const quiet = data.apps.find((app) => app.accountId === PRIMARY && !app.reporting && app.hosts.length > 0) as SandboxApp;
    const busy = data.apps.find((app) => app.accountId === PRIMARY && app.reporting) as SandboxApp;
    const result = await post<{ actor: { entities: Array<{ applicationInstances: unknown[] }> } }>(ENTITY, { guids: [quiet.guid, busy.guid] });
    expect(result.actor.entities[0]?.applicationInstances).toEqual([]);
    expect(result.actor.entities[1]?.applicationInstances).toHaveLength(busy.hosts.reduce((total, host) => total + host.instances.length, 0));
  });

  it('makes created mobile and browser apps searchable', async () => {
    const create = `mutation($accountId: Int!) {
      m: agentApplicationCreateMobile(accountId: $accountId, name: "Shop iOS") { guid entityOutline { name reporting } }
      b: agentApplicationCreateBrowser(accountId: $accountId, name: "Shop Web") { guid }
    }`;
    const created = await post<{ m: { guid: string; entityOutline: { name: string; reporting: boolean } }; b: { guid: string } }>(create, { accountId: PRIMARY });
    expect(created.m.entityOutline).toEqual({ name: 'Shop iOS', reporting: false });
    const mobile = await searchAll("domain = 'MOBILE' AND name = 'Shop iOS'");
    const browser = await searchAll("domain = 'BROWSER' AND name = 'Shop Web'");
    expect(mobile.entities.map((entity) => entity.guid)).toEqual([created.m.guid]);
    expect(browser.entities.map((entity) => entity.guid)).toEqual([created.b.guid]);
    expect(data.writes.createdApps.map((app) => app.name)).toEqual(['Shop iOS', 'Shop Web']);
  });
});
