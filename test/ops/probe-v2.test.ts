import { createServer, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox, type SandboxBehaviours } from '../../sandbox/server.ts';
import { ProbeReport } from '../../src/probe/report.ts';
import { compareReadRoutes } from '../../src/probe/routes.ts';
import { runProbe } from '../../src/probe/run.ts';
import { V2_PROBES, compareFields } from '../../src/probe/v2-probes.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway } from '../support/harness.ts';

/**
 * The probes that say what they compared: a route both sides refuse is not agreement, and the
 * probes that read v2 beside NerdGraph (src/probe/v2-probes.ts) plus the scope probe, each run
 * against the sandbox as it is (confirming) and against the sandbox made to behave the other
 * way (test-only behaviours, sandbox/behaviours.ts: refuting).
 */
const now = (): number => FIXED_NOW;
const NEW_PROBES = ['unscoped-rows-have-no-scope', ...V2_PROBES.map((probe) => probe.name)];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const json = { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/json', Accept: 'application/json' };

async function probeSandbox(behave: Partial<SandboxBehaviours>, options: { legacy?: boolean; baseline?: boolean } = {}) {
  const sandbox = createSandbox({ apmApps: 20, now, behave });
  const server = await sandbox.listen(0, '127.0.0.1');
  cleanups.push(() => server.close());
  if (options.baseline) {
    // A baseline condition made through the legacy face, on the second policy of the first page.
    const policy = sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT).sort((a, b) => a.id - b.id)[1];
    const created = await fetch(`${server.url}/v2/alerts_nrql_conditions/policies/${policy?.id}.json`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        nrql_condition: {
          type: 'baseline',
          name: 'Probe baseline',
          enabled: true,
          baseline_direction: 'upper_only',
          terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '3', time_function: 'all' }],
          nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' },
          value_function: 'single_value',
          violation_time_limit_seconds: 3600,
        },
      }),
    });
    expect(created.status).toBeLessThan(300);
  }
  const nerdgraphUrl = `${server.url}/graphql`;
  // A policy made CUSTOM through NerdGraph (the one face that takes it), for policy-custom-preference-on-v2.
  const custom = await fetch(nerdgraphUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'API-Key': DEMO_KEY },
    body: JSON.stringify({
      query: 'mutation ($accountId: Int!, $policy: AlertsPolicyInput!) { alertsPolicyCreate(accountId: $accountId, policy: $policy) { id } }',
      variables: { accountId: PRIMARY_ACCOUNT, policy: { name: 'Probe custom grouping', incidentPreference: 'CUSTOM' } },
    }),
  });
  expect(((await custom.json()) as { data?: { alertsPolicyCreate?: { id?: string } } }).data?.alertsPolicyCreate?.id).toBeTruthy();
  let legacy;
  if (options.legacy !== false) {
    const gateway = await createTestGateway({ nerdgraphUrl, now });
    // No read route compared: only the probes themselves read v2 here.
    legacy = { url: server.url, mappings: await loadMappings(), translate: async (path: string, headers: Record<string, string>) => gateway.app.request(path, { headers }), only: () => false };
  }
  const report = await runProbe({ nerdgraphUrl, apiKey: DEMO_KEY, accountId: PRIMARY_ACCOUNT, now, ...(legacy && { legacy }) });
  expect(ProbeReport.parse(report)).toEqual(report);
  expect(JSON.stringify(report)).not.toContain(DEMO_KEY);
  const byName = Object.fromEntries(report.probes.map((probe) => [probe.name, probe]));
  return { report, byName, sandbox };
}

