import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { send, applicationOf, type LegacyRoute } from '../legacy/common.ts';
import { legacyV2Routes } from '../legacy/face.ts';
import { LEGACY_ROUTES } from '../legacy/routes.ts';
import { createSandbox } from '../server.ts';

/** The legacy face's dispatch: 404s, 405 with Allow, 401s, HEAD, error formats, and the table. */
const NOW = 1_750_000_000_000;
const sandbox = createSandbox({ seed: 7, apmApps: 6, now: () => NOW });
const DEMO = { 'x-api-key': 'NRAK-SANDBOX-DEMO' };
const appId = sandbox.data.apps.find((a) => a.accountId === sandbox.data.keys.get('NRAK-SANDBOX-DEMO')?.[0])?.id as number;

const call = (path: string, method = 'GET', headers: Record<string, string> = DEMO): Promise<Response> =>
  Promise.resolve(sandbox.app.request(path, { method, headers }));

describe('legacy face dispatch', () => {
  it('404s an unknown resource, an unknown format and an unknown application, in the path format', async () => {
    const unknown = await call('/v2/no_such_resource.json');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { title: 'Unknown v2 resource' } });
    const yaml = await call(`/v2/applications/${appId}.yaml`);
    expect(yaml.status).toBe(404);
    expect(await yaml.json()).toEqual({ error: { title: 'Unknown format .yaml: use .json or .xml' } });
    const missing = await call('/v2/applications/999999999.xml');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/xml/);
    expect(await missing.text()).toContain('No Application found with the given ID');
    expect((await call('/v2/applications/0x1.json')).status).toBe(404);
  });

  it('405s with every method of the path in Allow, before asking for a key', async () => {
    const patch = await call(`/v2/applications/${appId}.json`, 'PATCH', {});
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('GET, PUT, DELETE');
    expect(await patch.json()).toEqual({ error: { title: 'Method PATCH is not allowed here' } });
    const head = await call(`/v2/applications/${appId}/deployments/1.json`, 'HEAD');
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('DELETE');
    expect((await call('/deployments.xml')).headers.get('allow')).toBe('POST');
  });

  it('401s without a key or with an unknown one', async () => {
    const none = await call('/v2/applications.json', 'GET', {});
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: { title: 'Invalid request, API key required' } });
    const bad = await call('/v2/applications.json', 'GET', { 'x-api-key': 'nope' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: { title: 'Invalid API key' } });
  });

  it('answers HEAD on GET routes as GET', async () => {
    const head = await call(`/v2/applications/${appId}.json`, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/json/);
  });

  it('declares each route once: a template with several methods has one entry per handler', () => {
    const shapes = LEGACY_ROUTES.map((r) => `${r.template} ${r.methods.join(',')}`);
    expect(new Set(shapes).size).toBe(shapes.length);
    expect(LEGACY_ROUTES.filter((r) => r.template === '/v2/applications/{id}.{format}').map((r) => r.methods)).toEqual([['GET'], ['PUT'], ['DELETE']]);
  });

  it('adds a route with one table entry and one handler', async () => {
    const extra: LegacyRoute = {
      template: '/v2/applications/{id}/echo/{thing}.{format}',
      methods: ['GET'],
      handler: (req) => send(req.format, 200, { echo: { id: applicationOf(req).id, thing: req.path.thing ?? '', q: req.params } }),
    };
    const app = new Hono().route('/', legacyV2Routes(sandbox.data, () => NOW, [...LEGACY_ROUTES, extra]));
    const response = await app.request(`/v2/applications/${appId}/echo/a%20b.json?x=1`, { headers: DEMO });
    // Params are taken from Hono's c.req.path, which has already decoded %20 (as before the table).
    expect(await response.json()).toEqual({ echo: { id: appId, thing: 'a b', q: [['x', '1']] } });
    // A JSON POST is no read (a form or bodiless POST is served as the GET: face.ts, readByPost).
    const posted = await app.request(`/v2/applications/${appId}/echo/a.json`, { method: 'POST', headers: { ...DEMO, 'content-type': 'application/json' }, body: '{}' });
    expect(posted.headers.get('allow')).toBe('GET');
  });

  it('links and host-filters only current hosts: a non-reporting app has none', async () => {
    const account = sandbox.data.keys.get('NRAK-SANDBOX-MULTI') ?? [];
    const stopped = sandbox.data.apps.find((a) => !a.reporting && a.hosts.length > 0 && account.includes(a.accountId));
    if (!stopped) throw new Error('seed 7 has no stopped app with hosts');
    const headers = { 'x-api-key': 'NRAK-SANDBOX-MULTI', 'x-account-id': String(stopped.accountId) };
    const shown = await call(`/v2/applications/${stopped.id}.json`, 'GET', headers);
    expect(((await shown.json()) as { application: { links: unknown } }).application.links).toMatchObject({ application_hosts: [], application_instances: [] });
    const host = encodeURIComponent(stopped.hosts[0]?.name ?? '');
    const listed = await call(`/v2/applications.json?filter[host]=${host}`, 'GET', headers);
    expect(((await listed.json()) as { applications: Array<{ id: number }> }).applications.map((a) => a.id)).not.toContain(stopped.id);
  });
});
