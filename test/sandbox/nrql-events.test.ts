/**
 * NRQL over deployment events (nrql/parser.ts, nrql/engine.ts): raw columns from
 * `Deployment` and `ChangeTrackingEvent`, as the gateway lists an app's deployments.
 */
import { parse, validate } from 'graphql';
import { beforeEach, describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import type { SandboxApp, SandboxDeployment } from '../../sandbox/model.ts';
import { NRQL_MESSAGES, NrqlError, recordChangeTrackingDetails, runNrql, type NrqlOutcome } from '../../sandbox/nrql/engine.ts';
import { NrqlSyntaxError, parseNrql } from '../../sandbox/nrql/parser.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { deploymentsOf, recordDeployment, removeApplication, updateApplication } from '../../sandbox/writes.ts';
import { hasRealSchema, realNerdGraphSchema } from '../support/schema.ts';

const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const DAY_MS = 86_400_000;
const PRIMARY_ID = 1000001;
const SECONDARY_ID = 1000002;
const COLUMNS = 'timestamp, changeTrackingId, deploymentId, version, changelog, description, user';
const SINCE = FIXED - 400 * DAY_MS;
const UNTIL = FIXED + DAY_MS;

let sandbox: Sandbox;

beforeEach(() => {
  // Events are written then queried at once here: no ingest lag (test/sandbox/ingest.test.ts has it).
  sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED, behave: { ingestLagMs: 0 } });
});

function run(text: string, accountIds: number[] = [PRIMARY_ID]): NrqlOutcome {
  return runNrql(text, { data: sandbox.data, accountIds, now: FIXED });
}

/** The gateway's deployment listing query (src/upstream/nrql.ts builds the same shape). */
function gatewayQuery(guid: string, since = SINCE, until = UNTIL, limit = 'MAX'): string {
  return (
    `SELECT ${COLUMNS} FROM Deployment, ChangeTrackingEvent ` +
    `WHERE entity.guid = ${quoteLiteral(guid)} AND (category = 'Deployment' OR category IS NULL) ` +
    `SINCE ${since} UNTIL ${until} LIMIT ${limit}`
  );
}

/** A primary-account app with at least `count` seeded deployments. */
function appWithDeployments(count = 2, accountId = PRIMARY_ID): SandboxApp {
  const app = sandbox.data.apps.find((candidate) => candidate.accountId === accountId && deploymentsOf(sandbox.data, candidate).length >= count);
  if (!app) throw new Error('no app fits the test');
  return app;
}

function track(app: SandboxApp, fields: Partial<{ revision: string; changelog: string | null; description: string | null; user: string | null; timestamp: number }> = {}): SandboxDeployment {
  return recordDeployment(
    sandbox.data,
    app,
    { revision: 'ct-1', changelog: null, description: null, user: null, timestamp: FIXED - 1000, ...fields },
    'ChangeTrackingEvent',
  );
}

function syntaxError(text: string): string | null {
  try {
    parseNrql(text);
  } catch (error) {
    expect(error).toBeInstanceOf(NrqlSyntaxError);
    return (error as NrqlSyntaxError).found;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseNrql: raw event columns', () => {
  it('parses the gateway’s deployment query', () => {
    const query = parseNrql(gatewayQuery('GUID', 1, 2));
    expect(query).toEqual({
      select: COLUMNS.split(', ').map((attribute) => ({ expression: { type: 'attribute', attribute }, alias: null })),
      from: ['Deployment', 'ChangeTrackingEvent'],
      where: {
        type: 'and',
        left: { type: 'compare', attribute: 'entity.guid', operator: '=', value: 'GUID' },
        right: {
          type: 'or',
          left: { type: 'compare', attribute: 'category', operator: '=', value: 'Deployment' },
          right: { type: 'isNull', attribute: 'category', negated: false },
        },
      },
      facets: [],
      since: 1,
      until: 2,
      timeseries: null,
      limit: 5000,
    });
  });

  it('parses *, aliases and backquoted names', () => {
    expect(parseNrql('SELECT * FROM Deployment').select).toEqual([{ expression: { type: 'wildcard' }, alias: null }]);
    expect(parseNrql("SELECT version AS v, `entity.guid` AS 'guid', user FROM ChangeTrackingEvent").select).toEqual([
      { expression: { type: 'attribute', attribute: 'version' }, alias: 'v' },
      { expression: { type: 'attribute', attribute: 'entity.guid' }, alias: 'guid' },
      { expression: { type: 'attribute', attribute: 'user' }, alias: null },
    ]);
  });

  it.each([
    ['SELECT appName FROM Metric', 'appName'],
    ['SELECT * FROM Metric', '*'],
    ['SELECT version FROM Deployment, Metric', 'version'],
    ['SELECT version, count(newrelic.timeslice.value) FROM Deployment', 'count'],
    ['SELECT count(newrelic.timeslice.value), version FROM Deployment', 'version'],
    ['SELECT *, version FROM Deployment', 'version'],
    ['SELECT version, * FROM Deployment', '*'],
    ['SELECT * AS x FROM Deployment', 'AS'],
    ['SELECT version FROM Deployment FACET user', 'FACET'],
    ['SELECT version FROM Deployment TIMESERIES 1 hour', 'TIMESERIES'],
    ['SELECT version + 1 FROM Deployment', '+'],
    ['SELECT version FROM Deployment,', null],
    ['SELECT version FROM Deployment LIMIT 5001', '5001'],
  ])('refuses %s at %s', (text, found) => {
    expect(syntaxError(text)).toBe(found);
  });
});