describe('the probes that say what they compared', () => {
  it('confirms each new probe on the sandbox as it is, and says what it compared', async () => {
    const { byName, sandbox } = await probeSandbox({}, { baseline: true });
    for (const name of NEW_PROBES) expect(byName[name]?.verdict, `${name}: ${byName[name]?.evidence}`).toBe('confirmed');
    expect(byName['unscoped-rows-have-no-scope']?.evidence).toMatch(/app \d+: \d+ rows' calls without the filter, \d+ with `scope IS NULL`/);
    // One condition of each type the account has, each compared field by field.
    const fields = byName['v2-nrql-conditions-field-by-field']?.evidence ?? '';
    expect(fields).toMatch(/static condition \d+ \(policy \d+\): \d+ fields alike/);
    expect(fields).toMatch(/baseline condition \d+ \(policy \d+\): \d+ fields alike/);
    expect(fields).toContain('no outlier condition');
    expect(byName['browser-side-only-while-loader-on']?.evidence).toMatch(/all \d+ browser apps serving APM apps read have a loader other than NONE/);
    expect(byName['nrql-condition-of-other-family-is-absent']?.evidence).toMatch(/APM condition \d+ .*answered null/);
    expect(byName['v2-post-on-list-route-is-read']?.evidence).toMatch(/answered 200 with the same \d+ applications as the GET/);
    expect(byName['policy-custom-preference-on-v2']?.evidence).toMatch(/of 1 CUSTOM policies on NerdGraph \(\d+ read\): policy \d+: "CUSTOM"$/);
    expect(byName['policy-filter-name-trimmed']?.evidence).toMatch(/^policy \d+: filter\[name\]=%20<its name> found it/);
    // Four families have a condition in the first policies; none has an entity to name it.
    const entities = byName['condition-entity-names-family']?.evidence ?? '';
    for (const family of ['alerts_conditions', 'alerts_nrql_conditions', 'alerts_external_service_conditions', 'alerts_synthetics_conditions']) {
      expect(entities).toMatch(new RegExp(`${family} \\d+: no entity`));
    }
    // Read-only but for the baseline condition and the CUSTOM policy this test made itself.
    expect(sandbox.writes().total).toBe(2);
  });

  it('refutes each new probe where the sandbox is made to behave the other way, naming what differs', async () => {
    const { byName } = await probeSandbox({
      unscopedRowsHaveNoScope: false,
      browserSideOnlyWhileLoaderOn: false,
      nrqlConditionOfOtherFamily: 'error',
      nrqlOffsetReadsAsCadenceDelay: false,
      legacyPostServesRead: false,
      legacyShowsCustomPreference: false,
      legacyPolicyFilterNameTrimmed: false,
      conditionEntities: 'family-tagged',
    });
    for (const name of NEW_PROBES) expect(byName[name]?.verdict, `${name}: ${byName[name]?.evidence}`).toBe('refuted');
    expect(byName['unscoped-rows-have-no-scope']?.evidence).toMatch(/, 0 with `scope IS NULL`: unscoped rows carry a scope/);
    expect(byName['v2-nrql-conditions-field-by-field']?.evidence).toMatch(/static condition \d+ \(policy \d+\): nrql_conditions\[\]\.nrql\.since_value(, nrql_conditions\[\]\.[\w.]+)* differ of \d+ fields \[nrql\.since_value: legacy "\d+", translated [^\]]+\]/);
    // The browser side of a loader-NONE app: what v2 shows beside what the translation shows
    // (whatever the translation says, the NONE side refutes the list's assumption).
    expect(byName['browser-side-only-while-loader-on']?.evidence).toMatch(/have the loader NONE .*legacy list enable_real_user_monitoring false, end_user_summary present.*translated list enable_real_user_monitoring (true|false)/);
    expect(byName['nrql-condition-of-other-family-is-absent']?.evidence).toMatch(/error of class upstream_failure, neither null nor NOT_FOUND/);
    // Switched off: a POST to the list answers 405.
    expect(byName['v2-post-on-list-route-is-read']?.evidence).toMatch(/answered 405/);
    expect(byName['policy-custom-preference-on-v2']?.evidence).toMatch(/policy \d+: legacy "PER_POLICY"/);
    expect(byName['policy-filter-name-trimmed']?.evidence).toMatch(/filter\[name\]=%20<its name> answered 200 without it, filter\[name\]=<its name> found it/);
    expect(byName['condition-entity-names-family']?.evidence).toMatch(/alerts_external_service_conditions \d+ \(AIOPS\/CONDITION\): its tag conditionFamily names the family/);
  });

  it('confirms the other-family probe on a NOT_FOUND error too, and answers unknown without a legacy API where only v2 can tell', async () => {
    const { byName } = await probeSandbox({ nrqlConditionOfOtherFamily: 'not-found' });
    expect(byName['nrql-condition-of-other-family-is-absent']).toMatchObject({ verdict: 'confirmed', evidence: expect.stringMatching(/NOT_FOUND error/) });
    const alone = await probeSandbox({ browserSideOnlyWhileLoaderOn: false }, { legacy: false });
    for (const name of ['v2-nrql-conditions-field-by-field', 'nrql-condition-of-other-family-is-absent', 'v2-post-on-list-route-is-read', 'policy-filter-name-trimmed', 'condition-entity-names-family']) {
      expect(alone.byName[name]?.verdict, name).toBe('unknown');
    }
    // NerdGraph alone finds the CUSTOM policy; what v2 shows of it needs the legacy API.
    expect(alone.byName['policy-custom-preference-on-v2']).toMatchObject({ verdict: 'unknown', evidence: expect.stringMatching(/^1 CUSTOM policies on NerdGraph; no legacy API compared/) });
    // NerdGraph alone tells the browser side; what v2 showed is left unknown in the evidence.
    expect(alone.byName['browser-side-only-while-loader-on']).toMatchObject({ verdict: 'refuted', evidence: expect.stringContaining('no legacy API compared') });
  });

  it('compares field by field: a value or a missing key differs, a documented gap and an extra key do not', () => {
    const legacy = { id: 1, name: 'a', terms: [{ duration: '5' }], value_function: 'sum', nrql: { since_value: '3' } };
    const translated = { id: 1, name: 'a', terms: [{ duration: '6' }], value_function: 'single_value', entity_guid: 'x' };
    expect(compareFields(legacy, translated, 'c[].', ['c[].value_function'])).toEqual({
      compared: 4,
      differing: ['c[].terms[].duration', 'c[].nrql.since_value (missing)'],
      gaps: ['c[].value_function'],
      extra: ['c[].entity_guid'],
      examples: ['terms[0].duration: legacy "5", translated "6"', 'nrql.since_value: legacy "3", translated (missing)'],
    });
  });
});

