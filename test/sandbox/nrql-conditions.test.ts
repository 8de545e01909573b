import { describe, expect, it } from 'vitest';
import { BUSY_POLICY_NRQL_CONDITIONS } from '../../sandbox/alerts.ts';
import { ConditionMessages } from '../../sandbox/alert-condition-mutations.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../support/harness.ts';

/**
 * The NerdGraph face of the alert store's NRQL conditions (sandbox/nrql-condition-fields.ts,
 * alert-condition-mutations.ts): full conditions in nrqlConditionsSearch and nrqlCondition, the
 * static and baseline creates and updates, alertsConditionDelete for any family, and the same
 * conditions seen through the legacy face (one store), with the sandbox's v2 <-> NerdGraph
 * correspondence (minutes <-> seconds, all/any <-> ALL/AT_LEAST_ONCE, since_value <-> the deprecated
 * nrql.evaluationOffset, signal and expiration key by key).
 */
const fresh = (): Sandbox => createSandbox({ seed: 7, apmApps: 40, now: () => FIXED_NOW });

const FIELDS = `id name policyId type enabled description runbookUrl violationTimeLimitSeconds entityGuid
  nrql { query dataAccountId evaluationOffset }
  signal { aggregationWindow aggregationMethod aggregationDelay fillOption }
  expiration { expirationDuration openViolationOnExpiration }
  terms { operator priority threshold thresholdDuration thresholdOccurrences }`;
const CONDITION = `${FIELDS} ... on AlertsNrqlBaselineCondition { baselineDirection }`;

async function graphql(sandbox: Sandbox, query: string, variables: Record<string, unknown>, key = DEMO_KEY) {
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { errorClass?: string } }> };
}

async function legacy(sandbox: Sandbox, method: string, path: string, body?: unknown) {
  const response = await sandbox.app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, Record<string, unknown>> };
}

const STATIC_CREATE = `mutation($a: Int!, $p: ID!, $c: AlertsNrqlConditionStaticInput!) { alertsNrqlConditionStaticCreate(accountId: $a, policyId: $p, condition: $c) { ${FIELDS} } }`;
const BASELINE_CREATE = `mutation($a: Int!, $p: ID!, $c: AlertsNrqlConditionBaselineInput!) { alertsNrqlConditionBaselineCreate(accountId: $a, policyId: $p, condition: $c) { ${FIELDS} baselineDirection } }`;
const STATIC_UPDATE = `mutation($a: Int!, $id: ID!, $c: AlertsNrqlConditionUpdateStaticInput!) { alertsNrqlConditionStaticUpdate(accountId: $a, id: $id, condition: $c) { ${FIELDS} } }`;
const BASELINE_UPDATE = `mutation($a: Int!, $id: ID!, $c: AlertsNrqlConditionUpdateBaselineInput!) { alertsNrqlConditionBaselineUpdate(accountId: $a, id: $id, condition: $c) { id } }`;
const DELETE = `mutation($a: Int!, $id: ID!) { alertsConditionDelete(accountId: $a, id: $id) { id } }`;
const ONE = `query($a: Int!, $id: ID!) { actor { account(id: $a) { alerts { nrqlCondition(id: $id) { ${CONDITION} } } } } }`;
const SEARCH = `query($a: Int!, $p: ID, $cursor: String) { actor { account(id: $a) { alerts { nrqlConditionsSearch(searchCriteria: { policyId: $p }, cursor: $cursor) { nextCursor totalCount nrqlConditions { id policyId } } } } } }`;

const staticInput = {
  name: 'Error spike',
  enabled: true,
  runbookUrl: 'https://runbooks.example.com/errors',
  nrql: { query: 'SELECT count(*) FROM TransactionError' },
  signal: { aggregationWindow: 60, aggregationMethod: 'CADENCE', aggregationDelay: 300 },
  terms: [
    { operator: 'ABOVE', priority: 'CRITICAL', threshold: 12.5, thresholdDuration: 600, thresholdOccurrences: 'AT_LEAST_ONCE' },
    { operator: 'EQUALS', priority: 'WARNING', threshold: 3, thresholdDuration: 300, thresholdOccurrences: 'ALL' },
  ],
  violationTimeLimitSeconds: 7200,
};

