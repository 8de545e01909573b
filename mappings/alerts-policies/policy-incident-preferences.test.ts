import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyTitles } from './alert-policies.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, startSandbox } from '../../test/support/harness.ts';
import { deadOrigin } from '../../test/support/http.ts';
import { createModesGateway } from '../../test/support/modes.ts';

/**
 * A policy whose incident preference is CUSTOM, the value NerdGraph's AlertsIncidentPreference
 * gained after v2 (../shared/reference/nerdgraph.md §1, quirk 3). v2 had three values. Reads
 * show CUSTOM as it is, and the rest of the list still comes back. A write of CUSTOM through v2
 * gets v2's 422 naming incident_preference, on both faces, and nothing changes.
 */
const CUSTOM_POLICY = 'AlertCustomPolicy';
const CREATE = `mutation ${CUSTOM_POLICY}($accountId: Int!, $policy: AlertsPolicyInput!) { alertsPolicyCreate(accountId: $accountId, policy: $policy) { id name incidentPreference accountId } }`;

let upstream: Awaited<ReturnType<typeof startSandbox>>;
let gateway: Awaited<ReturnType<typeof createModesGateway>>;
let customId: number;

beforeAll(async () => {
  upstream = await startSandbox({ apmApps: 10 });
  gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: await deadOrigin(), routeModes: '/v2/alerts_policies*=translate' });
  // Made through the sandbox's NerdGraph face, as New Relic's UI or NerdGraph would make it.
  const made = await fetch(upstream.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY },
    body: JSON.stringify({ query: CREATE, variables: { accountId: PRIMARY_ACCOUNT, policy: { name: 'Grouped by custom rules', incidentPreference: 'CUSTOM' } } }),
  });
  const body = (await made.json()) as { data?: { alertsPolicyCreate?: { id: string; incidentPreference: string } }; errors?: unknown };
  expect(body.errors).toBeUndefined();
  expect(body.data?.alertsPolicyCreate?.incidentPreference).toBe('CUSTOM');
  customId = Number(body.data?.alertsPolicyCreate?.id);
});
afterAll(async () => {
  await upstream.close();
});

type Answer = { status: number; text: string; json: Record<string, unknown> | null };
async function call(app: { request: (path: string, init: RequestInit) => Response | Promise<Response> }, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: (response.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as Record<string, unknown>) : null };
}
const legacy = { request: (path: string, init: RequestInit) => fetch(`${upstream.url}${path}`, init) };
const ownPolicies = () => upstream.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);
const REFUSED = 'Invalid policy: incident_preference must be one of PER_POLICY, PER_CONDITION, PER_CONDITION_AND_TARGET';

describe('a CUSTOM incident preference, translated', () => {
  it('the list answers every page whole, the CUSTOM policy showing CUSTOM as it is', async () => {
    const pages: Array<{ id: number; incident_preference: string }> = [];
    for (let page = 1; page <= 10; page += 1) {
      const answer = await call(gateway.app, 'GET', `/v2/alerts_policies.json?page=${page}`);
      expect(answer.status).toBe(200);
      const policies = (answer.json?.policies ?? []) as typeof pages;
      if (policies.length === 0) break;
      pages.push(...policies);
    }
    expect(pages.map((p) => p.id)).toEqual(ownPolicies().map((p) => p.id).sort((a, b) => a - b));
    expect(pages.find((p) => p.id === customId)).toEqual({ id: customId, incident_preference: 'CUSTOM', name: 'Grouped by custom rules', created_at: null, updated_at: null });
  });

  it('show and filter[name] answer it too, in JSON and XML', async () => {
    const shown = await call(gateway.app, 'GET', `/v2/alerts_policies/${customId}.json`);
    expect(shown.status).toBe(200);
    expect((shown.json?.policy as { incident_preference: string }).incident_preference).toBe('CUSTOM');
    const xml = await call(gateway.app, 'GET', `/v2/alerts_policies/${customId}.xml`);
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<incident_preference>CUSTOM</incident_preference>');
    const found = await call(gateway.app, 'GET', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent('Grouped by custom rules')}`);
    expect(found.json).toEqual({ policies: [shown.json?.policy] });
  });

  it('the legacy face shows the same policy the same way', async () => {
    const shown = await call(legacy, 'GET', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent('Grouped by custom rules')}`);
    expect(shown.status).toBe(200);
    expect((shown.json?.policies as Array<{ id: number; incident_preference: string }>)[0]).toMatchObject({ id: customId, incident_preference: 'CUSTOM' });
  });

  it.each([
    ['the gateway', () => gateway.app],
    ['the legacy face', () => legacy],
  ] as const)('%s: a create or an update writing CUSTOM is v2\'s 422 naming incident_preference, and nothing changes', async (_face, app) => {
    const before = ownPolicies().length;
    const created = await call(app(), 'POST', '/v2/alerts_policies.json', { policy: { name: 'Custom by v2', incident_preference: 'CUSTOM' } });
    expect(created.status).toBe(422);
    expect((created.json?.error as { title: string }).title).toBe(REFUSED);
    expect(ownPolicies()).toHaveLength(before);

    const other = ownPolicies().find((p) => p.id !== customId && p.incidentPreference !== 'CUSTOM');
    if (!other) throw new Error('no policy to update');
    const was = other.incidentPreference;
    const updated = await call(app(), 'PUT', `/v2/alerts_policies/${other.id}.json`, { policy: { incident_preference: 'CUSTOM' } });
    expect(updated.status).toBe(422);
    expect((updated.json?.error as { title: string }).title).toBe(REFUSED);
    expect(other.incidentPreference).toBe(was);

    // The CUSTOM policy itself takes a rename and keeps CUSTOM.
    const renamed = await call(app(), 'PUT', `/v2/alerts_policies/${customId}.json`, { policy: { name: 'Grouped by custom rules' } });
    expect(renamed.status).toBe(200);
    expect((renamed.json?.policy as { incident_preference: string }).incident_preference).toBe('CUSTOM');
  });

  it('the gateway\'s refusal names the field in the same title the policy mapping defines', () => {
    expect(REFUSED).toBe(PolicyTitles.invalid('incident_preference must be one of PER_POLICY, PER_CONDITION, PER_CONDITION_AND_TARGET'));
  });
});
