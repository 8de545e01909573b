import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * New Relic's documented alert requests that the gateway translates, from docs-website
 * src/content/docs/alerts/scale-automate/rest-api/rest-api-calls-alerts.mdx: the alert policy
 * calls (#policies-create, #policies-update, #policies-delete, #policies-list) and the DELETE of
 * each other condition family (#conditions-delete, #ext-conditions-delete,
 * #synthetics-conditions-delete, #multilocation-synthetics-conditions-delete; the NRQL
 * conditions' calls are tested with their mapping). Alert routes stay passthrough unless a
 * ROUTE_MODES rule names them (README, "Migration modes in brief"), so the gateway runs with one
 * rule for the policies and one for the condition DELETEs, the legacy API unreachable. Each
 * example goes to the gateway and to the sandbox's legacy face, as the page's curl sends it
 * (`-H "$API_KEY"` stands for the key header, here X-Api-Key).
 *
 * The page's bodies are templates: `"string"` stands for a value. Its tables say what goes
 * there: `name` may stay "string" ("Leaving it unchanged will create a policy called
 * `string`"), `incident_preference` "must be one of" PER_POLICY, PER_CONDITION,
 * PER_CONDITION_AND_TARGET. Both faces take the template with those values filled in; the
 * template as written, with "string" for incident_preference, is refused alike (422 naming it).
 */
const faces = useFaces('/v2/alerts_policies*=translate;DELETE /v2/alerts_*conditions/*=translate;GET /v2/alerts_nrql_conditions=translate');
const policies = () => faces().upstream.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);
const policyBody = (name: string, incidentPreference: string) => `'{
  "policy": {
    "incident_preference": "${incidentPreference}",
    "name": "${name}"
  }
}'`.slice(1, -1);
const titleOf = (json: Record<string, unknown> | null): string => (json?.error as { title?: string } | undefined)?.title ?? '';

describe('rest-api-calls-alerts.mdx, #alert-policies', () => {
  it.each(FACES)('%s: #policies-create, POST /v2/alerts_policies.json with the template filled in creates the policy', async (face: Face) => {
    const before = policies().length;
    const created = await faces().send(face, { method: 'POST', path: '/v2/alerts_policies.json', body: policyBody('string', 'PER_CONDITION'), contentType: 'json' });
    expect(created.status).toBe(201);
    const policy = created.json?.policy as { id: number; name: string; incident_preference: string };
    expect(policy).toMatchObject({ name: 'string', incident_preference: 'PER_CONDITION' });
    expect(Object.keys(policy)).toEqual(['id', 'incident_preference', 'name', 'created_at', 'updated_at']);
    // The documented effect: a policy called `string` now exists in the account.
    expect(policies()).toHaveLength(before + 1);
    expect(policies().find((p) => p.id === policy.id)).toMatchObject({ name: 'string', incidentPreference: 'PER_CONDITION' });
  });

  it.each(FACES)('%s: #policies-create, the template as written ("string" for incident_preference) is 422 naming it, nothing created', async (face: Face) => {
    const before = policies().length;
    const refused = await faces().send(face, { method: 'POST', path: '/v2/alerts_policies.json', body: policyBody('string', 'string'), contentType: 'json' });
    expect(refused.status).toBe(422);
    expect(titleOf(refused.json)).toContain('incident_preference');
    expect(policies()).toHaveLength(before);
  });

  it.each(FACES)('%s: #policies-update, PUT /v2/alerts_policies/{id}.json with name and incident_preference changes both', async (face: Face) => {
    const policy = policies()[face === 'gateway' ? 4 : 5];
    if (!policy) throw new Error('no policy');
    const name = `Renamed through ${face}`;
    const updated = await faces().send(face, { method: 'PUT', path: `/v2/alerts_policies/${policy.id}.json`, body: policyBody(name, 'PER_CONDITION_AND_TARGET'), contentType: 'json' });
    expect(updated.status).toBe(200);
    expect(updated.json?.policy).toMatchObject({ id: policy.id, name, incident_preference: 'PER_CONDITION_AND_TARGET' });
    expect(policy).toMatchObject({ name, incidentPreference: 'PER_CONDITION_AND_TARGET' });
  });

  it.each(FACES)('%s: #policies-delete, DELETE /v2/alerts_policies/$POLICY_ID.json removes the policy and its conditions', async (face: Face) => {
    const policy = policies()[face === 'gateway' ? 6 : 7];
    if (!policy) throw new Error('no policy');
    const deleted = await faces().send(face, { method: 'DELETE', path: `/v2/alerts_policies/${policy.id}.json` });
    expect(deleted.status).toBe(200);
    expect(deleted.json?.policy).toMatchObject({ id: policy.id, name: policy.name });
    expect(policies().some((p) => p.id === policy.id)).toBe(false);
    expect(faces().upstream.sandbox.data.alerts.conditions.some((c) => c.accountId === PRIMARY_ACCOUNT && c.policyId === policy.id)).toBe(false);
  });

  it.each(FACES)('%s: #policies-list, GET /v2/alerts_policies.json lists the first page of the account\'s policies by id', async (face: Face) => {
    const listed = await faces().send(face, { method: 'GET', path: '/v2/alerts_policies.json' });
    expect(listed.status).toBe(200);
    const ids = ((listed.json?.policies ?? []) as Array<{ id: number }>).map((p) => p.id);
    expect(ids).toEqual(policies().map((p) => p.id).sort((a, b) => a - b).slice(0, ids.length));
    expect(ids.length).toBeGreaterThan(0);
  });
});

describe('rest-api-calls-alerts.mdx, the other condition families\' DELETE', () => {
  it.each([
    ['#conditions-delete', 'alerts_conditions', 'condition'],
    ['#ext-conditions-delete', 'alerts_external_service_conditions', 'external_service_condition'],
    ['#synthetics-conditions-delete', 'alerts_synthetics_conditions', 'synthetics_condition'],
    ['#multilocation-synthetics-conditions-delete', 'alerts_location_failure_conditions', 'location_failure_condition'],
  ] as const)('%s: DELETE /v2/%s/$CONDITION_ID.json deletes the condition on both faces', async (_section, family, singular) => {
    const own = faces().upstream.sandbox.data.alerts.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === family);
    for (const [face, condition] of [['gateway', own[0]], ['legacy', own[1]]] as const) {
      if (!condition) throw new Error(`no ${family} condition`);
      const deleted = await faces().send(face, { method: 'DELETE', path: `/v2/${family}/${condition.id}.json` });
      expect(deleted.status, face).toBe(200);
      expect((deleted.json?.[singular] as { id: number }).id).toBe(condition.id);
      expect(faces().upstream.sandbox.data.alerts.conditions.some((c) => c.id === condition.id), face).toBe(false);
    }
  });
});

describe('rest-api-calls-alerts.mdx, #list-nrql-conditions', () => {
  // The page's curl: `curl -X GET 'https://api.newrelic.com/v2/alerts_nrql_conditions.json' -H "$API_KEY" -d 'policy_id=$POLICY_ID'`:
  // policy_id in a GET's form body, not in the query string.
  it.each(FACES)('%s: GET /v2/alerts_nrql_conditions.json with policy_id as a form body lists that policy\'s NRQL conditions', async (face: Face) => {
    const own = faces().upstream.sandbox.data.alerts.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions');
    const policyId = own[0]?.policyId;
    if (policyId === undefined) throw new Error('no NRQL condition in the sandbox');
    const listed = await faces().send(face, { method: 'GET', path: '/v2/alerts_nrql_conditions.json', body: `policy_id=${policyId}` });
    expect(listed.status, listed.text).toBe(200);
    const ids = (listed.json?.nrql_conditions as { id: number }[]).map((c) => c.id).sort((a, b) => a - b);
    // The first page (50 a page) of the policy's conditions, and none of another policy's.
    const policys = own.filter((c) => c.policyId === policyId).map((c) => c.id).sort((a, b) => a - b);
    expect(ids).toEqual(policys.slice(0, 50));
  });
});