describe('sandbox NerdGraph NRQL conditions', () => {
  it('a static create is seen by the legacy face as the v2 condition (minutes, all/any, since_value, strings)', async () => {
    const sandbox = fresh();
    const created = await graphql(sandbox, STATIC_CREATE, { a: PRIMARY_ACCOUNT, p: '100001', c: staticInput });
    expect(created.errors).toBeUndefined();
    const condition = created.data?.alertsNrqlConditionStaticCreate as Record<string, unknown>;
    expect(condition).toMatchObject({ name: 'Error spike', policyId: '100001', type: 'STATIC', description: null, signal: { aggregationWindow: 60, aggregationMethod: 'CADENCE', aggregationDelay: 300, fillOption: 'NONE' } });
    // A condition entity's GUID: base64 of account|AIOPS|CONDITION|id (terraform-provider-newrelic getConditionEntityGUID).
    expect(Buffer.from(String(condition.entityGuid), 'base64').toString()).toBe(`${PRIMARY_ACCOUNT}|AIOPS|CONDITION|${String(condition.id)}`);
    expect(String(condition.entityGuid)).not.toContain('=');
    const shown = await legacy(sandbox, 'GET', `/v2/alerts_nrql_conditions/${String(condition.id)}.json`);
    // v2's order: type before id, entity_guid last, the same GUID the NerdGraph face shows.
    expect(Object.keys(shown.body.nrql_condition!)).toEqual(['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'expected_groups', 'ignore_overlap', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid']);
    expect(shown.body.nrql_condition).toEqual({
      type: 'static',
      id: Number(condition.id),
      name: 'Error spike',
      enabled: true,
      runbook_url: 'https://runbooks.example.com/errors',
      value_function: 'single_value',
      expected_groups: null,
      ignore_overlap: null,
      violation_time_limit_seconds: 7200,
      terms: [
        { duration: '10', operator: 'above', priority: 'critical', threshold: '12.5', time_function: 'any' },
        { duration: '5', operator: 'equal', priority: 'warning', threshold: '3', time_function: 'all' },
      ],
      nrql: { query: 'SELECT count(*) FROM TransactionError', since_value: null },
      signal: { aggregation_window: '60', aggregation_method: 'CADENCE', aggregation_delay: 300, aggregation_timer: null, slide_by: null, fill_option: 'none', fill_value: null, evaluation_offset: null },
      expiration: { expiration_duration: null, open_violation_on_expiration: false, close_violations_on_expiration: false },
      entity_guid: condition.entityGuid,
    });
  });

  it('a legacy baseline create is read back by nrqlCondition with its NerdGraph fields', async () => {
    const sandbox = fresh();
    const made = await legacy(sandbox, 'POST', '/v2/alerts_nrql_conditions/policies/100002.json', {
      nrql_condition: { type: 'baseline', name: 'Throughput drop', baseline_direction: 'lower_only', terms: [{ duration: '15', operator: 'above', priority: 'critical', threshold: '3', time_function: 'all' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '2' } },
    });
    expect(made.status).toBe(201);
    const read = await graphql(sandbox, ONE, { a: PRIMARY_ACCOUNT, id: String(made.body.nrql_condition?.id) });
    const account = (read.data?.actor as { account: { alerts: { nrqlCondition: Record<string, unknown> } } }).account;
    expect(account.alerts.nrqlCondition).toMatchObject({
      entityGuid: made.body.nrql_condition?.entity_guid,
      type: 'BASELINE',
      baselineDirection: 'LOWER_ONLY',
      runbookUrl: null,
      // v2's default time limit, 3 days (FN #violation_time_limit_seconds); since_value is the deprecated offset.
      violationTimeLimitSeconds: 259200,
      nrql: { evaluationOffset: 2 },
      signal: { aggregationDelay: null, aggregationMethod: null },
      terms: [{ operator: 'ABOVE', priority: 'CRITICAL', threshold: 3, thresholdDuration: 900, thresholdOccurrences: 'ALL' }],
    });
    // The other account cannot see it.
    const foreign = await graphql(sandbox, ONE, { a: SECONDARY_ACCOUNT, id: String(made.body.nrql_condition?.id) }, SECONDARY_KEY);
    expect((foreign.data?.actor as { account: { alerts: { nrqlCondition: unknown } } }).account.alerts.nrqlCondition).toBeNull();
  });

  it('updates keep the fields not given and replace each given object whole; the other type\'s mutation and bad inputs are refused with nothing changed', async () => {
    const sandbox = fresh();
    const created = (await graphql(sandbox, STATIC_CREATE, { a: PRIMARY_ACCOUNT, p: '100001', c: staticInput })).data?.alertsNrqlConditionStaticCreate as { id: string };
    // A given object replaces the stored one as a whole: nrql without its query is refused, and an
    // offset beside the stored signal's method is refused too (no merge clears the other mode).
    const partialNrql = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { enabled: false, nrql: { evaluationOffset: 7 } } });
    expect(partialNrql.errors?.[0]?.extensions?.errorClass).toBe('INVALID_INPUT');
    const offsetBesideMethod = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { nrql: { query: staticInput.nrql.query, evaluationOffset: 7 } } });
    expect(offsetBesideMethod.errors?.[0]?.extensions?.errorClass).toBe('INVALID_INPUT');
    // A partial signal loses what it omits: the method's delay falls back to the create default.
    const partialSignal = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { signal: { aggregationMethod: 'CADENCE' } } });
    expect(partialSignal.data?.alertsNrqlConditionStaticUpdate).toMatchObject({ signal: { aggregationMethod: 'CADENCE', aggregationDelay: 120, aggregationWindow: 60 } });
    const updated = await graphql(sandbox, STATIC_UPDATE, {
      a: PRIMARY_ACCOUNT,
      id: created.id,
      c: { enabled: false, nrql: { query: staticInput.nrql.query, evaluationOffset: 7 }, signal: { aggregationWindow: 60, aggregationMethod: null, aggregationDelay: null, fillOption: 'NONE' } },
    });
    expect(updated.data?.alertsNrqlConditionStaticUpdate).toMatchObject({ enabled: false, name: 'Error spike', nrql: { evaluationOffset: 7 }, signal: { aggregationDelay: null, aggregationMethod: null }, violationTimeLimitSeconds: 7200 });
    const wrongType = await graphql(sandbox, BASELINE_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { name: 'x' } });
    expect(wrongType.errors?.[0]).toMatchObject({ message: ConditionMessages.wrongType(created.id, 'BASELINE'), extensions: { errorClass: 'INVALID_INPUT' } });
    const badDuration = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { terms: [{ ...staticInput.terms[0], thresholdDuration: 90 }] } });
    expect(badDuration.errors?.[0]?.extensions?.errorClass).toBe('INVALID_INPUT');
    const after = await legacy(sandbox, 'GET', `/v2/alerts_nrql_conditions/${created.id}.json`);
    expect(after.body.nrql_condition).toMatchObject({ enabled: false, name: 'Error spike', nrql: { since_value: '7' } });
    const baseline = await graphql(sandbox, BASELINE_CREATE, { a: PRIMARY_ACCOUNT, p: '100001', c: { name: 'b', enabled: true, baselineDirection: 'UPPER_AND_LOWER', nrql: { query: 'SELECT 1 FROM Transaction' }, terms: [{ operator: 'ABOVE', priority: 'CRITICAL', threshold: 2, thresholdDuration: 120, thresholdOccurrences: 'ALL' }] } });
    expect(baseline.data?.alertsNrqlConditionBaselineCreate).toMatchObject({ type: 'BASELINE', baselineDirection: 'UPPER_AND_LOWER', violationTimeLimitSeconds: 259200, signal: { aggregationMethod: 'EVENT_FLOW', aggregationDelay: 120 } });
  });

  it('alertsConditionDelete removes a condition of any family; unknown, foreign and unseen accounts are refused', async () => {
    const sandbox = fresh();
    const synthetics = sandbox.data.alerts.conditions.find((c) => c.family === 'alerts_synthetics_conditions' && c.accountId === PRIMARY_ACCOUNT);
    const foreign = sandbox.data.alerts.conditions.find((c) => c.accountId === SECONDARY_ACCOUNT);
    if (!synthetics || !foreign) throw new Error('the sandbox world lacks the conditions this test needs');
    const deleted = await graphql(sandbox, DELETE, { a: PRIMARY_ACCOUNT, id: String(synthetics.id) });
    expect(deleted.data?.alertsConditionDelete).toEqual({ id: String(synthetics.id) });
    expect((await legacy(sandbox, 'GET', `/v2/alerts_synthetics_conditions/${synthetics.id}.json`)).status).toBe(404);
    const again = await graphql(sandbox, DELETE, { a: PRIMARY_ACCOUNT, id: String(synthetics.id) });
    expect(again.errors?.[0]).toMatchObject({ message: ConditionMessages.conditionNotFound(String(synthetics.id)), extensions: { errorClass: 'NOT_FOUND' } });
    const otherAccount = await graphql(sandbox, DELETE, { a: PRIMARY_ACCOUNT, id: String(foreign.id) });
    expect(otherAccount.errors?.[0]?.extensions?.errorClass).toBe('NOT_FOUND');
    const unseen = await graphql(sandbox, DELETE, { a: SECONDARY_ACCOUNT, id: String(foreign.id) });
    expect(unseen.errors?.[0]?.extensions?.errorClass).toBe('FORBIDDEN');
    expect(sandbox.data.alerts.conditions.some((c) => c.id === foreign.id)).toBe(true);
  });

  it('nrqlConditionsSearch pages a policy\'s full conditions by cursor', async () => {
    const sandbox = fresh();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const answer = await graphql(sandbox, SEARCH, { a: PRIMARY_ACCOUNT, p: '100000', cursor });
      const search = (answer.data?.actor as { account: { alerts: { nrqlConditionsSearch: { nextCursor: string | null; totalCount: number; nrqlConditions: Array<{ id: string; policyId: string }> } } } }).account.alerts.nrqlConditionsSearch;
      expect(search.totalCount).toBe(BUSY_POLICY_NRQL_CONDITIONS);
      seen.push(...search.nrqlConditions.map((c) => c.id));
      cursor = search.nextCursor;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(BUSY_POLICY_NRQL_CONDITIONS);
  });
});