describe('runNrql: deployment events', () => {
  it('lists an app’s seeded Deployment events in the window, newest first, with their attributes', () => {
    const app = appWithDeployments();
    const seeded = deploymentsOf(sandbox.data, app);
    const { results, metadata } = run(gatewayQuery(app.guid));
    expect(results).toEqual(
      seeded.map((deployment) => ({
        timestamp: deployment.timestamp,
        changeTrackingId: null,
        deploymentId: deployment.changeTrackingId,
        version: deployment.revision,
        changelog: deployment.changelog,
        description: deployment.description,
        user: deployment.user,
      })),
    );
    expect(results.length).toBeGreaterThanOrEqual(2);
    expect(metadata).toEqual({
      eventTypes: ['Deployment', 'ChangeTrackingEvent'],
      facets: [],
      messages: [],
      timeWindow: { begin: SINCE, end: UNTIL, since: String(SINCE), until: String(UNTIL), compareWith: null },
    });
  });

  it('merges change-tracking events in, newest first, and tells the two event types apart', () => {
    const app = appWithDeployments();
    const [newest, oldest] = [deploymentsOf(sandbox.data, app)[0] as SandboxDeployment, deploymentsOf(sandbox.data, app).at(-1) as SandboxDeployment];
    const between = track(app, { revision: 'between', timestamp: (newest.timestamp + oldest.timestamp) / 2, user: 'ci' });
    const latest = track(app, { revision: 'latest', changelog: 'notes', description: 'the latest' });
    const rows = run(gatewayQuery(app.guid)).results;
    expect(rows[0]).toEqual({
      timestamp: FIXED - 1000,
      changeTrackingId: latest.changeTrackingId,
      deploymentId: null,
      version: 'latest',
      changelog: 'notes',
      description: 'the latest',
      user: null,
    });
    expect(rows.map((row) => row.changeTrackingId ?? row.deploymentId)).toEqual(deploymentsOf(sandbox.data, app).map((deployment) => deployment.changeTrackingId));
    expect(rows.map((row) => row.changeTrackingId)).toContain(between.changeTrackingId);
    const timestamps = rows.map((row) => row.timestamp as number);
    expect(timestamps).toEqual([...timestamps].sort((a, b) => b - a));

    const where = `WHERE entity.guid = '${app.guid}' SINCE ${SINCE} UNTIL ${UNTIL}`;
    expect(run(`SELECT changeTrackingId, category, type FROM ChangeTrackingEvent ${where}`).results).toEqual([
      { changeTrackingId: latest.changeTrackingId, category: 'Deployment', type: 'Basic' },
      { changeTrackingId: between.changeTrackingId, category: 'Deployment', type: 'Basic' },
    ]);
    expect(run(`SELECT deploymentId, category FROM Deployment ${where}`).results).toEqual(
      deploymentsOf(sandbox.data, app)
        .filter((deployment) => deployment.eventType === 'Deployment')
        .map((deployment) => ({ deploymentId: deployment.changeTrackingId, category: null })),
    );
  });

  it('filters rows by the WHERE: category tests, IS NULL, other attributes', () => {
    const app = appWithDeployments();
    const tracked = track(app);
    const both = `FROM Deployment, ChangeTrackingEvent WHERE entity.guid = '${app.guid}'`;
    const window = `SINCE ${SINCE} UNTIL ${UNTIL}`;
    const ids = (text: string): unknown[] => run(text).results.map((row) => row.id);
    const all = deploymentsOf(sandbox.data, app).map((deployment) => deployment.changeTrackingId);
    expect(run(`SELECT changeTrackingId AS id ${both} AND category = 'Deployment' ${window}`).results).toEqual([{ id: tracked.changeTrackingId }]);
    expect(ids(`SELECT deploymentId AS id ${both} AND category IS NULL ${window}`)).toEqual(all.slice(1));
    expect(ids(`SELECT version AS id ${both} AND version = 'ct-1' ${window}`)).toEqual(['ct-1']);
    expect(ids(`SELECT version AS id ${both} AND NOT (category IS NULL) AND type IN ('Basic') ${window}`)).toEqual(['ct-1']);
    // ChangeTrackingEvent rows have no appId (NRDB keys them by entity.guid): only the Deployment rows match.
    expect(run(`SELECT version ${both} AND appId = ${app.id} AND accountId = ${PRIMARY_ID} ${window}`).results).toHaveLength(all.length - 1);
    expect(run(`SELECT version ${both} AND accountId = ${PRIMARY_ID} ${window}`).results).toHaveLength(all.length);
    expect(run(`SELECT version ${both} AND appId = 1 ${window}`).results).toEqual([]);
  });

  it('names the app by appId or appName as well, or reads the whole account', () => {
    const app = appWithDeployments();
    const count = deploymentsOf(sandbox.data, app).length;
    expect(run(`SELECT version FROM Deployment WHERE appId = ${app.id} SINCE ${SINCE} UNTIL ${UNTIL}`).results).toHaveLength(count);
    expect(run(`SELECT version FROM Deployment WHERE appName = ${quoteLiteral(app.name)} SINCE ${SINCE} UNTIL ${UNTIL}`).results).toHaveLength(count);
    // No app named: every app of the account, as NRDB reads an account's events (alerts_events).
    const whole = run(`SELECT version, appId FROM Deployment WHERE category IS NULL SINCE ${SINCE} UNTIL ${UNTIL} LIMIT MAX`).results as Array<{ appId: number }>;
    expect(whole.filter((row) => row.appId === app.id)).toHaveLength(count);
    expect(new Set(whole.map((row) => row.appId)).size).toBeGreaterThan(1);
    expect(() => run(`SELECT version FROM Deployment WHERE appId = ${app.id} SINCE ${UNTIL} UNTIL ${SINCE}`)).toThrowError(new NrqlError(NRQL_MESSAGES.startAfterEnd));
  });

  it('covers [SINCE, UNTIL), by default the last hour', () => {
    const app = appWithDeployments();
    const recent = track(app, { timestamp: FIXED - 10 * 60_000 });
    track(app, { timestamp: FIXED - 2 * 3_600_000 });
    const select = `SELECT changeTrackingId FROM ChangeTrackingEvent WHERE entity.guid = '${app.guid}'`;
    expect(run(select).results).toEqual([{ changeTrackingId: recent.changeTrackingId }]);
    expect(run(`${select} SINCE ${recent.timestamp} UNTIL ${recent.timestamp + 1}`).results).toHaveLength(1);
    expect(run(`${select} SINCE ${recent.timestamp + 1} UNTIL ${FIXED}`).results).toEqual([]);
    expect(run(`${select} SINCE ${SINCE} UNTIL ${recent.timestamp}`).results).toHaveLength(1);
  });

  it('returns at most LIMIT rows (default 100, MAX 5000)', () => {
    const app = appWithDeployments(0);
    for (let i = 0; i < 150; i++) track(app, { revision: `r${i}`, timestamp: FIXED - 1000 - i * 1000 });
    const select = `SELECT version FROM ChangeTrackingEvent WHERE entity.guid = '${app.guid}' SINCE ${SINCE} UNTIL ${UNTIL}`;
    expect(run(select).results).toHaveLength(100);
    expect(run(`${select} LIMIT 7`).results).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((version) => ({ version })));
    expect(run(`${select} LIMIT MAX`).results).toHaveLength(150);
  });

  it('returns null for a column a row lacks, and every own attribute for *', () => {
    const app = appWithDeployments();
    const tracked = track(app, { revision: 'with-details', user: 'me' });
    recordChangeTrackingDetails(sandbox.data, tracked.changeTrackingId, { type: 'Canary', commit: 'abc123', deepLink: null });
    const where = `WHERE entity.guid = '${app.guid}' SINCE ${SINCE} UNTIL ${UNTIL} LIMIT 1`;
    expect(run(`SELECT nothing, version, appId, appName FROM ChangeTrackingEvent ${where}`).results).toEqual([
      { nothing: null, version: 'with-details', appId: null, appName: null },
    ]);
    expect(run(`SELECT * FROM ChangeTrackingEvent ${where}`).results).toEqual([
      {
        timestamp: FIXED - 1000,
        changeTrackingId: tracked.changeTrackingId,
        category: 'Deployment',
        type: 'Canary',
        version: 'with-details',
        changelog: null,
        description: null,
        user: 'me',
        'entity.guid': app.guid,
        commit: 'abc123',
      },
    ]);
    const seeded = deploymentsOf(sandbox.data, app).find((deployment) => deployment.eventType === 'Deployment') as SandboxDeployment;
    expect(run(`SELECT * FROM Deployment ${where}`).results).toEqual([
      {
        timestamp: seeded.timestamp,
        deploymentId: seeded.changeTrackingId,
        version: seeded.revision,
        changelog: seeded.changelog,
        description: seeded.description,
        user: seeded.user,
        'entity.guid': app.guid,
      },
    ]);
  });

  it('reads only the visible accounts, and nothing of other event types', () => {
    const foreign = appWithDeployments(1, SECONDARY_ID);
    expect(run(gatewayQuery(foreign.guid)).results).toEqual([]);
    expect(run(gatewayQuery(foreign.guid), [SECONDARY_ID]).results).toHaveLength(deploymentsOf(sandbox.data, foreign).length);
    expect(run(gatewayQuery(foreign.guid), [PRIMARY_ID, SECONDARY_ID]).results).toHaveLength(deploymentsOf(sandbox.data, foreign).length);
    const { results, metadata } = run(`SELECT name FROM Transaction WHERE appId = ${foreign.id}`);
    expect(results).toEqual([]);
    expect(metadata.eventTypes).toEqual(['Transaction']);
  });

  it('follows writes: renamed apps by their new name, deleted apps gone', () => {
    const app = appWithDeployments();
    const count = deploymentsOf(sandbox.data, app).length;
    updateApplication(sandbox.data, app, { name: 'Renamed For NRQL' });
    expect(run(`SELECT version FROM Deployment WHERE appName = 'Renamed For NRQL' SINCE ${SINCE} UNTIL ${UNTIL}`).results).toHaveLength(count);
    const metric = `SELECT count(newrelic.timeslice.value) AS calls FROM Metric WHERE appName = 'Renamed For NRQL' AND metricTimesliceName = 'HttpDispatcher'`;
    expect(run(metric).results).toEqual(run(`SELECT count(newrelic.timeslice.value) AS calls FROM Metric WHERE appId = ${app.id} AND metricTimesliceName = 'HttpDispatcher'`).results);
    app.reporting = false;
    removeApplication(sandbox.data, app);
    expect(run(gatewayQuery(app.guid)).results).toEqual([]);
    expect(run(`SELECT version FROM Deployment WHERE appId = ${app.id} SINCE ${SINCE} UNTIL ${UNTIL}`).results).toEqual([]);
  });
});

