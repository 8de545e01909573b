import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * docs-website src/content/docs/alerts/scale-automate/rest-api/disable-enable-alerts-conditions-using-api.mdx,
 * #example step 1 (the policy lookup by name), sent as the page's curl sends it to the gateway
 * (alert policies translated by the ROUTE_MODES rule naming them) and the sandbox's legacy face.
 * Steps 2 to 4 (alerts_conditions list and update) are served by passthrough only.
 */
const faces = useFaces('/v2/alerts_policies*=translate');
const policies = () => faces().upstream.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT);

describe('disable-enable-alerts-conditions-using-api.mdx, #example step 1', () => {
  // curl -G --data-urlencode 'filter[name]= Logjam Alert': curl encodes the value, space included,
  // and the page's output shows the policy "Logjam Alert".
  it.each(FACES)("%s: GET /v2/alerts_policies.json -G --data-urlencode 'filter[name]= Logjam Alert' finds it", async (face: Face) => {
    const policy = policies()[9];
    if (!policy) throw new Error('no policy');
    policy.name = 'Logjam Alert (disable example)';
    const found = await faces().send(face, { method: 'GET', path: `/v2/alerts_policies.json?filter[name]=${encodeURIComponent(' Logjam Alert (disable example)')}` });
    expect(found.status).toBe(200);
    expect(found.json?.policies).toEqual([expect.objectContaining({ id: policy.id, name: 'Logjam Alert (disable example)' })]);
  });
});
