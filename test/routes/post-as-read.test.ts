import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, createTestGateway, startSandbox, type TestGateway } from '../support/harness.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';
import { createModesGateway } from '../support/modes.ts';

/**
 * Reads by POST: a POST whose parameters are a form body (or the query, or nothing) to a v2 route
 * with no POST of its own is served as the route's GET, as Ansible's
 * community.general.newrelic_deployment expects (plugins/modules/newrelic_deployment.py,
 * get_application_id: `POST /v2/applications.json`, body `filter[name]=<app_name>`, urllib's
 * form content type). UNCONFIRMED against live v2: the `post-as-read` probe settles it. Both
 * faces answer it alike; a POST that is a write keeps its route.
 */
type Answer = { applications: Array<{ id: number; name: string }> };

let upstream: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let appName: string;
let appId: number;

beforeAll(async () => {
  upstream = await startSandbox({ apmApps: 12 });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.graphqlUrl });
  const all = (await (await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': DEMO_KEY } })).json()) as Answer;
  const first = all.applications[3] as Answer['applications'][number];
  appName = first.name;
  appId = first.id;
});
afterAll(() => upstream?.close());

const form = { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/x-www-form-urlencoded' };

describe('a POST to a list or show route with no POST of its own', () => {
  it('answers the filtered list for POST /v2/applications.json with filter[name] as a form body, as the GET does', async () => {
    const posted = await gateway.app.request('/v2/applications.json', { method: 'POST', headers: form, body: `filter[name]=${encodeURIComponent(appName)}` });
    expect(posted.status).toBe(200);
    const read = await gateway.app.request(`/v2/applications.json?filter[name]=${encodeURIComponent(appName)}`, { headers: { 'X-Api-Key': DEMO_KEY } });
    const body = (await posted.json()) as Answer;
    expect(body).toEqual(await read.json());
    expect(body.applications.map((app) => app.id)).toContain(appId);
    expect(body.applications.every((app) => app.name.toLowerCase().includes(appName.toLowerCase()))).toBe(true);
  });

  it('serves a show route, and the query of a bodiless POST, as the read', async () => {
    const show = await gateway.app.request(`/v2/applications/${appId}.json`, { method: 'POST', headers: { 'X-Api-Key': DEMO_KEY } });
    expect(show.status).toBe(200);
    expect(((await show.json()) as { application: { id: number } }).application.id).toBe(appId);
    const queried = await gateway.app.request(`/v2/applications.json?filter[ids]=${appId}`, { method: 'POST', headers: { 'X-Api-Key': DEMO_KEY, 'Content-Length': '0' } });
    expect(((await queried.json()) as Answer).applications.map((app) => app.id)).toEqual([appId]);
    // A bad parameter is the read's own 422, not a 405.
    const bad = await gateway.app.request('/v2/applications.json', { method: 'POST', headers: form, body: 'filter[ids]=abc' });
    expect(bad.status).toBe(422);
  });

  it('is no read with a JSON body (405 as before), and a route with its own POST keeps it (a write)', async () => {
    const json = await gateway.app.request('/v2/applications.json', { method: 'POST', headers: { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/json' }, body: '{"application":{"name":"x"}}' });
    expect(json.status).toBe(405);
    expect(json.headers.get('allow')).toBe('GET');
    const created = await gateway.app.request(`/v2/applications/${appId}/deployments.json`, { method: 'POST', headers: form, body: 'deployment[revision]=post-as-read-1' });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { deployment: { revision: string } }).deployment.revision).toBe('post-as-read-1');
  });
});

describe("Ansible's request, exactly as it is sent, over loopback HTTP", () => {
  /**
   * fetch_url(module, url, data=data, headers={'Api-Key': token}) with data
   * `filter[name]=<app_name>` (the name not encoded): urllib's POST with its default form content
   * type, Ansible's User-Agent, http.client's Accept-Encoding: identity, and Connection: close.
   */
  const ansible = (key: string, name: string) => ({
    method: 'POST',
    headers: {
      'Api-Key': key,
      'Content-Type': 'application/x-www-form-urlencoded',
      'User-Agent': 'ansible-httpget',
      'Accept-Encoding': 'identity',
      Connection: 'close',
    },
    body: `filter[name]=${name}`,
  });

  it('gets the same list from the gateway and the legacy face, and the module finds the id it wants', async () => {
    const server = await serveOnLoopback(gateway.app.fetch);
    try {
      const fromGateway = await httpSend(`${server.url}/v2/applications.json`, ansible(DEMO_KEY, appName));
      const fromLegacy = await httpSend(`${upstream.url}/v2/applications.json`, ansible(DEMO_KEY, appName));
      expect(fromGateway.status).toBe(200);
      expect(fromLegacy.status).toBe(200);
      const [gatewayBody, legacyBody] = [(await fromGateway.json()) as Answer, (await fromLegacy.json()) as Answer];
      // What the module reads: result["applications"][0]["id"].
      expect(gatewayBody.applications[0]?.id).toBe(legacyBody.applications[0]?.id);
      expect(gatewayBody.applications.map((app) => app.id)).toEqual(legacyBody.applications.map((app) => app.id));
      expect(gatewayBody.applications.map((app) => app.id)).toContain(appId);
      // Both faces refuse a JSON POST to the list alike.
      const json = { method: 'POST', headers: { 'Api-Key': DEMO_KEY, 'Content-Type': 'application/json' }, body: '{}' };
      expect((await httpSend(`${server.url}/v2/applications.json`, json)).status).toBe(405);
      expect((await httpSend(`${upstream.url}/v2/applications.json`, json)).status).toBe(405);
      // An empty body that names JSON (or XML) is no form either.
      for (const type of ['application/json', 'application/xml']) {
        const empty = { method: 'POST', headers: { 'Api-Key': DEMO_KEY, 'Content-Type': type }, body: '' };
        expect((await httpSend(`${server.url}/v2/applications.json`, empty)).status).toBe(405);
        expect((await httpSend(`${upstream.url}/v2/applications.json`, empty)).status).toBe(405);
      }
    } finally {
      await server.close();
    }
  });
});

/** Is there a python3 to run urllib with? (The test below is skipped without one.) */
const hasPython = spawnSync('python3', ['-c', 'import urllib.request'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!hasPython)("Ansible's lookup run by Python's urllib itself", () => {
  /**
   * fetch_url hands Ansible's Request (ansible.module_utils.urls) a urllib request with data and
   * no method: urllib makes it a POST and adds `Content-Type: application/x-www-form-urlencoded`.
   * Run here by urllib, not imitated: the module's data and headers, its reading of the answer.
   */
  const LOOKUP = [
    'import json, sys, urllib.request',
    'url, key, name = sys.argv[1:4]',
    'data = ("filter[name]=%s" % name).encode()',
    'request = urllib.request.Request(url + "/v2/applications.json", data=data, headers={"Api-Key": key, "User-Agent": "ansible-httpget"})',
    'with urllib.request.urlopen(request) as response:',
    '    result = json.loads(response.read())',
    '    print(response.status, request.get_method(), result["applications"][0]["id"])',
  ].join('\n');

  it('finds the application id through the gateway, as through the legacy face', async () => {
    const server = await serveOnLoopback(gateway.app.fetch);
    try {
      const run = (url: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const child = spawn('python3', ['-c', LOOKUP, url, DEMO_KEY, appName], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          let err = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`python3 exited ${code}: ${err}`))));
        });
      const [viaGateway, viaLegacy] = [await run(server.url), await run(upstream.url)];
      expect(viaGateway).toBe(viaLegacy);
      const [status, method, id] = viaGateway.split(' ');
      expect([status, method]).toEqual(['200', 'POST']);
      expect(Number(id)).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

describe('in compare mode', () => {
  it('is compared as a read (the legacy answer served, the translation compared), never a dry-run write', async () => {
    const modes = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: upstream.url, routeModes: '*=compare' });
    const posted = await modes.app.request('/v2/applications.json', { method: 'POST', headers: form, body: `filter[name]=${encodeURIComponent(appName)}` });
    expect(posted.status).toBe(200);
    expect(((await posted.json()) as Answer).applications.map((app) => app.id)).toContain(appId);
    const [record] = await modes.sink.waitForRecords(1);
    expect(record?.outcome).not.toBe('dry_run');
    expect(record?.status).toEqual({ legacy: 200, translated: 200 });
    expect(record?.dryRun).toBeUndefined();

    // candidate: the translation answers, the legacy API is asked the same POST twice, as a read.
    const candidate = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: upstream.url, routeModes: '*=candidate' });
    const served = await candidate.app.request('/v2/applications.json', { method: 'POST', headers: form, body: `filter[name]=${encodeURIComponent(appName)}` });
    expect(served.status).toBe(200);
    await served.arrayBuffer();
    const [compared] = await candidate.sink.waitForRecords(1);
    expect(compared?.outcome).not.toBe('dry_run');
    expect(compared?.status).toEqual({ legacy: 200, translated: 200 });
  });
});
