import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * docs-website src/content/docs/alerts/scale-automate/rest-api/manage-entities-alerts-conditions.mdx,
 * #example: step 1 (the application lookup, by a GET carrying a form body) and step 3 (the
 * policy lookup by name), sent as the page's curl sends them to the gateway (applications
 * translated by default, alert policies by the ROUTE_MODES rule naming them, the legacy API
 * unreachable) and to the sandbox's legacy face. Placeholders (TimberTime, Logjam Alert) are
 * filled with the sandbox's own apps and policies. Steps 5 and 6 (alerts_conditions and
 * alerts_entity_conditions) are served by passthrough only: the gateway translates neither.
 */
const faces = useFaces('/v2/alerts_policies*=translate');
const apps = () => faces().upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
const idsOf = (body: Record<string, unknown> | null): number[] => ((body?.applications ?? []) as Array<{ id: number }>).map((app) => app.id);
const policies = () => faces().upstream.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);

describe('alerts/scale-automate/rest-api/manage-entities-alerts-conditions.mdx, #example step 1', () => {
  it.each(FACES)('%s: GET /v2/applications.json lists the account\'s applications', async (face: Face) => {
    const answer = await faces().send(face, { method: 'GET', path: '/v2/applications.json', keyHeader: 'X-Api-Key' });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json).length).toBeGreaterThan(0);
    expect(idsOf(answer.json).every((id) => apps().some((app) => app.id === id))).toBe(true);
  });

  it.each(FACES)("%s: GET /v2/applications.json with the form body -d 'filter[name]=TimberTime' finds the app by name", async (face: Face) => {
    const app = apps()[3];
    if (!app) throw new Error('no app');
    // curl -X GET ... -d 'filter[name]=...': a GET carrying a form body (no -G).
    const answer = await faces().send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[name]=${encodeURIComponent(app.name)}` });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json)).toContain(app.id);
    expect(((answer.json?.applications ?? []) as Array<{ name: string }>).every((shown) => shown.name.includes(app.name))).toBe(true);
  });
});

describe('manage-entities-alerts-conditions.mdx, #example step 3', () => {
  // curl -G -d 'filter[name]= Logjam Alert': the page's value has a leading space, and its
  // step 4 shows the policy "Logjam Alert" found. curl sends -G data as written, so the query
  // holds the space (here percent-encoded, as an HTTP client must send it).
  it.each(FACES)("%s: GET /v2/alerts_policies.json -G -d 'filter[name]= Logjam Alert' finds the policy named Logjam Alert", async (face: Face) => {
    const policy = policies()[8];
    if (!policy) throw new Error('no policy');
    policy.name = 'Logjam Alert';
    const found = await faces().send(face, { method: 'GET', path: '/v2/alerts_policies.json?filter[name]=%20Logjam%20Alert' });
    expect(found.status).toBe(200);
    expect(found.json?.policies).toEqual([expect.objectContaining({ id: policy.id, name: 'Logjam Alert' })]);
    const exact = await faces().send(face, { method: 'GET', path: '/v2/alerts_policies.json?filter[name]=Logjam%20Alert' });
    expect(exact.json?.policies).toEqual(found.json?.policies);
  });
});
