import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALERT_POLICY_COUNTS, BUSY_POLICY_NRQL_CONDITIONS } from '../../sandbox/alerts.ts';
import { ALERTS_PAGE_SIZE } from '../../sandbox/legacy/alert-answers.ts';
import { AlertTitles } from '../../sandbox/legacy/alert-bodies.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { httpSend } from '../support/http.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../support/harness.ts';

/**
 * The alert store on the legacy face (sandbox/legacy/alerts.ts): the namespaces New Relic
 * keeps alive, which the gateway passes through. Lists page by 50 with v2's Link header and
 * answer with an ETag (If-None-Match gives 304); shows, creates, updates and deletes for
 * policies and every condition family; v2 error bodies for bad input; rate-limit headers on
 * every answer.
 */

const fresh = (): Sandbox => createSandbox({ seed: 7, apmApps: 40, now: () => FIXED_NOW });
const shared = fresh();

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | null;
  text: string;
}

async function call(sandbox: Sandbox, method: string, path: string, body?: unknown, key = DEMO_KEY, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Api-Key': key, ...extra };
  if (body !== undefined && typeof body !== 'string') headers['Content-Type'] = 'application/json';
  const response = await sandbox.app.request(path, { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json') && text !== '' ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: response.status, headers: response.headers, body: json, text };
}

const get = (path: string, key = DEMO_KEY): Promise<Answer> => call(shared, 'GET', path, undefined, key);
const ids = (answer: Answer, wrapper: string): number[] => (answer.body?.[wrapper] as Array<{ id: number }>).map((item) => item.id);
const errorTitle = (answer: Answer): string => (answer.body?.error as { title: string }).title;

const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '0.9', time_function: 'all' };

/** One valid create body per family, and what its answer must hold. */
const FAMILIES = [
  {
    family: 'alerts_conditions',
    plural: 'conditions',
    singular: 'condition',
    valid: { type: 'apm_app_metric', name: 'Apdex low', entities: [200000001], metric: 'apdex', condition_scope: 'application', terms: [{ ...TERM, operator: 'below', threshold: 0.7 }] },
    invalid: { type: 'apm_app_metric', name: 'No terms', metric: 'apdex', terms: [] },
    update: { enabled: false },
  },
  {
    family: 'alerts_nrql_conditions',
    plural: 'nrql_conditions',
    singular: 'nrql_condition',
    valid: { name: 'Errors', terms: [TERM], nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: 3 } },
    invalid: { name: 'Errors', terms: [TERM], nrql: { query: '', since_value: '3' } },
    update: { nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '5' } },
  },
  {
    family: 'alerts_external_service_conditions',
    plural: 'external_service_conditions',
    singular: 'external_service_condition',
    valid: { type: 'apm', name: 'Stripe slow', entities: ['200000001'], external_service_url: 'api.stripe.com', metric: 'response_time_average', terms: [TERM] },
    invalid: { type: 'apm', name: 'Stripe slow', external_service_url: 'api.stripe.com', metric: 'latency', terms: [TERM] },
    update: { metric: 'throughput' },
  },
  {
    family: 'alerts_synthetics_conditions',
    plural: 'synthetics_conditions',
    singular: 'synthetics_condition',
    valid: { name: 'Home page', monitor_id: '0f1e2d3c-4b5a-4968-a7b6-c5d4e3f2a1b0', enabled: 'true' },
    invalid: { name: 'Home page', monitor_id: 'not-a-uuid' },
    update: { runbook_url: 'https://runbooks.example.com/home' },
  },
  {
    family: 'alerts_location_failure_conditions',
    plural: 'location_failure_conditions',
    singular: 'location_failure_condition',
    valid: { name: 'Two locations', entities: ['0f1e2d3c-4b5a-4968-a7b6-c5d4e3f2a1b0'], terms: [{ priority: 'critical', threshold: 2 }] },
    invalid: { name: 'Two locations', entities: ['m'], terms: [{ priority: 'severe', threshold: 2 }] },
    update: { violation_time_limit_seconds: 7200 },
  },
] as const;

