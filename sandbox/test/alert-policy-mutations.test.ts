import { describe, expect, it } from 'vitest';
import { createSandbox } from '../server.ts';
import { POLICY_MUTATION_MESSAGES } from '../alert-policy-mutations.ts';

/**
 * NerdGraph's alert policy mutations (alert-policy-mutations.ts) over the shared alert store:
 * what NerdGraph writes, the legacy face's alerts_policies shows, and the reverse; refusals
 * write nothing and are not counted as writes.
 */
let clock = 1_790_000_000_000;
const sandbox = createSandbox({ seed: 5, apmApps: 30, now: () => clock });
const DEMO = 'NRAK-SANDBOX-DEMO';
const SECONDARY = 'NRAK-SANDBOX-SECONDARY';
const PRIMARY_ACCOUNT = 1000001;
const SECONDARY_ACCOUNT = 1000002;

type GraphqlBody = { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { errorClass?: string } }> };

async function graphql(query: string, variables: Record<string, unknown>, apiKey = DEMO): Promise<GraphqlBody> {
  const response = await sandbox.app.request('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': apiKey }, body: JSON.stringify({ query, variables }) });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphqlBody;
}

async function legacy(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await sandbox.app.request(path, {
    method,
    headers: { 'x-api-key': DEMO, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const CREATE = `mutation ($accountId: Int!, $policy: AlertsPolicyInput!) { alertsPolicyCreate(accountId: $accountId, policy: $policy) { id name incidentPreference accountId } }`;
const UPDATE = `mutation ($accountId: Int!, $id: ID!, $policy: AlertsPolicyUpdateInput!) { alertsPolicyUpdate(accountId: $accountId, id: $id, policy: $policy) { id name incidentPreference accountId } }`;
const DELETE = `mutation ($accountId: Int!, $id: ID!) { alertsPolicyDelete(accountId: $accountId, id: $id) { id } }`;
const SHOW = `query ($accountId: Int!, $id: ID!) { actor { account(id: $accountId) { alerts { policy(id: $id) { id name incidentPreference accountId } } } } }`;

const created = (body: GraphqlBody) => (body.data?.alertsPolicyCreate ?? null) as { id: string; name: string; incidentPreference: string; accountId: number } | null;

describe('alert policy mutations', () => {
  it('creates a policy the legacy face shows, with v2 times from the sandbox clock', async () => {
    clock += 1_000;
    const body = await graphql(CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: '  Made in NerdGraph  ', incidentPreference: 'PER_CONDITION' } });
    expect(body.errors).toBeUndefined();
    const policy = created(body);
    expect(policy).toMatchObject({ name: 'Made in NerdGraph', incidentPreference: 'PER_CONDITION', accountId: PRIMARY_ACCOUNT });
    expect(policy?.id).toMatch(/^[1-9]\d*$/);
    const shown = await legacy('GET', `/v2/alerts_policies/${policy?.id}.json`);
    expect(shown).toEqual({
      status: 200,
      body: { policy: { id: Number(policy?.id), incident_preference: 'PER_CONDITION', name: 'Made in NerdGraph', created_at: clock, updated_at: clock } },
    });
  });

  it('takes CUSTOM, the incident preference newer than both schema files, and reads it back on both faces; the legacy face refuses it as a v2 write', async () => {
    const body = await graphql(CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: 'Custom grouping', incidentPreference: 'CUSTOM' } });
    expect(body.errors).toBeUndefined();
    const policy = created(body);
    expect(policy?.incidentPreference).toBe('CUSTOM');
    const read = await graphql(SHOW, { accountId: PRIMARY_ACCOUNT, id: policy?.id });
    expect(read.data).toEqual({ actor: { account: { alerts: { policy: { id: policy?.id, name: 'Custom grouping', incidentPreference: 'CUSTOM', accountId: PRIMARY_ACCOUNT } } } } });
    expect((await legacy('GET', `/v2/alerts_policies/${policy?.id}.json`)).body).toMatchObject({ policy: { incident_preference: 'CUSTOM' } });
    expect((await legacy('PUT', `/v2/alerts_policies/${policy?.id}.json`, { policy: { incident_preference: 'CUSTOM' } })).status).toBe(422);
    const back = await graphql(UPDATE, { accountId: PRIMARY_ACCOUNT, id: policy?.id, policy: { incidentPreference: 'PER_POLICY' } });
    expect((back.data?.alertsPolicyUpdate as { incidentPreference: string }).incidentPreference).toBe('PER_POLICY');
  });

  it('updates only the attributes given, and moves updated_at', async () => {
    const made = await legacy('POST', '/v2/alerts_policies.json', { policy: { name: 'Legacy made', incident_preference: 'PER_POLICY' } });
    const id = String((made.body.policy as { id: number }).id);
    const createdAt = (made.body.policy as { created_at: number }).created_at;
    clock += 5_000;
    const renamed = await graphql(UPDATE, { accountId: PRIMARY_ACCOUNT, id, policy: { name: 'Renamed' } });
    expect(renamed.data?.alertsPolicyUpdate).toEqual({ id, name: 'Renamed', incidentPreference: 'PER_POLICY', accountId: PRIMARY_ACCOUNT });
    const preference = await graphql(UPDATE, { accountId: PRIMARY_ACCOUNT, id, policy: { incidentPreference: 'PER_CONDITION_AND_TARGET' } });
    expect(preference.data?.alertsPolicyUpdate).toMatchObject({ name: 'Renamed', incidentPreference: 'PER_CONDITION_AND_TARGET' });
    const shown = await legacy('GET', `/v2/alerts_policies/${id}.json`);
    expect(shown.body.policy).toEqual({ id: Number(id), incident_preference: 'PER_CONDITION_AND_TARGET', name: 'Renamed', created_at: createdAt, updated_at: clock });
  });

  it('deletes a policy (answering only its id) with its conditions; the legacy face and policy(id) no longer find it', async () => {
    const policyId = sandbox.data.alerts.conditions.find((c) => c.accountId === PRIMARY_ACCOUNT)?.policyId as number;
    const body = await graphql(DELETE, { accountId: PRIMARY_ACCOUNT, id: String(policyId) });
    expect(body).toEqual({ data: { alertsPolicyDelete: { id: String(policyId) } } });
    expect(sandbox.data.alerts.conditions.some((c) => c.policyId === policyId && c.accountId === PRIMARY_ACCOUNT)).toBe(false);
    expect((await legacy('GET', `/v2/alerts_policies/${policyId}.json`)).status).toBe(404);
    const show = await graphql(SHOW, { accountId: PRIMARY_ACCOUNT, id: String(policyId) });
    expect(show.data).toEqual({ actor: { account: { alerts: { policy: null } } } });
  });

  it('refuses, writing and counting nothing: unknown or foreign ids, blank or long names, a bad preference, an unseen account', async () => {
    const before = sandbox.writes().total;
    const policies = JSON.stringify(sandbox.data.alerts.policies);
    const own = String(sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT)?.id);
    const foreign = String(sandbox.data.alerts.policies.find((p) => p.accountId === SECONDARY_ACCOUNT)?.id);
    const refusals: Array<[string, Record<string, unknown>, string, string?]> = [
      [UPDATE, { accountId: PRIMARY_ACCOUNT, id: '1', policy: { name: 'x' } }, 'NOT_FOUND'],
      [UPDATE, { accountId: PRIMARY_ACCOUNT, id: foreign, policy: { name: 'x' } }, 'NOT_FOUND'],
      [DELETE, { accountId: PRIMARY_ACCOUNT, id: foreign }, 'NOT_FOUND'],
      [DELETE, { accountId: PRIMARY_ACCOUNT, id: 'abc' }, 'NOT_FOUND'],
      [CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: '   ', incidentPreference: 'PER_POLICY' } }, 'INVALID_INPUT'],
      [CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: 'n'.repeat(256), incidentPreference: 'PER_POLICY' } }, 'INVALID_INPUT'],
      [UPDATE, { accountId: PRIMARY_ACCOUNT, id: own, policy: { name: '' } }, 'INVALID_INPUT'],
      [CREATE, { accountId: SECONDARY_ACCOUNT, policy: { name: 'x', incidentPreference: 'PER_POLICY' } }, 'FORBIDDEN'],
      [CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: 'x', incidentPreference: 'PER_POLICY' } }, 'FORBIDDEN', SECONDARY],
    ];
    for (const [query, variables, errorClass, key] of refusals) {
      const body = await graphql(query, variables, key);
      expect(body.errors?.[0]?.extensions?.errorClass, JSON.stringify(variables)).toBe(errorClass);
    }
    expect((await graphql(UPDATE, { accountId: PRIMARY_ACCOUNT, id: '1', policy: {} })).errors?.[0]?.message).toBe(POLICY_MUTATION_MESSAGES.notFound);
    // An unknown preference fails the enum's validation before any resolver runs.
    const badPreference = await graphql(CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: 'x', incidentPreference: 'SOMETIMES' } });
    expect(badPreference.errors?.[0]?.message).toMatch(/AlertsIncidentPreference/);
    expect(sandbox.writes().total).toBe(before);
    expect(JSON.stringify(sandbox.data.alerts.policies)).toBe(policies);
  });

  it('counts each applied mutation once, by its field', async () => {
    const before = sandbox.writes().nerdgraph.alertsPolicyCreate ?? 0;
    await graphql(CREATE, { accountId: PRIMARY_ACCOUNT, policy: { name: 'Counted', incidentPreference: 'PER_POLICY' } });
    expect(sandbox.writes().nerdgraph.alertsPolicyCreate).toBe(before + 1);
  });
});
