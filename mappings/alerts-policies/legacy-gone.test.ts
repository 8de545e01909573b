import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox } from '../../test/support/harness.ts';
import { deadOrigin, serveOnLoopback } from '../../test/support/http.ts';
import { createModesGateway } from '../../test/support/modes.ts';

/**
 * Alert policies and NRQL conditions translated, as a client meets it: the legacy REST API is gone (LEGACY_REST_URL
 * points at a port nothing listens on), and the README's rule translates both alert
 * namespaces. Over real loopback HTTP, a client creates a policy, finds it by filter[name],
 * creates, lists, updates and deletes an NRQL condition in it, and deletes the policy: every
 * answer in v2's shape, every key v2 sent present, and the sandbox's own v2 face agrees at the end.
 */

/** The rule the README shows (its one `ROUTE_MODES='...'` line), so the two cannot drift apart. */
function readmeRule(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rule = /^ROUTE_MODES='([^']+)'$/m.exec(readme)?.[1];
  if (rule === undefined) throw new Error("README.md shows no ROUTE_MODES='...' line");
  return rule;
}

type Json = Record<string, unknown>;
const POLICY_KEYS = ['id', 'incident_preference', 'name', 'created_at', 'updated_at'];
/** v2's order (newrelic-client-go pkg/alerts/nrql_conditions_test.go): type before id, entity_guid (newer answers) last. */
const NRQL_CONDITION_KEYS = ['type', 'id', 'name', 'enabled', 'runbook_url', 'value_function', 'expected_groups', 'ignore_overlap', 'violation_time_limit_seconds', 'terms', 'nrql', 'signal', 'expiration', 'entity_guid'];
const TERM = { duration: '5', operator: 'above', priority: 'critical', threshold: '2', time_function: 'all' };

let upstream: Awaited<ReturnType<typeof startSandbox>>;
let served: { url: string; close: () => Promise<void> };
let legacyUrl: string;

beforeAll(async () => {
  upstream = await startSandbox({ apmApps: 20 });
  legacyUrl = await deadOrigin();
  const gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl, routeModes: readmeRule() });
  served = await serveOnLoopback(gateway.app.fetch);
});
afterAll(async () => {
  await served?.close();
  await upstream?.close();
});

async function send(method: string, path: string, body?: Json): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${served.url}${path}`, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Json };
}

describe('alert policies and NRQL conditions with the legacy API gone', () => {
  it('the legacy API is really unreachable', async () => {
    await expect(fetch(`${legacyUrl}/v2/alerts_policies.json`)).rejects.toThrow();
  });

  it('a client runs a policy and an NRQL condition through their whole life, in v2 shapes', async () => {
    const name = 'Checkout latency';
    const created = await send('POST', '/v2/alerts_policies.json', { policy: { name, incident_preference: 'PER_CONDITION' } });
    expect(created.status).toBe(201);
    const policy = created.json.policy as Json;
    expect(Object.keys(policy)).toEqual(POLICY_KEYS);
    expect(policy).toMatchObject({ name, incident_preference: 'PER_CONDITION' });

    const found = await send('GET', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}`);
    expect(found).toEqual({ status: 200, json: { policies: [policy] } });

    const condition = {
      name: 'Slow checkouts',
      enabled: true,
      terms: [TERM],
      nrql: { query: "SELECT average(duration) FROM Transaction WHERE name = 'checkout'", since_value: '3' },
    };
    const made = await send('POST', `/v2/alerts_nrql_conditions/policies/${String(policy.id)}.json`, { nrql_condition: condition });
    expect(made.status).toBe(201);
    const shown = made.json.nrql_condition as Json;
    expect(Object.keys(shown)).toEqual(NRQL_CONDITION_KEYS);
    expect(shown).toMatchObject({ type: 'static', ...condition });

    const listed = await send('GET', `/v2/alerts_nrql_conditions.json?policy_id=${String(policy.id)}`);
    expect(listed).toEqual({ status: 200, json: { nrql_conditions: [shown] } });
    // The sandbox's own v2 face shows the very same condition, entity_guid and key order included.
    const witnessed = await fetch(`${upstream.url}/v2/alerts_nrql_conditions.json?policy_id=${String(policy.id)}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    const [seen] = ((await witnessed.json()) as { nrql_conditions: Json[] }).nrql_conditions;
    expect(Object.keys(seen!)).toEqual(NRQL_CONDITION_KEYS);
    expect(seen).toEqual(shown);
    expect(typeof shown.entity_guid === 'string' && /^[A-Za-z0-9+/]+$/.test(shown.entity_guid)).toBe(true);

    const updated = await send('PUT', `/v2/alerts_nrql_conditions/${String(shown.id)}.json`, { nrql_condition: { terms: [{ ...TERM, threshold: '4' }] } });
    expect(updated.status).toBe(200);
    expect(updated.json.nrql_condition).toEqual({ ...shown, terms: [{ ...TERM, threshold: '4' }] });

    const deletedCondition = await send('DELETE', `/v2/alerts_nrql_conditions/${String(shown.id)}.json`);
    expect(deletedCondition).toEqual({ status: 200, json: updated.json });
    expect(await send('GET', `/v2/alerts_nrql_conditions.json?policy_id=${String(policy.id)}`)).toEqual({ status: 200, json: { nrql_conditions: [] } });

    const deletedPolicy = await send('DELETE', `/v2/alerts_policies/${String(policy.id)}.json`);
    expect(deletedPolicy).toEqual({ status: 200, json: { policy } });
    expect((await send('GET', `/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}`)).json).toEqual({ policies: [] });

    // The sandbox's own v2 face (the witness, written apart from the gateway) saw the same life.
    const witness = await fetch(`${upstream.url}/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(await witness.json()).toEqual({ policies: [] });
    expect(upstream.sandbox.data.alerts.conditions.some((c) => c.id === shown.id)).toBe(false);
  });
});
