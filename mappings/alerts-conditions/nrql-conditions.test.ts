import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NRQL_CONDITION_PAGES } from './nrql.list.ts';
import { NrqlConditionTitles, nrqlConditionKeys } from './nrql-conditions.ts';
import { BUSY_POLICY_NRQL_CONDITIONS } from '../../sandbox/alerts.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, startSandbox } from '../../test/support/harness.ts';
import { forwardTo, json, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { deadOrigin } from '../../test/support/http.ts';
import { createModesGateway } from '../../test/support/modes.ts';
import { keyPathProblems } from '../../test/support/v2-key-paths.ts';

/**
 * alerts_nrql_conditions (list, show, create, update, delete) and the other families' DELETE in
 * translate mode, over the sandbox's NerdGraph face, with the legacy API pointing at nothing:
 * every answer comes from NerdGraph, in v2's shapes (JSON and XML); bad inputs are v2 4xx; an
 * id of another account is v2's 404 and nothing is changed. Without a rule naming them the
 * routes stay passthrough, even under a `*` catch-all.
 */
const TRANSLATE = '/v2/alerts_nrql_conditions*=translate;DELETE /v2/alerts_*conditions/*=translate';
const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '0.9', time_function: 'all' };

let upstream: Awaited<ReturnType<typeof startSandbox>>;
let gateway: Awaited<ReturnType<typeof createModesGateway>>;

