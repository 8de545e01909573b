import { expect, it } from 'vitest';
import type { FaceAnswer } from '../support/compare.ts';
import { describeDifferential } from '../support/differential.ts';
import { DEMO_KEY } from '../support/harness.ts';

/**
 * Paths no route serves, or serves only in part, answered alike by the gateway and by the
 * sandbox's legacy face: the check order (format before method), the 405 Allow set, v2-shaped
 * 404s outside /v2, and v0 deployments in JSON. Compared as sent: status, the whole
 * Content-Type, the Allow set and the body's text.
 */
const asSent = (answer: FaceAnswer) => ({ status: answer.status, type: answer.type, allow: answer.allow?.split(', ').sort().join(', ') ?? null, body: answer.text });

describeDifferential('gateway and legacy face agree at the edges', { apmApps: 30 }, (faces) => {
  it.each([
    ['an unknown format on a write method', 'POST', '/v2/applications.txt'],
    ['an unknown method', 'PATCH', '/v2/applications/123.json'],
    ['an unknown resource', 'GET', '/v2/servers.json'],
    ['a path outside /v2', 'GET', '/no-such-thing.json'],
    ['v0 deployments without a deployment, in JSON', 'POST', '/deployments.json'],
    ['v0 deployments without a deployment, in XML', 'POST', '/deployments.xml'],
  ])('%s', async (name, method, path) => {
    const headers = { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/x-www-form-urlencoded' };
    const answers = await faces.send({ name, method, path, headers, body: 'x=1' });
    const [g, l] = [asSent(answers.gateway), asSent(answers.legacy)];
    if (path === '/v2/servers.json') {
      // A retired product: the sandbox words v2's own 410; the gateway's title also names the
      // replacement (both are v2 error bodies). Everything but the title alike.
      expect({ ...g, body: undefined }).toEqual({ ...l, body: undefined });
      expect(JSON.parse(g.body)).toEqual({ error: { title: expect.stringMatching(/retired.*Infrastructure/) } });
    } else {
      expect(g).toEqual(l);
    }
    expect(g.status).toBeGreaterThanOrEqual(400);
    expect(g.status).toBeLessThan(500);
    expect(g.type).toMatch(/^application\/(json|xml)/);
  });

  it('the sandbox entity search takes tag names that are JavaScript property names', async () => {
    const response = await fetch(`${faces.legacyUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY },
      body: JSON.stringify({ query: `{ actor { entitySearch(query: "tags.constructor = 'x'") { count } } }` }),
    });
    expect(await response.json()).toEqual({ data: { actor: { entitySearch: { count: 0 } } } });
  });
});