describe('deployment events over POST /graphql', () => {
  const DOCUMENT = `
    query ApplicationDeployments($accountId: Int!, $guid: EntityGuid!, $events: Nrql!) {
      actor {
        entity(guid: $guid) { guid accountId }
        account(id: $accountId) { nrql(query: $events) { results metadata { eventTypes } } }
        nrql(accounts: [$accountId], query: $events) { results }
      }
    }`;

  it.skipIf(!hasRealSchema)('validates against the real NerdGraph schema', () => {
    expect(validate(realNerdGraphSchema(), parse(DOCUMENT)).map((error) => error.message)).toEqual([]);
  });

  it('answers the gateway’s query through account.nrql and actor.nrql, scoped to the key', async () => {
    const app = appWithDeployments();
    track(app);
    const post = async (accountId: number, guid: string, apiKey: string) => {
      const response = await sandbox.app.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': apiKey },
        body: JSON.stringify({ query: DOCUMENT, variables: { accountId, guid, events: gatewayQuery(guid) } }),
      });
      return (await response.json()) as { data: { actor: Record<string, unknown> } | null; errors?: Array<{ message: string }> };
    };
    const body = await post(PRIMARY_ID, app.guid, 'NRAK-SANDBOX-DEMO');
    expect(body.errors).toBeUndefined();
    const expected = run(gatewayQuery(app.guid)).results;
    expect(expected.length).toBe(deploymentsOf(sandbox.data, app).length);
    expect(body.data?.actor).toEqual({
      entity: { guid: app.guid, accountId: PRIMARY_ID },
      account: { nrql: { results: expected, metadata: { eventTypes: ['Deployment', 'ChangeTrackingEvent'] } } },
      nrql: { results: expected },
    });
    const foreign = appWithDeployments(1, SECONDARY_ID);
    const denied = await post(SECONDARY_ID, foreign.guid, 'NRAK-SANDBOX-DEMO');
    expect(denied.errors?.map((error) => error.message)).toContain(`You are not authorized to query account ${SECONDARY_ID}`);
    const allowed = await post(SECONDARY_ID, foreign.guid, 'NRAK-SANDBOX-SECONDARY');
    expect(allowed.errors).toBeUndefined();
    expect((allowed.data?.actor.account as { nrql: { results: unknown[] } }).nrql.results).toHaveLength(deploymentsOf(sandbox.data, foreign).length);
  });
});