beforeAll(async () => {
  upstream = await startSandbox({ apmApps: 40 });
  gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: await deadOrigin(), routeModes: TRANSLATE });
});
afterAll(async () => {
  await upstream.close();
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await gateway.app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, ...(body !== undefined && typeof body !== 'string' && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: response.status, text, json, link: response.headers.get('link') };
}
const titleOf = (answer: { json: Record<string, unknown> | null }): string => (answer.json?.error as { title: string } | undefined)?.title ?? '';
const stored = (id: number) => upstream.sandbox.data.alerts.conditions.find((c) => c.id === id);
/** v2's keys in v2's order (newrelic-client-go pkg/alerts/nrql_conditions_test.go): type first, entity_guid last. */
const V2_KEYS = ['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'expected_groups', 'ignore_overlap', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid'];
/** The signal of a condition holding the deprecated offset: no method, delay or timer (FN #nrql-since). */
const OFFSET_SIGNAL = (offset: number) => ({ aggregation_window: '60', aggregation_method: null, aggregation_delay: null, aggregation_timer: null, slide_by: null, fill_option: 'none', fill_value: null, evaluation_offset: offset });
const NO_EXPIRATION = { expiration_duration: null, open_violation_on_expiration: false, close_violations_on_expiration: false };
/** The condition entity's GUID as New Relic writes it: base64, no padding, of account|AIOPS|CONDITION|id. */
const conditionGuidText = (guid: unknown): string => (typeof guid === 'string' && !guid.includes('=') ? Buffer.from(guid, 'base64').toString() : `not a GUID: ${String(guid)}`);

describe('alerts_nrql_conditions translated', () => {
  it('creates (static, baseline), lists, updates and deletes with the legacy API unreachable, in v2 shapes', async () => {
    const made = await call('POST', '/v2/alerts_nrql_conditions/policies/100003.json', {
      nrql_condition: { name: 'Errors', enabled: true, runbook_url: 'https://runbooks.example.com/e', terms: [TERM, { ...TERM, priority: 'warning', time_function: 'any', duration: '10', operator: 'equal', threshold: 2 }], nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: '4' } },
    });
    expect(made.status).toBe(201);
    const id = (made.json?.nrql_condition as { id: number }).id;
    const guid = (made.json?.nrql_condition as { entity_guid: string }).entity_guid;
    expect(conditionGuidText(guid)).toBe(`${PRIMARY_ACCOUNT}|AIOPS|CONDITION|${id}`);
    expect(made.json).toEqual({
      nrql_condition: {
        type: 'static',
        id,
        name: 'Errors',
        enabled: true,
        runbook_url: 'https://runbooks.example.com/e',
        value_function: 'single_value',
        expected_groups: null,
        ignore_overlap: null,
        violation_time_limit_seconds: 259200,
        terms: [TERM, { duration: '10', operator: 'equal', priority: 'warning', threshold: '2', time_function: 'any' }],
        nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: '4' },
        signal: OFFSET_SIGNAL(4),
        expiration: NO_EXPIRATION,
        entity_guid: guid,
      },
    });
    // toEqual ignores order; v2's clients (XML ones above all) see it.
    expect(Object.keys(made.json?.nrql_condition as object)).toEqual(V2_KEYS);
    // The store holds the v2 condition the legacy face would show.
    expect(stored(id)?.fields).toMatchObject({ type: 'static', terms: [TERM, { duration: '10', time_function: 'any', operator: 'equal' }], nrql: { since_value: '4' } });

    const baseline = await call('POST', '/v2/alerts_nrql_conditions/policies/100003.xml', `<nrql_condition><type>baseline</type><name>Drop</name><baseline_direction>lower_only</baseline_direction><terms><term><duration>15</duration><operator>above</operator><priority>critical</priority><threshold>3</threshold><time_function>all</time_function></term></terms><nrql><query>SELECT count(*) FROM Transaction</query><since_value>2</since_value></nrql></nrql_condition>`, { 'content-type': 'application/xml' });
    expect(baseline.status).toBe(201);
    expect(baseline.text).toContain('<type>baseline</type>');
    expect(baseline.text).toContain('<baseline_direction>lower_only</baseline_direction>');
    const baselineId = Number(/<id[^>]*>(\d+)<\/id>/.exec(baseline.text)?.[1]);
    // XML in v2's order too: type, then id, ..., entity_guid last.
    expect(baseline.text).toMatch(/<nrql_condition>\s*<type>baseline<\/type>\s*<id[^>]*>\d+<\/id>\s*<name>Drop<\/name>[\s\S]*<\/nrql>\s*<signal>[\s\S]*<\/signal>\s*<expiration>[\s\S]*<\/expiration>\s*<entity_guid>([^<]+)<\/entity_guid>\s*<\/nrql_condition>/);
    expect(conditionGuidText(/<entity_guid>([^<]+)<\/entity_guid>/.exec(baseline.text)?.[1])).toBe(`${PRIMARY_ACCOUNT}|AIOPS|CONDITION|${baselineId}`);

    const listed = await call('GET', '/v2/alerts_nrql_conditions.json?policy_id=100003');
    expect(listed.status).toBe(200);
    const mine = (listed.json?.nrql_conditions as Array<{ id: number; name: string }>).filter((c) => c.id === id || c.id === baselineId);
    expect(mine.map((c) => c.name)).toEqual(['Errors', 'Drop']);
    expect(Object.keys(mine[0]!)).toEqual(V2_KEYS);
    expect(mine[0]).toEqual(made.json?.nrql_condition);
    expect(Object.keys(mine[1]!)).toEqual(['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'baseline_direction', 'expected_groups', 'ignore_overlap', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid']);

    // The show answers what the list holds, under the singular wrapper, in JSON and XML.
    const shown = await call('GET', `/v2/alerts_nrql_conditions/${id}.json`);
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({ nrql_condition: mine[0] });
    expect(Object.keys(shown.json?.nrql_condition as object)).toEqual(V2_KEYS);
    const shownXml = await call('GET', `/v2/alerts_nrql_conditions/${baselineId}.xml`);
    expect(shownXml.status).toBe(200);
    expect(shownXml.text).toMatch(/<nrql_condition>\s*<type>baseline<\/type>\s*<id[^>]*>\d+<\/id>\s*<name>Drop<\/name>/);

    // A client sends back what it read, entity_guid included: the key is ignored, as v2 ignored it (UNCONFIRMED).
    const updated = await call('PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: { ...mine[0], enabled: false, terms: [{ ...TERM, threshold: '7.5' }] } });
    expect(updated.status).toBe(200);
    expect(updated.json?.nrql_condition).toMatchObject({ id, enabled: false, name: 'Errors', terms: [{ ...TERM, threshold: '7.5' }], nrql: { since_value: '4' }, entity_guid: guid });
    expect(Object.keys(updated.json?.nrql_condition as object)).toEqual(V2_KEYS);
    const baselineUpdated = await call('PUT', `/v2/alerts_nrql_conditions/${baselineId}.json`, { nrql_condition: { baseline_direction: 'upper_and_lower' } });
    expect(baselineUpdated.json?.nrql_condition).toMatchObject({ type: 'baseline', baseline_direction: 'upper_and_lower', name: 'Drop' });

    const deleted = await call('DELETE', `/v2/alerts_nrql_conditions/${id}.json`);
    expect(deleted.status).toBe(200);
    expect(deleted.json?.nrql_condition).toMatchObject({ id, name: 'Errors', enabled: false, entity_guid: guid });
    expect(Object.keys(deleted.json?.nrql_condition as object)).toEqual(V2_KEYS);
    expect(stored(id)).toBeUndefined();
    expect((await call('DELETE', `/v2/alerts_nrql_conditions/${id}.json`)).status).toBe(404);
  });

  it('shows a baseline and an outlier condition in JSON with the v2 keys of each type, in v2\'s order', async () => {
    // The sandbox seeds static NRQL conditions only: these two are made through the gateway.
    const baseline = await call('POST', '/v2/alerts_nrql_conditions/policies/100003.json', {
      nrql_condition: { type: 'baseline', name: 'Drop shown', baseline_direction: 'lower_only', terms: [{ ...TERM, threshold: '3' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '2' } },
    });
    const outlier = await call('POST', '/v2/alerts_nrql_conditions/policies/100003.json', {
      nrql_condition: { type: 'outlier', name: 'Odd one shown', expected_groups: 2, ignore_overlap: false, terms: [TERM], nrql: { query: 'SELECT average(duration) FROM Transaction FACET host' } },
    });
    expect([baseline.status, outlier.status]).toEqual([201, 201]);
    const cases = [
      { made: baseline, keys: [...V2_KEYS.slice(0, 6), 'baseline_direction', ...V2_KEYS.slice(6)], typed: { type: 'baseline', baseline_direction: 'lower_only', expected_groups: null, ignore_overlap: null } },
      { made: outlier, keys: V2_KEYS, typed: { type: 'outlier', expected_groups: 2, ignore_overlap: false } },
    ];
    for (const { made, keys, typed } of cases) {
      const id = (made.json?.nrql_condition as { id: number }).id;
      const shown = await call('GET', `/v2/alerts_nrql_conditions/${id}.json`);
      expect(shown.status).toBe(200);
      const condition = shown.json?.nrql_condition as Record<string, unknown>;
      expect(Object.keys(shown.json ?? {})).toEqual(['nrql_condition']);
      expect(Object.keys(condition), typed.type).toEqual(keys);
      expect(condition).toMatchObject({ id, ...typed });
      expect(keyPathProblems(condition, nrqlConditionKeys('nrql_condition', false).paths).problems, typed.type).toEqual([]);
      expect(condition).toEqual(made.json?.nrql_condition);
    }
  });

  it('pages a policy\'s conditions by 50 with v2\'s Link header', async () => {
    const first = await call('GET', '/v2/alerts_nrql_conditions.json?policy_id=100000');
    expect((first.json?.nrql_conditions as unknown[]).length).toBe(50);
    expect(first.link).toContain('page=3>; rel="last"');
    const last = await call('GET', '/v2/alerts_nrql_conditions.json?policy_id=100000&page=3');
    expect((last.json?.nrql_conditions as unknown[]).length).toBe(BUSY_POLICY_NRQL_CONDITIONS - 100);
  });

  it.each([
    ['list without policy_id', 'GET', '/v2/alerts_nrql_conditions.json', undefined, 422, NrqlConditionTitles.policyIdRequired],
    ['list with a malformed policy_id', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=abc', undefined, 422, NrqlConditionTitles.idInvalid('policy_id')],
    ['list of an unknown policy', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=999999', undefined, 404, NrqlConditionTitles.policyNotFound],
    ['list of another account\'s policy', 'GET', '/v2/alerts_nrql_conditions.json?policy_id=110000', undefined, 404, NrqlConditionTitles.policyNotFound],
    ['create in another account\'s policy', 'POST', '/v2/alerts_nrql_conditions/policies/110000.json', { nrql_condition: { name: 'x', terms: [TERM], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } }, 404, NrqlConditionTitles.policyNotFound],
    ['create without the wrapper', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { name: 'x' }, 400, NrqlConditionTitles.missing('nrql_condition')],
    ['create of an outlier without expected_groups', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { type: 'outlier', name: 'x', terms: [TERM], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } }, 422, 'Invalid nrql_condition: expected_groups is required in an outlier condition'],
    ['create of an unknown type', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { type: 'magic', name: 'x', terms: [TERM], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } }, 422, 'Invalid nrql_condition: type'],
    ['create with bad terms', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', terms: [{ ...TERM, duration: 'soon' }], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } }, 422, 'Invalid nrql_condition: terms.0.duration'],
    ['create with no terms', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', terms: [], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } }, 422, 'Invalid nrql_condition: terms'],
    ['create of a baseline with value_function sum', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { type: 'baseline', name: 'x', value_function: 'sum', terms: [TERM], nrql: { query: 'SELECT 1 FROM T' } } }, 422, 'Invalid nrql_condition: value_function sum is only for static conditions, not baseline'],
    ['create with a duration of no whole seconds', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', terms: [{ ...TERM, duration: '0.01' }], nrql: { query: 'SELECT 1 FROM T' } } }, 422, 'Invalid nrql_condition: terms.0.duration must be whole seconds'],
    ['create with since_value and an aggregation method', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', terms: [TERM], nrql: { query: 'SELECT 1 FROM T', since_value: 3 }, signal: { aggregation_method: 'EVENT_FLOW' } } }, 422, 'Invalid nrql_condition: nrql.since_value cannot be set with signal aggregation_method'],
    ['create with a time limit past 30 days', 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', violation_time_limit_seconds: 2592001, terms: [TERM], nrql: { query: 'SELECT 1 FROM T' } } }, 422, 'Invalid nrql_condition: violation_time_limit_seconds must be 300 to 2592000 seconds'],
    ['update of a malformed id', 'PUT', '/v2/alerts_nrql_conditions/abc.json', { nrql_condition: { name: 'x' } }, 404, NrqlConditionTitles.conditionNotFound],
    ['delete of a malformed id', 'DELETE', '/v2/alerts_nrql_conditions/1e3.json', undefined, 404, NrqlConditionTitles.conditionNotFound],
    ['show of a malformed id', 'GET', '/v2/alerts_nrql_conditions/abc.json', undefined, 404, NrqlConditionTitles.conditionNotFound],
    ['show of an unknown id', 'GET', '/v2/alerts_nrql_conditions/999999999.json', undefined, 404, NrqlConditionTitles.conditionNotFound],
  ])('%s: a v2 4xx', async (_name, method, path, body, status, title) => {
    const answer = await call(method, path, body);
    expect(answer.status).toBe(status);
    expect(titleOf(answer)).toContain(title);
  });

  it('a threshold past a double\'s range ("1e400") is v2\'s 422 on threshold, and no mutation is sent', async () => {
    const condition = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions' && c.fields.type === 'static');
    if (!condition) throw new Error('no static NRQL condition');
    const before = upstream.sandbox.writes().total;
    const created = await call('POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: { name: 'x', terms: [{ ...TERM, threshold: '1e400' }], nrql: { query: 'SELECT 1 FROM T', since_value: 3 } } });
    const updated = await call('PUT', `/v2/alerts_nrql_conditions/${condition.id}.json`, { nrql_condition: { terms: [{ ...TERM, threshold: '-1e400' }] } });
    for (const answer of [created, updated]) {
      expect(answer.status).toBe(422);
      expect(titleOf(answer)).toBe('Invalid nrql_condition: terms.0.threshold must be a finite number');
    }
    expect(upstream.sandbox.writes().total).toBe(before);
  });

  it('a condition of another account is 404 on show, update and delete, and stays', async () => {
    const foreign = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === SECONDARY_ACCOUNT && c.family === 'alerts_nrql_conditions');
    if (!foreign) throw new Error('the sandbox world lacks a secondary NRQL condition');
    const shown = await call('GET', `/v2/alerts_nrql_conditions/${foreign.id}.json`);
    expect(shown.status).toBe(404);
    expect(shown.text).not.toContain(String(foreign.fields.name));
    expect((await call('PUT', `/v2/alerts_nrql_conditions/${foreign.id}.json`, { nrql_condition: { name: 'mine' } })).status).toBe(404);
    expect((await call('DELETE', `/v2/alerts_nrql_conditions/${foreign.id}.json`)).status).toBe(404);
    expect(stored(foreign.id)?.fields.name).not.toBe('mine');
  });

  it('refuses changing a condition\'s type, with nothing changed', async () => {
    const condition = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions' && c.fields.type === 'static');
    if (!condition) throw new Error('no static NRQL condition');
    const answer = await call('PUT', `/v2/alerts_nrql_conditions/${condition.id}.json`, { nrql_condition: { type: 'baseline' } });
    expect(answer.status).toBe(422);
    expect(titleOf(answer)).toBe(NrqlConditionTitles.typeChange);
    expect(stored(condition.id)?.fields.type).toBe('static');
  });
});

describe('an update sends evaluationOffset only for a changed since_value', () => {
  it('a PUT echoing the condition read sends no offset (nor the unchanged query); a changed since_value sends it', async () => {
    // A relay recording the GraphQL variables NerdGraph receives, passing every call to the sandbox.
    const relay = await startFakeUpstream((request, res) => forwardTo(upstream.graphqlUrl, request, res));
    try {
      const recorded = await createModesGateway({ routes: 'real', nerdgraphUrl: relay.url, legacyUrl: await deadOrigin(), routeModes: TRANSLATE });
      const request = async (method: string, path: string, body?: unknown) => {
        const response = await recorded.app.request(path, { method, headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
        return { status: response.status, json: (await response.json()) as { nrql_condition: Record<string, unknown> } };
      };
      const made = await request('POST', '/v2/alerts_nrql_conditions/policies/100003.json', { nrql_condition: { name: 'Echoed', terms: [TERM], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' } } });
      expect(made.status).toBe(201);
      const read = made.json.nrql_condition;
      const updateConditions = () => relay.received.filter((r) => r.operationName === 'NrqlConditionStaticUpdate').map((r) => r.variables.condition as Record<string, unknown>);

      // newrelic-client-go sends the whole condition back, since_value included, to rename it.
      const renamed = await request('PUT', `/v2/alerts_nrql_conditions/${String(read.id)}.json`, { nrql_condition: { ...read, name: 'Renamed' } });
      expect(renamed.status).toBe(200);
      expect(renamed.json.nrql_condition).toMatchObject({ name: 'Renamed', nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' } });
      expect(updateConditions()).toHaveLength(1);
      expect(updateConditions()[0]).not.toHaveProperty('nrql');

      const newQuery = await request('PUT', `/v2/alerts_nrql_conditions/${String(read.id)}.json`, { nrql_condition: { nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: 3 } } });
      expect(newQuery.status).toBe(200);
      expect(updateConditions()[1]?.nrql).toEqual({ query: 'SELECT count(*) FROM TransactionError', evaluationOffset: 3, dataAccountId: null });

      const offset = await request('PUT', `/v2/alerts_nrql_conditions/${String(read.id)}.json`, { nrql_condition: { nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: '5' } } });
      expect(offset.status).toBe(200);
      expect(updateConditions()[2]?.nrql).toEqual({ query: 'SELECT count(*) FROM TransactionError', evaluationOffset: 5, dataAccountId: null });
      expect(offset.json.nrql_condition).toMatchObject({ nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: '5' } });
    } finally {
      await relay.close();
    }
  });
});

describe('the other families\' DELETE, translated through alertsConditionDelete', () => {
  it.each([
    ['alerts_conditions', 'condition', ['type', 'name', 'enabled', 'entities', 'metric', 'condition_scope', 'violation_close_timer', 'runbook_url', 'terms', 'user_defined', 'gc_metric']],
    ['alerts_external_service_conditions', 'external_service_condition', ['type', 'name', 'enabled', 'entities', 'external_service_url', 'metric', 'runbook_url', 'terms']],
    ['alerts_synthetics_conditions', 'synthetics_condition', ['name', 'monitor_id', 'runbook_url', 'enabled']],
    ['alerts_location_failure_conditions', 'location_failure_condition', ['name', 'enabled', 'entities', 'terms', 'violation_time_limit_seconds', 'runbook_url']],
  ] as const)('%s: the id and every other v2 key null; the condition is gone', async (family, singular, keys) => {
    const condition = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === family);
    if (!condition) throw new Error(`no ${family} condition`);
    const answer = await call('DELETE', `/v2/${family}/${condition.id}.json`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ [singular]: { id: condition.id, ...Object.fromEntries(keys.map((key) => [key, null])) } });
    expect(stored(condition.id)).toBeUndefined();
    const xml = await call('DELETE', `/v2/${family}/${condition.id}.xml`);
    expect(xml.status).toBe(404);
    expect(xml.text).toContain('<error>');
  });

  it('an NRQL condition\'s id is not an APM condition: 404, and it stays; another account\'s is 404 too', async () => {
    const nrql = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions');
    const foreign = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === SECONDARY_ACCOUNT && c.family === 'alerts_conditions');
    if (!nrql || !foreign) throw new Error('the sandbox world lacks the conditions this test needs');
    const answer = await call('DELETE', `/v2/alerts_conditions/${nrql.id}.json`);
    expect(answer.status).toBe(404);
    expect(titleOf(answer)).toBe(NrqlConditionTitles.conditionNotFound);
    expect(stored(nrql.id)).toBeDefined();
    expect((await call('DELETE', `/v2/alerts_conditions/${foreign.id}.json`)).status).toBe(404);
    expect(stored(foreign.id)).toBeDefined();
    expect((await call('DELETE', '/v2/alerts_synthetics_conditions/x1.json')).status).toBe(404);
  });
});

describe('a policy\'s NRQL conditions past the walk\'s bound', () => {
  it(`a list cut at ${MAX_NRQL_CONDITION_PAGES} NerdGraph pages is a 422 naming the bound, never a partial list; one ending on the last page read is served`, async () => {
    // The sandbox's first page of the policy, answered as if NerdGraph always had one more page
    // (until `lastPage`): the walk meets its bound without thousands of conditions in the sandbox.
    let lastPage = Number.POSITIVE_INFINITY;
    let pages = 0;
    const relay = await startFakeUpstream(async (request, res) => {
      if (request.operationName !== 'NrqlConditionsOfPolicy') return forwardTo(upstream.graphqlUrl, request, res);
      pages += 1;
      const answer = await fetch(upstream.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key']) }, body: JSON.stringify({ query: request.query, variables: { ...request.variables, cursor: null } }) });
      const body = (await answer.json()) as { data: { actor: { account: { alerts: { nrqlConditionsSearch: { nextCursor: string | null } } } } } };
      body.data.actor.account.alerts.nrqlConditionsSearch.nextCursor = pages >= lastPage ? null : `after-${pages}`;
      json(res, 200, body);
    });
    try {
      const walking = await createModesGateway({ routes: 'real', nerdgraphUrl: relay.url, legacyUrl: await deadOrigin(), routeModes: TRANSLATE });
      const list = () => walking.app.request('/v2/alerts_nrql_conditions.json?policy_id=100000', { headers: { 'X-Api-Key': DEMO_KEY } });
      const cut = await list();
      expect(cut.status).toBe(422);
      expect(cut.headers.get('link')).toBeNull();
      expect(((await cut.json()) as { error: { title: string } }).error.title).toBe(NrqlConditionTitles.tooMany(MAX_NRQL_CONDITION_PAGES));
      expect(pages).toBe(MAX_NRQL_CONDITION_PAGES);

      pages = 0;
      lastPage = MAX_NRQL_CONDITION_PAGES;
      const whole = await list();
      expect(whole.status).toBe(200);
      expect(((await whole.json()) as { nrql_conditions: unknown[] }).nrql_conditions.length).toBe(50);
    } finally {
      await relay.close();
    }
  });
});

describe('the other families\' DELETE when NerdGraph answers NOT_FOUND for a non-NRQL id', () => {
  it('a NOT_FOUND error on the nrqlCondition read means "not an NRQL condition": the condition is deleted', async () => {
    // NerdGraph as it may really answer nrqlCondition(id) for an APM condition's id: a NOT_FOUND
    // error (the sandbox answers null); everything else goes to the sandbox.
    const relay = await startFakeUpstream((request, res) =>
      request.operationName === 'NrqlConditionById'
        ? json(res, 200, { data: { actor: { account: { alerts: { nrqlCondition: null } } } }, errors: [{ message: 'Condition not found', path: ['actor', 'account', 'alerts', 'nrqlCondition'], extensions: { errorClass: 'NOT_FOUND' } }] })
        : forwardTo(upstream.graphqlUrl, request, res),
    );
    try {
      const strict = await createModesGateway({ routes: 'real', nerdgraphUrl: relay.url, legacyUrl: await deadOrigin(), routeModes: TRANSLATE });
      const condition = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_conditions');
      if (!condition) throw new Error('no alerts_conditions condition');
      const answer = await strict.app.request(`/v2/alerts_conditions/${condition.id}.json`, { method: 'DELETE', headers: { 'X-Api-Key': DEMO_KEY } });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { condition: { id: number } }).condition.id).toBe(condition.id);
      expect(stored(condition.id)).toBeUndefined();
      expect(relay.received.filter((r) => r.operationName === 'AlertConditionDelete')).toHaveLength(1);
    } finally {
      await relay.close();
    }
  });
});

describe('without a rule naming them', () => {
  it.each(['', '*=translate'])('ROUTE_MODES %j: the legacy API answers (passthrough), NerdGraph is not called', async (routeModes) => {
    const quiet = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: upstream.url, routeModes });
    const condition = upstream.sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_conditions');
    if (!condition) throw new Error('no alerts_conditions condition');
    const list = await quiet.app.request('/v2/alerts_nrql_conditions.json?policy_id=100001', { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(list.status).toBe(200);
    // The legacy face's rate-limit headers: only passthrough carries them.
    expect(list.headers.get('x-ratelimit-limit')).toBe('1000');
    const deleted = await quiet.app.request(`/v2/alerts_conditions/${condition.id}.json`, { method: 'DELETE', headers: { 'X-Api-Key': DEMO_KEY } });
    expect(deleted.status).toBe(200);
    expect(((await deleted.json()) as { condition: { name: unknown } }).condition.name).toBe(condition.fields.name);
    expect(await quiet.upstreamCount()).toBe(0);
  });
});

describe('compare on the NRQL conditions list', () => {
  it('the legacy API answers, the translation is compared with it: a match', async () => {
    const conditions = upstream.sandbox.data.alerts.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions');
    // A policy whose conditions all use v2's default value function (value_function is a known gap).
    const policy = upstream.sandbox.data.alerts.policies.find(
      (p) => p.accountId === PRIMARY_ACCOUNT && p.id !== 100000 && conditions.some((c) => c.policyId === p.id) && conditions.every((c) => c.policyId !== p.id || c.fields.value_function === 'single_value'),
    );
    if (!policy) throw new Error('no policy with default value functions');
    const comparing = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: upstream.url, routeModes: 'GET /v2/alerts_nrql_conditions=compare' });
    const answer = await comparing.app.request(`/v2/alerts_nrql_conditions.json?policy_id=${policy.id}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('1000');
    // The comparison takes the legacy answer as the caller reads it.
    expect(((await answer.json()) as { nrql_conditions: unknown[] }).nrql_conditions.length).toBeGreaterThan(0);
    const [record] = await comparing.sink.waitForRecords(1);
    expect(record).toMatchObject({ mode: 'compare', outcome: 'match', status: { legacy: 200, translated: 200 } });
  });
});
