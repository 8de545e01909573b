import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_KEY,
  MULTI_KEY,
  PRIMARY_ACCOUNT,
  SECONDARY_ACCOUNT,
  createTestGateway,
  startSandbox,
} from '../../test/support/harness.ts';

/** Gateway behaviour over the sandbox's NerdGraph face (in-process app, real loopback upstream). */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 1050 });
});
afterAll(() => sandbox.close());

const demo = { 'X-Api-Key': DEMO_KEY };

describe('paging', () => {
  it('walking every page costs exactly two upstream requests per page (search, page details), and yields every app once', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    await gateway.app.request('/v2/applications/1.json', { headers: demo }); // warm the accounts cache
    const before = await gateway.upstreamCount();
    const seen: number[] = [];
    let next: string | undefined = 'http://localhost/v2/applications.json?filter[name]=e';
    let pages = 0;
    while (next) {
      const response = await gateway.app.request(next, { headers: demo });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { applications: Array<{ id: number }> };
      seen.push(...body.applications.map((a) => a.id));
      pages++;
      next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    const expected = sandbox.sandbox.data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT && a.name.toLowerCase().includes('e'));
    expect(pages).toBe(Math.ceil(expected.length / 200));
    expect(pages).toBeGreaterThanOrEqual(5);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(expected.map((a) => a.id).sort());
    // Per page: one ApplicationsSearch, and one ApplicationsPageDetails for its links and browser apdex.
    expect((await gateway.upstreamCount()) - before).toBe(2 * pages);
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(pages);
    expect(await gateway.upstreamCount('ApplicationsPageDetails')).toBe(pages);
  });

  it('jumping to page N walks once; asking again is served from the cursor cache at one request', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const page4 = await gateway.app.request('/v2/applications.json?page=4', { headers: demo });
    expect(page4.status).toBe(200);
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(4);
    await gateway.app.request('/v2/applications.json?page=4', { headers: demo });
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(5);
    await gateway.app.request('/v2/applications.json?page=5', { headers: demo });
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(6);
  });

  it('a page past the end answers an empty list without walking', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    await gateway.app.request('/v2/applications.json', { headers: demo });
    const response = await gateway.app.request('/v2/applications.json?page=99', { headers: demo });
    expect(await response.json()).toMatchObject({ applications: [] });
    expect(response.headers.get('link')).toBe('<http://localhost/v2/applications.json?page=1>; rel="first", <http://localhost/v2/applications.json?page=6>; rel="prev"');
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(1);
  });

  it('Link URLs point at the configured public base URL', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, config: { publicBaseUrl: 'https://bridge.example.com' } });
    const list = await gateway.app.request('http://internal:8080/v2/applications.xml?filter[name]=e&page=2', { headers: demo });
    expect(list.headers.get('link')).toMatch(/^<https:\/\/bridge\.example\.com\/v2\/applications\.xml\?filter\[name\]=e&page=1>; rel="first"/);
    expect(list.headers.get('link')).not.toContain('internal');
    expect(list.headers.get('content-type')).toBe('application/xml; charset=utf-8');
  });
});

describe('app id -> GUID', () => {
  it('is computed: a show costs one upstream request, with no GUID lookup', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT)!;
    const answers = await Promise.all(Array.from({ length: 5 }, () => gateway.app.request(`/v2/applications/${app.id}.json`, { headers: demo })));
    expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
    expect(await gateway.upstreamCount('ApplicationByGuid')).toBe(5);
    expect(await gateway.upstreamCount('EntityGuidSearch')).toBe(0);
  });

  it('answers an unknown id and an id of another account the same 404, each in one request', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const foreign = sandbox.sandbox.data.apps.find((a) => a.accountId === SECONDARY_ACCOUNT)!;
    const unknown = await gateway.app.request('/v2/applications/123456789.json', { headers: demo });
    const other = await gateway.app.request(`/v2/applications/${foreign.id}.json`, { headers: demo });
    expect(unknown.status).toBe(404);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual(await unknown.json());
    expect(await gateway.upstreamCount('ApplicationByGuid')).toBe(2);
    // The same app is visible to a key that can read its account.
    const multi = await gateway.app.request(`/v2/applications/${foreign.id}.json`, { headers: { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) } });
    expect(multi.status).toBe(200);
  });
});

describe('account resolution', () => {
  it('refuses to guess for a key that sees several accounts', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const response = await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': MULTI_KEY } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { title: string } }).error.title).toMatch(/X-Account-Id/);
  });

  it('uses the configured default account when the key can see it, and refuses one it cannot', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, config: { defaultAccountId: SECONDARY_ACCOUNT } });
    const multi = await gateway.app.request('/v2/applications.json', { headers: { 'X-Api-Key': MULTI_KEY } });
    const ids = ((await multi.json()) as { applications: Array<{ id: number }> }).applications.map((a) => a.id);
    const secondaryIds = new Set(sandbox.sandbox.data.apps.filter((a) => a.accountId === SECONDARY_ACCOUNT).map((a) => a.id));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => secondaryIds.has(id))).toBe(true);
    expect((await gateway.app.request('/v2/applications.json', { headers: demo })).status).toBe(403);
  });
});

