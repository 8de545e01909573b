import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_FAMILIES } from '../../mappings/common/metric-values.ts';
import { metricNamesQuery, timesliceDataQuery } from '../../src/upstream/nrql.ts';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { runNrql } from '../../sandbox/nrql/engine.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { HOUR_MS, metricsOf } from '../../sandbox/timeslices.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED });
const { data } = sandbox;
const PRIMARY = 1000001;
const SECONDARY = 1000002;
const DEMO = 'NRAK-SANDBOX-DEMO';
const MULTI = 'NRAK-SANDBOX-MULTI';
const app = data.apps.find((candidate) => candidate.accountId === PRIMARY && candidate.reporting) as SandboxApp;
const foreign = data.apps.find((candidate) => candidate.accountId === SECONDARY && candidate.reporting) as SandboxApp;
const V = 'newrelic.timeslice.value';
const S = Date.UTC(2026, 10, 22, 9, 0);
const U = Date.UTC(2026, 10, 22, 10, 0);

interface GraphqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: Record<string, unknown>;
}

interface GraphqlBody<T> {
  data?: T;
  errors?: GraphqlError[];
}

interface NrqlContainer {
  results: Array<Record<string, unknown>>;
}

async function post<T>(query: string, variables: Record<string, unknown>, apiKey = DEMO): Promise<GraphqlBody<T>> {
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': apiKey },
    body: JSON.stringify({ query, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphqlBody<T>;
}

/** The gateway's document shape: the entity and two NRQL queries in one request. */
const DATA_AND_KNOWN = `
  query Q($accountId: Int!, $guid: EntityGuid!, $data: Nrql!, $known: Nrql!) {
    actor {
      entity(guid: $guid) { guid }
      account(id: $accountId) {
        data: nrql(query: $data, timeout: 30) { results }
        known: nrql(query: $known) { results }
      }
    }
  }`;

interface DataAndKnown {
  actor: { entity: { guid: string } | null; account: { data: NrqlContainer | null; known: NrqlContainer | null } | null };
}

const direct = (nrql: string, accountIds = [PRIMARY]) => runNrql(nrql, { data, accountIds, now: FIXED });

describe('Account.nrql', () => {
  const dataQuery = `SELECT count(${V}) AS c, average(${V}) * 1000 AS ms FROM Metric WHERE appId = ${app.id} AND metricTimesliceName IN ('HttpDispatcher', 'Apdex') FACET metricTimesliceName LIMIT MAX SINCE ${S} UNTIL ${U} TIMESERIES 30 minutes`;
  const knownQuery = `SELECT uniques(metricTimesliceName, 10000) AS names FROM Metric WHERE appId = ${app.id} AND metricTimesliceName IN ('HttpDispatcher', ${quoteLiteral(`Custom/O'Brien "quoted" \\ job`)}, 'Nope') AND ${V} IS NOT NULL SINCE ${FIXED - 7 * 24 * HOUR_MS} UNTIL ${FIXED}`;

  it('answers both queries of one request next to the entity', async () => {
    const body = await post<DataAndKnown>(DATA_AND_KNOWN, { accountId: PRIMARY, guid: app.guid, data: dataQuery, known: knownQuery });
    expect(body.errors).toBeUndefined();
    expect(body.data?.actor.entity?.guid).toBe(app.guid);
    expect(body.data?.actor.account?.data?.results).toEqual(direct(dataQuery).results);
    expect(body.data?.actor.account?.data?.results).toHaveLength(4);
    expect(body.data?.actor.account?.known?.results).toEqual([{ names: [`Custom/O'Brien "quoted" \\ job`, 'HttpDispatcher'] }]);
  });

  it('reports a bad query as an INVALID_INPUT error on that field only', async () => {
    const body = await post<DataAndKnown>(DATA_AND_KNOWN, { accountId: PRIMARY, guid: app.guid, data: 'SELECT count(#) FROM Metric', known: knownQuery });
    expect(body.errors).toEqual([
      {
        message: "NRQL Syntax Error: Error at line 1 position 13, unexpected '#'",
        locations: [expect.any(Object)],
        path: ['actor', 'account', 'data'],
        extensions: { errorClass: 'INVALID_INPUT' },
      },
    ]);
    expect(body.data?.actor.account?.data).toBeNull();
    expect(body.data?.actor.account?.known?.results).toHaveLength(1);
  });

  it('reports engine errors the same way', async () => {
    const body = await post<DataAndKnown>(DATA_AND_KNOWN, {
      accountId: PRIMARY,
      guid: app.guid,
      data: `SELECT count(${V}) FROM Metric WHERE metricTimesliceName = 'HttpDispatcher'`,
      known: `SELECT count(${V}) FROM Metric WHERE appId = ${app.id} SINCE ${U} UNTIL ${S}`,
    });
    expect(body.errors?.map((error) => [error.path, error.message, error.extensions?.errorClass])).toEqual([
      [['actor', 'account', 'data'], 'No application was matched (did you specify appId, appName or entity.guid?)', 'INVALID_INPUT'],
      [['actor', 'account', 'known'], "Your query's start time must be before its end time", 'INVALID_INPUT'],
    ]);
    expect(body.data?.actor.account).toEqual({ data: null, known: null });
  });

  it('returns nrql and metadata, runs async queries synchronously, and uses the sandbox clock', async () => {
    const nrql = `SELECT count(${V}) FROM Metric WHERE appId = ${app.id} FACET metricTimesliceName`;
    const body = await post<{ actor: { account: { nrql: Record<string, unknown> } } }>(
      `query Q($id: Int!, $q: Nrql!) { actor { account(id: $id) { nrql(query: $q, async: true, options: { eventNamespaces: ["Default"] }) {
        nrql results metadata { eventTypes facets messages timeWindow { begin end since until compareWith } } } } } }`,
      { id: PRIMARY, q: nrql },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.actor.account.nrql).toMatchObject({
      nrql,
      results: direct(nrql).results,
      metadata: {
        eventTypes: ['Metric'],
        facets: ['metricTimesliceName'],
        messages: [],
        timeWindow: { begin: FIXED - HOUR_MS, end: FIXED, since: '60 MINUTES AGO', until: 'NOW', compareWith: null },
      },
    });
  });

  it('reports the window a long Metric query snapped to (rollupSnapping), and answers account-wide queries', async () => {
    const until = Date.UTC(2026, 10, 22, 0, 3);
    const nrql = `SELECT count(*) FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'Apdex' SINCE ${until - 47 * HOUR_MS - 59 * 60_000} UNTIL ${until}`;
    const query = `query Q($id: Int!, $q: Nrql!) { actor { account(id: $id) { nrql(query: $q) { results metadata { timeWindow { begin end } } } } } }`;
    const body = await post<{ actor: { account: { nrql: NrqlContainer & { metadata: unknown } } } }>(query, { id: PRIMARY, q: nrql });
    expect(body.errors).toBeUndefined();
    expect(body.data?.actor.account.nrql.metadata).toEqual({ timeWindow: { begin: Date.UTC(2026, 10, 20, 0, 0), end: Date.UTC(2026, 10, 22, 0, 0) } });
    const wide = await post<{ actor: { account: { nrql: NrqlContainer } } }>(query, { id: PRIMARY, q: `SELECT uniques(appId) AS ids FROM Metric WHERE metricTimesliceName = 'Apdex' SINCE 10 minutes ago` });
    expect(wide.errors).toBeUndefined();
    expect(wide.data?.actor.account.nrql.results[0]?.ids).toEqual(expect.arrayContaining([app.id]));
  });

  it('only reads the account it is asked on', async () => {
    const nrql = `SELECT count(${V}) AS c FROM Metric WHERE appId = ${foreign.id} SINCE ${S} UNTIL ${U}`;
    const query = `query Q($id: Int!, $q: Nrql!) { actor { account(id: $id) { nrql(query: $q) { results } } } }`;
    const onPrimary = await post<{ actor: { account: { nrql: NrqlContainer } } }>(query, { id: PRIMARY, q: nrql }, MULTI);
    expect(onPrimary.data?.actor.account.nrql.results).toEqual([{ c: 0 }]);
    const onSecondary = await post<{ actor: { account: { nrql: NrqlContainer } } }>(query, { id: SECONDARY, q: nrql }, MULTI);
    expect(onSecondary.data?.actor.account.nrql.results).toEqual(direct(nrql, [SECONDARY]).results);
    expect(onSecondary.data?.actor.account.nrql.results[0]?.c).toBeGreaterThan(0);
    const refused = await post<{ actor: { account: null } }>(query, { id: SECONDARY, q: nrql }, DEMO);
    expect(refused.errors?.[0]).toMatchObject({ message: `You are not authorized to query account ${SECONDARY}`, extensions: { errorClass: 'FORBIDDEN' } });
  });

  it('takes the query only as a string', async () => {
    const body = await post(`query Q($q: Nrql!) { actor { account(id: ${PRIMARY}) { nrql(query: $q) { results } } } }`, { q: 42 });
    expect(body.data).toBeUndefined();
    expect(body.errors?.[0]?.message).toMatch(/Nrql cannot represent 42/);
    const literal = await post(`{ actor { account(id: ${PRIMARY}) { nrql(query: 42) { results } } } }`, {});
    expect(literal.errors?.[0]?.message).toMatch(/Nrql cannot represent/);
  });
});

describe('Actor.nrql', () => {
  const query = `query Q($accounts: [Int!]!, $q: Nrql!) { actor { nrql(accounts: $accounts, query: $q) { results nrql } } }`;
  const nrql = `SELECT count(${V}) AS c FROM Metric WHERE appId IN (${app.id}, ${foreign.id}) AND metricTimesliceName = 'HttpDispatcher' FACET appId SINCE ${S} UNTIL ${U}`;

  it('queries several visible accounts at once', async () => {
    const body = await post<{ actor: { nrql: NrqlContainer } }>(query, { accounts: [PRIMARY, SECONDARY], q: nrql }, MULTI);
    expect(body.errors).toBeUndefined();
    expect(body.data?.actor.nrql.results).toEqual(direct(nrql, [PRIMARY, SECONDARY]).results);
    expect(body.data?.actor.nrql.results.map((row) => row.facet).sort()).toEqual([app.id, foreign.id].sort());
  });

  it('refuses an account the key cannot see, and more than 5 accounts', async () => {
    const foreignAccount = await post<{ actor: { nrql: null } }>(query, { accounts: [PRIMARY, SECONDARY], q: nrql }, DEMO);
    expect(foreignAccount.errors).toEqual([
      expect.objectContaining({ message: `You are not authorized to query account ${SECONDARY}`, path: ['actor', 'nrql'], extensions: { errorClass: 'FORBIDDEN' } }),
    ]);
    expect(foreignAccount.data?.actor.nrql).toBeNull();
    const tooMany = await post(query, { accounts: [1, 2, 3, 4, 5, 6], q: nrql }, MULTI);
    expect(tooMany.errors?.[0]).toMatchObject({ extensions: { errorClass: 'INVALID_INPUT' } });
    const none = await post(query, { accounts: [], q: nrql }, MULTI);
    expect(none.errors?.[0]).toMatchObject({ extensions: { errorClass: 'INVALID_INPUT' } });
  });
});

describe('the gateway’s own metric queries run on the sandbox', () => {
  const document = readFileSync(new URL('../../mappings/applications/ApplicationMetricData.graphql', import.meta.url), 'utf8');
  const names = ['HttpDispatcher', 'Apdex', 'Errors/all', 'Memory/Physical', 'CPU/User Time', 'CPU/User/Utilization', 'Nope'];

  it('answers every formula of every metric family, per bucket and summarized', async () => {
    const items = METRIC_FAMILIES.flatMap((family, f) => Object.values(family.formulas).map((expression, i) => ({ alias: `v${f}_${i}`, expression })));
    for (const timeseriesMs of [undefined, 10 * 60_000]) {
      const dataQuery = timesliceDataQuery({ scope: [{ attribute: 'appId', value: app.id }], names, items, since: S, until: U, timeseriesMs });
      const knownQuery = metricNamesQuery({ scope: [{ attribute: 'appId', value: app.id }], names, since: FIXED - 7 * 24 * HOUR_MS, until: FIXED });
      const body = await post<DataAndKnown>(document, { accountId: PRIMARY, guid: app.guid, data: dataQuery, known: knownQuery, withKnown: true, timeout: 30, knownTimeout: 5 });
      expect(body.errors).toBeUndefined();
      const results = body.data?.actor.account?.data?.results ?? [];
      const known = metricsOf(app, data).map((metric) => metric.name).filter((name) => names.includes(name)).sort();
      expect(new Set(results.map((row) => row.facet))).toEqual(new Set(known));
      expect(results).toHaveLength(known.length * (timeseriesMs === undefined ? 1 : 6));
      expect(body.data?.actor.account?.known?.results).toEqual([{ names: known }]);
    }
  });
});