describe('the generated store', () => {
  it('gives the demo key more than three pages of policies, and is the same for the same seed', () => {
    const primary = shared.data.alerts.policies.filter((policy) => policy.accountId === PRIMARY_ACCOUNT);
    expect(primary.length).toBe(ALERT_POLICY_COUNTS.primary);
    expect(primary.length).toBeGreaterThan(3 * ALERTS_PAGE_SIZE);
    expect(fresh().data.alerts).toEqual(shared.data.alerts);
    expect(createSandbox({ seed: 8, apmApps: 40, now: () => FIXED_NOW }).data.alerts).not.toEqual(shared.data.alerts);
  });

  it('holds the policies the primary applications link to', () => {
    const policyIds = new Set(shared.data.alerts.policies.filter((policy) => policy.accountId === PRIMARY_ACCOUNT).map((policy) => policy.id));
    for (const app of shared.data.apps.filter((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.alertPolicyId !== null)) {
      expect(policyIds.has(app.alertPolicyId as number)).toBe(true);
    }
  });
});

describe('policies: list, paging, filter', () => {
  it('pages by 50 with the Link header, sorted by id, every policy once', async () => {
    const pages: Answer[] = [];
    for (let page = 1; page <= 5; page++) pages.push(await get(`/v2/alerts_policies.json?page=${page}`));
    const all = pages.flatMap((answer) => ids(answer, 'policies'));
    expect(pages.map((answer) => ids(answer, 'policies').length)).toEqual([50, 50, 50, 10, 0]);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(new Set(all).size).toBe(ALERT_POLICY_COUNTS.primary);
    expect(pages[0]!.headers.get('link')).toBe(
      '<http://localhost/v2/alerts_policies.json?page=2>; rel="next", <http://localhost/v2/alerts_policies.json?page=4>; rel="last"',
    );
    expect(pages[1]!.headers.get('link')).toContain('rel="first"');
    expect(pages[3]!.headers.get('link')).toBe(
      '<http://localhost/v2/alerts_policies.json?page=1>; rel="first", <http://localhost/v2/alerts_policies.json?page=3>; rel="prev"',
    );
  });

  it('renders P as v2 did: id, incident_preference, name, created_at and updated_at in epoch ms', async () => {
    const [policy] = (await get('/v2/alerts_policies.json')).body?.policies as Array<Record<string, unknown>>;
    expect(Object.keys(policy!)).toEqual(['id', 'incident_preference', 'name', 'created_at', 'updated_at']);
    expect(['PER_POLICY', 'PER_CONDITION', 'PER_CONDITION_AND_TARGET']).toContain(policy!.incident_preference);
    expect(Number.isInteger(policy!.created_at) && (policy!.created_at as number) > 1e12).toBe(true);
    expect(policy!.updated_at as number).toBeGreaterThanOrEqual(policy!.created_at as number);
  });

  it('filters by exact name only (not substring, not case-insensitive)', async () => {
    const name = 'Checkout "golden signals"';
    const exact = await get(`/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}`);
    expect((exact.body?.policies as Array<{ name: string }>).map((policy) => policy.name)).toEqual([name]);
    expect(ids(await get(`/v2/alerts_policies.json?filter[name]=${encodeURIComponent('Checkout')}`), 'policies')).toEqual([]);
    expect(ids(await get(`/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name.toUpperCase())}`), 'policies')).toEqual([]);
  });

  it('refuses a bad page with a v2 error', async () => {
    const answer = await get('/v2/alerts_policies.json?page=0');
    expect(answer.status).toBe(422);
    expect(errorTitle(answer)).toMatch(/page/);
  });

  it('scopes to the caller account', async () => {
    const secondary = await get('/v2/alerts_policies.json', SECONDARY_KEY);
    expect(ids(secondary, 'policies').length).toBe(ALERT_POLICY_COUNTS.other);
    const foreign = shared.data.alerts.policies.find((policy) => policy.accountId === SECONDARY_ACCOUNT)!;
    expect((await get(`/v2/alerts_policies/${foreign.id}.json`)).status).toBe(404);
    expect((await get(`/v2/alerts_policies/${foreign.id}.json`, SECONDARY_KEY)).status).toBe(200);
  });

  it('answers XML through the shared v2 writer', async () => {
    const answer = await get('/v2/alerts_policies.xml?page=4');
    expect(answer.headers.get('content-type')).toContain('application/xml');
    expect(answer.text).toMatch(/<policies type="array"><policy><id type="integer">\d+<\/id><incident_preference>/);
  });
});

describe('ETag and rate-limit headers', () => {
  it('answers a list with an ETag; If-None-Match gives a bodiless 304 until the list changes', async () => {
    const sandbox = fresh();
    const first = await call(sandbox, 'GET', '/v2/alerts_policies.json');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await call(sandbox, 'GET', '/v2/alerts_policies.json', undefined, DEMO_KEY, { 'If-None-Match': etag! });
    expect([again.status, again.text, again.headers.get('etag')]).toEqual([304, '', etag]);
    expect((await call(sandbox, 'GET', '/v2/alerts_policies.json', undefined, DEMO_KEY, { 'If-None-Match': `W/${etag}` })).status).toBe(304);
    // Changing the first policy changes page 1.
    const [policy] = first.body?.policies as Array<{ id: number }>;
    expect((await call(sandbox, 'PUT', `/v2/alerts_policies/${policy!.id}.json`, { policy: { name: 'Renamed' } })).status).toBe(200);
    const changed = await call(sandbox, 'GET', '/v2/alerts_policies.json', undefined, DEMO_KEY, { 'If-None-Match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('sends X-RateLimit-Limit, -Remaining (per key, per minute) and -Reset on answers and errors alike', async () => {
    const sandbox = fresh();
    const a = await call(sandbox, 'GET', '/v2/alerts_policies.json');
    const b = await call(sandbox, 'GET', '/v2/alerts_conditions.json');
    expect(b.status).toBe(422);
    const other = await call(sandbox, 'GET', '/v2/alerts_policies.json', undefined, SECONDARY_KEY);
    expect(a.headers.get('x-ratelimit-limit')).toBe('1000');
    expect([a.headers.get('x-ratelimit-remaining'), b.headers.get('x-ratelimit-remaining'), other.headers.get('x-ratelimit-remaining')]).toEqual(['999', '998', '999']);
    expect(a.headers.get('x-ratelimit-reset')).toBe(String((Math.floor(FIXED_NOW / 60_000) + 1) * 60));
    // Not on the routes the gateway translates.
    expect((await call(sandbox, 'GET', '/v2/applications.json')).headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('condition lists', () => {
  it('require policy_id (422), refuse a malformed one (422) and an unknown or foreign policy (404)', async () => {
    const missing = await get('/v2/alerts_nrql_conditions.json');
    expect([missing.status, errorTitle(missing)]).toEqual([422, AlertTitles.policyIdRequired]);
    expect(missing.body).toEqual({ error: { title: AlertTitles.policyIdRequired } });
    expect((await get('/v2/alerts_nrql_conditions.json?policy_id=abc')).status).toBe(422);
    expect(errorTitle(await get('/v2/alerts_nrql_conditions.json?policy_id=42'))).toBe(AlertTitles.policyNotFound);
    const foreign = shared.data.alerts.policies.find((policy) => policy.accountId === SECONDARY_ACCOUNT)!;
    expect((await get(`/v2/alerts_conditions.json?policy_id=${foreign.id}`)).status).toBe(404);
  });

  it('page by 50 too: the busy policy NRQL conditions', async () => {
    const busy = shared.data.alerts.policies.find((policy) => policy.accountId === PRIMARY_ACCOUNT)!;
    const pages = [];
    for (let page = 1; page <= 3; page++) pages.push(await get(`/v2/alerts_nrql_conditions.json?policy_id=${busy.id}&page=${page}`));
    expect(pages.map((answer) => ids(answer, 'nrql_conditions').length)).toEqual([50, 50, BUSY_POLICY_NRQL_CONDITIONS - 100]);
    expect(pages[0]!.headers.get('link')).toContain(`policy_id=${busy.id}&page=3>; rel="last"`);
    const [condition] = pages[0]!.body?.nrql_conditions as Array<Record<string, unknown>>;
    // v2's order (newrelic-client-go nrql_conditions_test.go): type first, entity_guid last.
    expect(Object.keys(condition!)).toEqual(['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'expected_groups', 'ignore_overlap', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid']);
    expect(Buffer.from(String(condition!.entity_guid), 'base64').toString()).toBe(`${PRIMARY_ACCOUNT}|AIOPS|CONDITION|${String(condition!.id)}`);
    expect(typeof (condition!.terms as Array<Record<string, unknown>>)[0]!.threshold).toBe('string');
  });

  it('serve the location failure conditions of the policy in the path', async () => {
    const withOne = shared.data.alerts.conditions.find((c) => c.family === 'alerts_location_failure_conditions' && c.accountId === PRIMARY_ACCOUNT)!;
    const answer = await get(`/v2/alerts_location_failure_conditions/policies/${withOne.policyId}.json`);
    expect(ids(answer, 'location_failure_conditions')).toContain(withOne.id);
    expect((await get('/v2/alerts_location_failure_conditions/policies/42.json')).status).toBe(404);
  });
});

describe('writes', () => {
  it('creates, shows, updates and deletes a policy', async () => {
    const sandbox = fresh();
    const created = await call(sandbox, 'POST', '/v2/alerts_policies.json', { policy: { name: ' New policy ', incident_preference: 'PER_CONDITION' } });
    expect(created.status).toBe(201);
    const policy = created.body?.policy as { id: number; name: string; created_at: number; updated_at: number; incident_preference: string };
    expect([policy.name, policy.incident_preference, policy.created_at, policy.updated_at]).toEqual(['New policy', 'PER_CONDITION', FIXED_NOW, FIXED_NOW]);
    expect((await call(sandbox, 'GET', `/v2/alerts_policies/${policy.id}.json`)).body).toEqual({ policy });
    const defaulted = await call(sandbox, 'POST', '/v2/alerts_policies.json', { policy: { name: 'Defaults' } });
    expect((defaulted.body?.policy as { incident_preference: string }).incident_preference).toBe('PER_POLICY');

    const updated = await call(sandbox, 'PUT', `/v2/alerts_policies/${policy.id}.xml`, { policy: { incident_preference: 'PER_POLICY' } });
    expect(updated.status).toBe(200);
    expect(updated.text).toContain('<name>New policy</name><created_at type="integer">');
    const deleted = await call(sandbox, 'DELETE', `/v2/alerts_policies/${policy.id}.json`);
    expect((deleted.body?.policy as { incident_preference: string }).incident_preference).toBe('PER_POLICY');
    expect((await call(sandbox, 'GET', `/v2/alerts_policies/${policy.id}.json`)).status).toBe(404);
    expect((await call(sandbox, 'DELETE', `/v2/alerts_policies/${policy.id}.json`)).status).toBe(404);
  });

  it('refuses bad policies with v2 titles: missing wrapper 400, blank name and unknown preference 422', async () => {
    const sandbox = fresh();
    const missing = await call(sandbox, 'POST', '/v2/alerts_policies.json', { name: 'x' });
    expect([missing.status, errorTitle(missing)]).toEqual([400, AlertTitles.missing('policy')]);
    expect(errorTitle(await call(sandbox, 'POST', '/v2/alerts_policies.json', { policy: { name: '  ' } }))).toBe("Invalid policy: name can't be blank");
    const preference = await call(sandbox, 'POST', '/v2/alerts_policies.json', { policy: { name: 'x', incident_preference: 'SOMETIMES' } });
    expect([preference.status, errorTitle(preference)]).toEqual([422, expect.stringMatching(/^Invalid policy: incident_preference /)]);
    const notJson = await call(sandbox, 'POST', '/v2/alerts_policies.json', '{"policy":', DEMO_KEY, { 'Content-Type': 'application/json' });
    expect(notJson.status).toBe(400);
    expect(sandbox.data.alerts.policies.length).toBe(fresh().data.alerts.policies.length);
  });

  it('takes a form body too', async () => {
    const sandbox = fresh();
    const created = await call(sandbox, 'POST', '/v2/alerts_policies.json', 'policy[name]=From+a+form&policy[incident_preference]=PER_CONDITION_AND_TARGET', DEMO_KEY, {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    expect(created.status).toBe(201);
    expect(created.body?.policy).toMatchObject({ name: 'From a form', incident_preference: 'PER_CONDITION_AND_TARGET' });
  });

  it.each(FAMILIES)('$family: create, show, list, update, delete; bad input is a 422 v2 error', async ({ family, plural, singular, valid, invalid, update }) => {
    const sandbox = fresh();
    const policy = sandbox.data.alerts.policies.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.id !== 100_000)!;
    const created = await call(sandbox, 'POST', `/v2/${family}/policies/${policy.id}.json`, { [singular]: valid });
    expect(created.status).toBe(201);
    const condition = created.body?.[singular] as Record<string, unknown> & { id: number };
    // NRQL conditions: "enabled (defaults to false)" (alerts-conditions-api-field-names.mdx #required).
    expect(condition).toMatchObject({ id: expect.any(Number), name: valid.name, enabled: family !== 'alerts_nrql_conditions' });
    const location = family === 'alerts_location_failure_conditions';
    const listPath = location ? `/v2/${family}/policies/${policy.id}.json` : `/v2/${family}.json?policy_id=${policy.id}`;
    expect(ids(await call(sandbox, 'GET', listPath), plural)).toContain(condition.id);
    if (!location) expect((await call(sandbox, 'GET', `/v2/${family}/${condition.id}.json`)).body).toEqual({ [singular]: condition });

    const updated = await call(sandbox, 'PUT', `/v2/${family}/${condition.id}.json`, { [singular]: update });
    expect(updated.status).toBe(200);
    const after = updated.body?.[singular] as Record<string, unknown>;
    expect(after).toMatchObject({ ...condition, ...update, ...('nrql' in update ? { nrql: { query: update.nrql.query, since_value: '5' }, signal: { evaluation_offset: 5 } } : {}) });
    // An update that would make it invalid is refused and changes nothing.
    const broken = await call(sandbox, 'PUT', `/v2/${family}/${condition.id}.json`, { [singular]: { name: '' } });
    expect([broken.status, errorTitle(broken)]).toEqual([422, `Invalid ${singular}: name can't be blank`]);

    const refused = await call(sandbox, 'POST', `/v2/${family}/policies/${policy.id}.json`, { [singular]: invalid });
    expect(refused.status).toBe(422);
    expect(errorTitle(refused)).toMatch(new RegExp(`^Invalid ${singular}: `));
    expect((await call(sandbox, 'POST', `/v2/${family}/policies/42.json`, { [singular]: valid })).status).toBe(404);
    expect((await call(sandbox, 'POST', `/v2/${family}/policies/${policy.id}.json`, {})).status).toBe(400);

    const deleted = await call(sandbox, 'DELETE', `/v2/${family}/${condition.id}.json`);
    expect(deleted.body).toEqual({ [singular]: after });
    expect(ids(await call(sandbox, 'GET', listPath), plural)).not.toContain(condition.id);
    expect((await call(sandbox, 'DELETE', `/v2/${family}/${condition.id}.json`)).status).toBe(404);
  });

  it('reads an XML body, lists included (Rails from_xml)', async () => {
    const sandbox = fresh();
    const xml =
      '<condition><type>apm_app_metric</type><name>From XML</name><enabled>false</enabled><metric>apdex</metric>' +
      '<entities><entity>200000001</entity><entity>200000002</entity></entities>' +
      '<terms><term><duration>5</duration><operator>below</operator><priority>critical</priority><threshold>0.5</threshold><time_function>all</time_function></term></terms></condition>';
    const created = await call(sandbox, 'POST', '/v2/alerts_conditions/policies/100001.xml', xml, DEMO_KEY, { 'Content-Type': 'application/xml' });
    expect(created.status).toBe(201);
    expect(created.text).toContain('<entities type="array"><entity>200000001</entity><entity>200000002</entity></entities>');
    expect(created.text).toContain('<enabled type="boolean">false</enabled>');
  });

  it('deleting a policy deletes its conditions', async () => {
    const sandbox = fresh();
    const condition = sandbox.data.alerts.conditions.find((c) => c.family === 'alerts_conditions' && c.accountId === PRIMARY_ACCOUNT)!;
    expect((await call(sandbox, 'DELETE', `/v2/alerts_policies/${condition.policyId}.json`)).status).toBe(200);
    expect((await call(sandbox, 'GET', `/v2/alerts_conditions/${condition.id}.json`)).status).toBe(404);
    expect(sandbox.data.alerts.conditions.some((c) => c.policyId === condition.policyId && c.accountId === PRIMARY_ACCOUNT)).toBe(false);
  });

  it('never touches another account: its policies and conditions are 404 to this key', async () => {
    const sandbox = fresh();
    const foreign = sandbox.data.alerts.conditions.find((c) => c.family === 'alerts_nrql_conditions' && c.accountId === SECONDARY_ACCOUNT)!;
    expect((await call(sandbox, 'PUT', `/v2/alerts_nrql_conditions/${foreign.id}.json`, { nrql_condition: { name: 'mine' } })).status).toBe(404);
    expect((await call(sandbox, 'DELETE', `/v2/alerts_policies/${foreign.policyId}.json`)).status).toBe(404);
    expect((await call(sandbox, 'POST', `/v2/alerts_policies/${foreign.policyId}.json`, {})).status).toBe(405);
  });
});

describe('entity conditions', () => {
  it('lists the conditions targeting an entity; PUT adds it to one, DELETE removes it', async () => {
    const sandbox = fresh();
    const condition = sandbox.data.alerts.conditions.find((c) => c.family === 'alerts_conditions' && c.accountId === PRIMARY_ACCOUNT)!;
    const app = sandbox.data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT && !(condition.fields.entities as string[]).includes(String(candidate.id)))!;
    const path = `/v2/alerts_entity_conditions/${app.id}.json`;
    const before = ids(await call(sandbox, 'GET', `${path}?entity_type=Application`), 'conditions');
    expect(before).not.toContain(condition.id);

    const added = await call(sandbox, 'PUT', `${path}?entity_type=Application&condition_id=${condition.id}`);
    expect(added.status).toBe(200);
    expect((added.body?.condition as { entities: string[] }).entities).toContain(String(app.id));
    expect(ids(await call(sandbox, 'GET', `${path}?entity_type=Application`), 'conditions')).toContain(condition.id);
    // Adding twice keeps one entry.
    const twice = await call(sandbox, 'PUT', `${path}?entity_type=Application&condition_id=${condition.id}`);
    expect((twice.body?.condition as { entities: string[] }).entities.filter((id) => id === String(app.id)).length).toBe(1);

    const removed = await call(sandbox, 'DELETE', `${path}?entity_type=Application&condition_id=${condition.id}`);
    expect((removed.body?.condition as { entities: string[] }).entities).not.toContain(String(app.id));
    expect(ids(await call(sandbox, 'GET', `${path}?entity_type=Application`), 'conditions')).toEqual(before);
  });

  it('refuses a missing or unknown entity_type, a missing condition_id, an unknown entity and a mismatched type', async () => {
    const app = shared.data.apps.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT)!;
    const path = `/v2/alerts_entity_conditions/${app.id}.json`;
    expect(errorTitle(await get(path))).toBe(AlertTitles.entityType);
    expect((await get(`${path}?entity_type=Planet`)).status).toBe(422);
    expect((await get('/v2/alerts_entity_conditions/42.json?entity_type=Application')).status).toBe(404);
    expect((await get(`${path}?entity_type=MobileApplication`)).status).toBe(404);
    const sandbox = fresh();
    expect(errorTitle(await call(sandbox, 'PUT', `${path}?entity_type=Application`))).toBe(AlertTitles.conditionIdRequired);
    const kt = sandbox.data.keyTransactions.find((candidate) => candidate.accountId === PRIMARY_ACCOUNT)!;
    const condition = sandbox.data.alerts.conditions.find((c) => c.family === 'alerts_conditions' && c.accountId === PRIMARY_ACCOUNT)!;
    const mismatch = await call(sandbox, 'PUT', `/v2/alerts_entity_conditions/${kt.id}.json?entity_type=KeyTransaction&condition_id=${condition.id}`);
    expect([mismatch.status, errorTitle(mismatch)]).toEqual([422, AlertTitles.entityTypeMismatch]);
  });
});

describe('bodies from anywhere', () => {
  it('any JSON body answers 201, 400 or 422 (a v2 error), never a server error', async () => {
    const sandbox = fresh();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v2/alerts_policies.json', '/v2/alerts_nrql_conditions/policies/100001.json', '/v2/alerts_conditions/policies/100001.json', '/v2/alerts_location_failure_conditions/policies/100001.json'),
        fc.oneof(fc.jsonValue(), fc.record({ policy: fc.jsonValue(), nrql_condition: fc.jsonValue(), condition: fc.jsonValue(), location_failure_condition: fc.jsonValue() }, { requiredKeys: [] })),
        async (path, body) => {
          const answer = await call(sandbox, 'POST', path, JSON.stringify(body), DEMO_KEY, { 'Content-Type': 'application/json' });
          expect([201, 400, 422]).toContain(answer.status);
          if (answer.status !== 201) expect(typeof errorTitle(answer)).toBe('string');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a policy name that is valid text comes back exactly as sent, trimmed', async () => {
    const sandbox = fresh();
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 255 }).filter((name) => name.trim() !== ''), async (name) => {
        const created = await call(sandbox, 'POST', '/v2/alerts_policies.json', { policy: { name } });
        expect(created.status).toBe(201);
        const { id } = created.body?.policy as { id: number };
        expect(((await call(sandbox, 'GET', `/v2/alerts_policies/${id}.json`)).body?.policy as { name: string }).name).toBe(name.trim());
      }),
      { numRuns: 100 },
    );
  });
});

describe('over real HTTP', () => {
  it('serves a paged list with its Link, ETag and rate-limit headers on a loopback port', async () => {
    const running = await fresh().listen(0, '127.0.0.1');
    try {
      const response = await httpSend(`${running.url}/v2/alerts_policies.json?page=2`, { headers: { 'X-Api-Key': DEMO_KEY } });
      expect(response.status).toBe(200);
      expect(response.headers.get('link')).toContain(`<${running.url}/v2/alerts_policies.json?page=3>; rel="next"`);
      expect(response.headers.get('etag')).toBeTruthy();
      expect(response.headers.get('x-ratelimit-remaining')).toBe('999');
      expect(((await response.json()) as { policies: unknown[] }).policies.length).toBe(ALERTS_PAGE_SIZE);
    } finally {
      await running.close();
    }
  });
});