describe('malformed input never yields a 5xx', () => {
  const paths = [
    '/v2/applications.json?page=abc',
    '/v2/applications.json?page=99999999999999999999999',
    `/v2/applications.json?filter[name]=${'x'.repeat(5000)}`,
    '/v2/applications.json?filter[name]=%0A%00',
    '/v2/applications.json?filter[ids]=1,2,' + '9'.repeat(400),
    `/v2/applications.json?filter[ids]=${Array.from({ length: 1500 }, (_, i) => i + 1).join(',')}`,
    '/v2/applications.json?filter[language]=%27%20OR%201%3D1',
    '/v2/applications.json?filter[host]=web-1%00',
    '/v2/applications.json?%ZZ=%E0%A4%A&page=%',
    '/v2/applications.json?exclude_links=maybe',
    '/v2/applications.html',
    '/v2/applications.json.xml',
    '/v2/applications/.json',
    '/v2/applications/-1.json',
    '/v2/applications/0.json',
    '/v2/applications/1e3.json',
    '/v2/applications/0x10.json',
    `/v2/applications/${'9'.repeat(300)}.json`,
    '/v2/applications/%27%20OR%201%3D1.json',
    '/v2/applications/12/extra.json',
    '/v2/unknown.json',
    '/v2/',
    '/v3/applications.json',
    '/',
  ];

  it.each(paths.map((path) => [path.slice(0, 70), path]))('%s', async (_label, path) => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const headerSets: Array<Record<string, string>> = [demo, {}, { 'X-Api-Key': 'x'.repeat(5000) }, { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': '1; DROP' }];
    for (const headers of headerSets) {
      const response = await gateway.app.request(path, { headers });
      expect(response.status, `${path} ${JSON.stringify(headers).slice(0, 40)}`).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const text = await response.text();
      const body = response.headers.get('content-type')?.startsWith('application/xml') ? text : JSON.parse(text);
      if (typeof body === 'string') expect(body).toMatch(/<error><title>.+<\/title><\/error>/);
      else expect(typeof body.error.title).toBe('string');
    }
  });

  it('an empty id list matches nothing, without asking NerdGraph', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    for (const query of ['filter[ids]=', 'filter[ids]=,,', 'filter[id]=&filter[name]=a']) {
      const response = await gateway.app.request(`/v2/applications.json?${query}`, { headers: demo });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ applications: [] });
    }
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(0);
  });

  it('bad bodies and methods are v2 errors too', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const post = await gateway.app.request('/v2/applications.json', { method: 'POST', headers: demo, body: '{' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const huge = await gateway.app.request('/v2/applications.json', {
      method: 'POST',
      headers: { ...demo, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(3 * 1024 * 1024) },
      body: 'a='.padEnd(3 * 1024 * 1024, 'x'),
    });
    expect(huge.status).toBe(413);
    const json = await gateway.app.request('/v2/applications.json', { headers: { ...demo, 'content-type': 'application/json' } });
    expect(json.status).toBe(200);
  });
});

describe('operations endpoints', () => {
  it('/healthz, /readyz and /metrics with the documented series', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    await gateway.app.request('/v2/applications.json', { headers: demo });
    await gateway.app.request('/v2/applications/abc.json', { headers: demo });
    expect((await gateway.app.request('/healthz')).status).toBe(200);
    expect((await gateway.app.request('/readyz')).status).toBe(200);
    const metrics = await (await gateway.app.request('/metrics')).text();
    expect(metrics).toContain('v2bridge_http_requests_total{route="/v2/applications.{format}",method="GET",status="200"} 1');
    expect(metrics).toContain('v2bridge_http_requests_total{route="/v2/applications/{id}.{format}",method="GET",status="404"} 1');
    expect(metrics).toContain('v2bridge_upstream_requests_total{operation="ApplicationsSearch",outcome="ok"} 1');
    expect(metrics).not.toMatch(/abc/);
  });

  it('/readyz answers 503 when NerdGraph cannot be reached', async () => {
    const { createApp } = await import('../../src/app.ts');
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1, accountsCacheTtlMs: 1, metricNamesLookbackMs: 7 * 86_400_000, requestDeadlineMs: 10_000 },
      nerdgraph: { call: () => Promise.reject(new Error('unused')) },
      mappings: [],
      metrics: gateway.metrics,
      logger: (await import('../../src/ops/logger.ts')).createLogger('silent'),
      readiness: () => Promise.reject(new Error('connection refused')),
    });
    const response = await app.request('/readyz');
    expect(response.status).toBe(503);
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one; logs carry it', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const safe = await gateway.app.request('/v2/applications.json', { headers: { ...demo, 'X-Request-Id': 'abc-123' } });
    expect(safe.headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await gateway.app.request('/v2/applications.json', { headers: { ...demo, 'X-Request-Id': '<script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(gateway.logs.some((line) => JSON.parse(line).requestId === 'abc-123')).toBe(true);
  });
});