/**
 * The witness's v2 contract (sandbox/legacy/nrql-condition-body.ts), each rule from New Relic's
 * pages: FN = alerts-conditions-api-field-names.mdx by collapser id, CALLS = rest-api-calls-alerts.mdx.
 */
describe('sandbox legacy face: the v2 NRQL condition contract', () => {
  const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '1', time_function: 'all' };
  const base = { name: 'Contract', terms: [TERM], nrql: { query: 'SELECT count(*) FROM Transaction' } };
  const create = (sandbox: Sandbox, condition: Record<string, unknown>) => legacy(sandbox, 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', { nrql_condition: condition });
  const titleOf = (answer: { body: Record<string, Record<string, unknown>> }): string => String(answer.body.error?.title ?? '');

  it('FN #required, #enabled, #violation_time_limit_seconds, #signal_*, #expiration_*: the defaults of a create with none of them', async () => {
    const made = await create(fresh(), base);
    expect(made.status).toBe(201);
    expect(made.body.nrql_condition).toMatchObject({
      type: 'static',
      enabled: false,
      value_function: 'single_value',
      violation_time_limit_seconds: 259200,
      nrql: { since_value: null },
      signal: { aggregation_window: '60', aggregation_method: 'EVENT_FLOW', aggregation_delay: 120, aggregation_timer: null, slide_by: null, fill_option: 'none', fill_value: null, evaluation_offset: null },
      expiration: { expiration_duration: null, open_violation_on_expiration: false, close_violations_on_expiration: false },
    });
  });

  it.each([
    ['FN #signal_aggregation_window: at most 6 hours', { signal: { aggregation_window: 21601 } }, 'signal.aggregation_window must be 30 to 21600 seconds'],
    ['FN #nrql-since: 1 to 20', { nrql: { query: 'SELECT 1 FROM T', since_value: 21 } }, 'nrql.since_value must be 1 to 20 minutes'],
    ['FN #violation_time_limit_seconds: at most 30 days', { violation_time_limit_seconds: 2592001 }, 'violation_time_limit_seconds must be 300 to 2592000 seconds'],
    ['FN #nrql-since: deprecated in favor of an aggregation method', { nrql: { query: 'SELECT 1 FROM T', since_value: 3 }, signal: { aggregation_method: 'CADENCE' } }, 'nrql.since_value cannot be set with signal aggregation_method'],
    ['FN #signal_slide_by: divides the window evenly', { signal: { slide_by: 45 } }, 'signal.slide_by must be less than the aggregation window'],
    ['FN #signal_aggregation_method: one of three', { signal: { aggregation_method: 'SOMETIMES' } }, 'signal.aggregation_method must be one of EVENT_FLOW, CADENCE, EVENT_TIMER'],
    ['FN #terms_operator: six operators, no more', { terms: [{ ...TERM, operator: 'around' }] }, 'terms.0.operator must be one of above'],
  ])('%s: a 422 naming the field', async (_rule, change, title) => {
    const answer = await create(fresh(), { ...base, ...change });
    expect(answer.status).toBe(422);
    expect(titleOf(answer)).toContain(`Invalid nrql_condition: ${title}`);
  });

  it('FN #terms_operator: above_or_equals, below_or_equals and not_equals are NRQL operators, shown to NerdGraph by name', async () => {
    const sandbox = fresh();
    for (const [operator, nerdgraph] of [['above_or_equals', 'ABOVE_OR_EQUALS'], ['below_or_equals', 'BELOW_OR_EQUALS'], ['not_equals', 'NOT_EQUALS']] as const) {
      const made = await create(sandbox, { ...base, terms: [{ ...TERM, operator }] });
      expect(made.status).toBe(201);
      const read = await graphql(sandbox, ONE, { a: PRIMARY_ACCOUNT, id: String(made.body.nrql_condition?.id) });
      expect((read.data?.actor as { account: { alerts: { nrqlCondition: { terms: Array<{ operator: string }> } } } }).account.alerts.nrqlCondition.terms[0]?.operator).toBe(nerdgraph);
    }
  });

  it('FN #runbook_url: a PUT with "" clears it; an update with nrql holding a query alone keeps the offset (CALLS #update-nrql-conditions)', async () => {
    const sandbox = fresh();
    const made = await create(sandbox, { ...base, runbook_url: 'https://runbooks.example.com/x', nrql: { query: 'SELECT 1 FROM T', since_value: 4 } });
    const id = String(made.body.nrql_condition?.id);
    const cleared = await legacy(sandbox, 'PUT', `/v2/alerts_nrql_conditions/${id}.json`, { nrql_condition: { runbook_url: '', nrql: { query: 'SELECT 2 FROM T' } } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.nrql_condition).toMatchObject({ runbook_url: '', nrql: { query: 'SELECT 2 FROM T', since_value: '4' } });
  });
});

describe('sandbox NerdGraph face: the deprecated fields and outlier mutations of the 2025-04-15 schema', () => {
  const OUTLIER_CREATE = `mutation($a: Int!, $p: ID!, $c: AlertsNrqlConditionOutlierInput!) { alertsNrqlConditionOutlierCreate(accountId: $a, policyId: $p, condition: $c) { id type ... on AlertsNrqlOutlierCondition { expectedGroups openViolationOnGroupOverlap } } }`;
  const OUTLIER_UPDATE = `mutation($a: Int!, $id: ID!, $c: AlertsNrqlConditionUpdateOutlierInput!) { alertsNrqlConditionOutlierUpdate(accountId: $a, id: $id, condition: $c) { id ... on AlertsNrqlOutlierCondition { expectedGroups } } }`;
  const DEPRECATED = `query($a: Int!, $id: ID!) { actor { account(id: $a) { alerts { nrqlCondition(id: $id) { nrql { evaluationOffset } signal { evaluationOffset } ... on AlertsNrqlStaticCondition { valueFunction } } } } } }`;

  it('alertsNrqlConditionOutlierCreate/Update write an outlier condition the legacy face shows as type outlier', async () => {
    const sandbox = fresh();
    const created = await graphql(sandbox, OUTLIER_CREATE, {
      a: PRIMARY_ACCOUNT,
      p: '100001',
      c: { name: 'Odd host', enabled: true, expectedGroups: 2, openViolationOnGroupOverlap: false, nrql: { query: 'SELECT average(duration) FROM Transaction FACET host' }, terms: [{ operator: 'ABOVE', priority: 'CRITICAL', threshold: 3, thresholdDuration: 300, thresholdOccurrences: 'ALL' }] },
    });
    expect(created.errors).toBeUndefined();
    const id = (created.data?.alertsNrqlConditionOutlierCreate as { id: string }).id;
    expect(created.data?.alertsNrqlConditionOutlierCreate).toMatchObject({ type: 'OUTLIER', expectedGroups: 2, openViolationOnGroupOverlap: false });
    const updated = await graphql(sandbox, OUTLIER_UPDATE, { a: PRIMARY_ACCOUNT, id, c: { expectedGroups: 4 } });
    expect(updated.data?.alertsNrqlConditionOutlierUpdate).toMatchObject({ expectedGroups: 4 });
    const shown = await legacy(sandbox, 'GET', `/v2/alerts_nrql_conditions/${id}.json`);
    expect(shown.body.nrql_condition).toMatchObject({ type: 'outlier', expected_groups: 4, ignore_overlap: true });
    // The static mutation does not update an outlier condition.
    const wrong = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id, c: { name: 'x' } });
    expect(wrong.errors?.[0]?.extensions?.errorClass).toBe('INVALID_INPUT');
  });

  it('nrql.evaluationOffset, signal.evaluationOffset and valueFunction read what v2 stored: since_value and value_function', async () => {
    const sandbox = fresh();
    const made = await legacy(sandbox, 'POST', '/v2/alerts_nrql_conditions/policies/100001.json', {
      nrql_condition: { name: 'Old style', value_function: 'sum', runbook_url: 'https://runbooks.example.com/old', terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '1', time_function: 'all' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '6' } },
    });
    const read = await graphql(sandbox, DEPRECATED, { a: PRIMARY_ACCOUNT, id: String(made.body.nrql_condition?.id) });
    expect(read.errors).toBeUndefined();
    expect((read.data?.actor as { account: { alerts: { nrqlCondition: unknown } } }).account.alerts.nrqlCondition).toEqual({ nrql: { evaluationOffset: 6 }, signal: { evaluationOffset: 6 }, valueFunction: 'SUM' });
    // A NerdGraph update with runbookUrl null keeps the runbook (null is "not given"); valueFunction writes value_function.
    const updated = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: String(made.body.nrql_condition?.id), c: { valueFunction: 'SINGLE_VALUE', runbookUrl: null } });
    expect(updated.errors).toBeUndefined();
    expect((await legacy(sandbox, 'GET', `/v2/alerts_nrql_conditions/${String(made.body.nrql_condition?.id)}.json`)).body.nrql_condition).toMatchObject({ value_function: 'single_value', runbook_url: 'https://runbooks.example.com/old' });
  });
});