describe('route comparison: agreement needs answers', () => {
  let legacyServer: Server | undefined;
  afterAll(() => legacyServer?.close());

  it('reports a route both sides refuse alike (422 and 422) as unknown, not agree', async () => {
    // A legacy API that lists one application and refuses every other request with v2's 422.
    legacyServer = createServer((req, res) => {
      const list = req.url === '/v2/applications.json';
      res.writeHead(list ? 200 : 422, { 'content-type': 'application/json' });
      res.end(JSON.stringify(list ? { applications: [{ id: 7, name: 'one', reporting: true }] } : { error: { title: 'refused' } }));
    });
    await new Promise<void>((resolve) => legacyServer?.listen(0, '127.0.0.1', resolve));
    const address = legacyServer.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const refused = async (): Promise<Response> => new Response(JSON.stringify({ error: { title: 'refused' } }), { status: 422, headers: { 'content-type': 'application/json' } });
    const outcome = await compareReadRoutes({
      mappings: await loadMappings(),
      legacyUrl: url,
      apiKey: DEMO_KEY,
      accountId: PRIMARY_ACCOUNT,
      now: FIXED_NOW,
      translate: refused,
      only: (template) => template === '/v2/applications/{id}.{format}',
    });
    expect(outcome.routes).toHaveLength(1);
    expect(outcome.routes[0]).toMatchObject({ result: 'unknown', status: { legacy: 422, translated: 422 }, outcome: expect.stringContaining('no answer compared') });
  });
});
