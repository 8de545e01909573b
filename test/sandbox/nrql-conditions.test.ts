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
    expect(Object.keys(shown.body.nrql_condition!)).toEqual(['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid']);
    expect(shown.body.nrql_condition).toEqual({
      type: 'static',
      id: Number(condition.id),
      name: 'Error spike',
      enabled: true,
      runbook_url: 'https://runbooks.example.com/errors',
      value_function: 'single_value',
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

  it('updates keep what is not given; the other type\'s mutation and bad inputs are refused with nothing changed', async () => {
    const sandbox = fresh();
    const created = (await graphql(sandbox, STATIC_CREATE, { a: PRIMARY_ACCOUNT, p: '100001', c: staticInput })).data?.alertsNrqlConditionStaticCreate as { id: string };
    const updated = await graphql(sandbox, STATIC_UPDATE, { a: PRIMARY_ACCOUNT, id: created.id, c: { enabled: false, nrql: { evaluationOffset: 7 } } });
    // An offset replaces the aggregation method and delay (deprecated "in favor of" them).
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
