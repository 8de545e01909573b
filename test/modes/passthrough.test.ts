import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GADGET } from '../support/fixture-routes.ts';
import { createTestGateway } from '../support/harness.ts';
import { serveOnLoopback } from '../support/http.ts';
import { createModesGateway, startLegacyServer } from '../support/modes.ts';
import { rewriteLink } from '../../src/modes/passthrough.ts';

/** Passthrough (the fixture gadgets, test/support/fixture-routes.ts): forwarded unchanged to a loopback legacy server, answered unchanged and streamed. */
const KEY = 'NRAK-PASSTHROUGH0000000000000000';
const NO_NERDGRAPH = 'http://127.0.0.1:9/graphql';

const JSON_BODY = '{"gadgets":[{"id":1,"kind":"PER_GADGET","name":"Ops \\u00e9","created_at":1,"updated_at":2}]}';
const XML_404 = '<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <title>Not found</title>\n</error>\n';

describe('passthrough to a loopback legacy API', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let gateway: Awaited<ReturnType<typeof createModesGateway>>;

  beforeAll(async () => {
    legacy = await startLegacyServer((req, res) => {
      if (req.method === 'GET' && req.url.startsWith('/v2/fixture_gadgets.json')) {
        if (req.headers['if-none-match'] === '"v1"') {
          res.writeHead(304, { etag: '"v1"', 'x-ratelimit-remaining': '998' });
          res.end();
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          link: `<${legacy.origin}/v2/fixture_gadgets.json?page=2>; rel="next", <https://elsewhere.example/x>; rel="help"`,
          etag: '"v1"',
          'cache-control': 'max-age=0, private, must-revalidate',
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '999',
          'x-ratelimit-reset': '1700000000',
          'set-cookie': 'session=secret',
          'x-runtime': '0.1',
        });
        res.end(JSON_BODY);
        return;
      }
      if (req.url.startsWith('/v2/fixture_gadgets/77.xml')) {
        res.writeHead(404, { 'content-type': 'application/xml; charset=utf-8' });
        res.end(XML_404);
        return;
      }
      if (req.method === 'POST' || req.method === 'PUT' || req.method === 'DELETE') {
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
        res.end(req.body === '' ? '{}' : req.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echo: req.url }));
    });
    gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, publicBaseUrl: 'https://gateway.example' });
  });
  afterAll(async () => {
    await legacy.close();
  });

  it('answers a JSON list byte for byte, with Link (re-pointed at the gateway), ETag and every X-RateLimit-*', async () => {
    const response = await gateway.app.request('/v2/fixture_gadgets.json?filter[name]=Ops&page=1', { headers: { 'x-api-key': KEY } });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString('utf8')).toBe(JSON_BODY);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('link')).toBe('<https://gateway.example/v2/fixture_gadgets.json?page=2>; rel="next", <https://elsewhere.example/x>; rel="help"');
    expect(response.headers.get('etag')).toBe('"v1"');
    expect(response.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(response.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(response.headers.get('x-ratelimit-reset')).toBe('1700000000');
    // Headers a v2 client does not read stay with the legacy API.
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('x-runtime')).toBeNull();
    // The raw query went as sent (brackets not re-encoded).
    expect(legacy.received.at(-1)?.url).toBe('/v2/fixture_gadgets.json?filter[name]=Ops&page=1');
  });

  it('answers an XML 404 byte for byte, status kept', async () => {
    const response = await gateway.app.request('/v2/fixture_gadgets/77.xml', { headers: { 'x-api-key': KEY } });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(await response.text()).toBe(XML_404);
  });

  it('passes If-None-Match and answers the 304 with its ETag', async () => {
    const response = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY, 'if-none-match': '"v1"' } });
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe('"v1"');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('998');
    expect(await response.text()).toBe('');
  });

  it('sends the key only in the header it came in, and the whitelisted headers only', async () => {
    const before = legacy.received.length;
    await gateway.app.request('/v2/fixture_gadgets/5.json?kind=5', {
      headers: { 'x-api-key': KEY, accept: 'application/json', 'user-agent': 'script/1.0', cookie: 'a=b', authorization: `Bearer ${KEY}`, 'x-account-id': '5', 'x-request-id': 'req-1' },
    });
    await gateway.app.request('/v2/fixture_gadgets/5.json?kind=5', { headers: { 'api-key': KEY } });
    const [first, second] = legacy.received.slice(before);
    expect(first?.headers['x-api-key']).toBe(KEY);
    expect(first?.headers['api-key']).toBeUndefined();
    expect(first?.headers.accept).toBe('application/json');
    expect(first?.headers['user-agent']).toBe('script/1.0');
    expect(first?.headers['x-request-id']).toBe('req-1');
    expect(first?.headers['x-account-id']).toBe('5');
    for (const dropped of ['cookie', 'authorization']) expect(first?.headers[dropped], dropped).toBeUndefined();
    expect(second?.headers['api-key']).toBe(KEY);
    expect(second?.headers['x-api-key']).toBeUndefined();
    // Nowhere else: not in the URL, not in another header.
    for (const received of [first, second]) {
      expect(received?.url).not.toContain(KEY);
      const others = Object.entries(received?.headers ?? {}).filter(([name]) => name !== 'x-api-key' && name !== 'api-key');
      expect(JSON.stringify(others)).not.toContain(KEY);
    }
  });

  it('forwards a write once, with its body unchanged', async () => {
    const before = legacy.received.length;
    const body = '{"gadget":{"name":"New","kind":"PER_WIDGET"}}';
    const response = await gateway.app.request('/v2/fixture_gadgets.json', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe(body);
    const sent = legacy.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', url: '/v2/fixture_gadgets.json', body });
    expect(sent[0]?.headers['content-type']).toBe('application/json');
  });

  it('notes every caller request with its route and mode', async () => {
    const before = gateway.sink.usage.length;
    await gateway.app.request('/v2/fixture_gadgets/9.json', { method: 'DELETE', headers: { 'x-api-key': KEY } });
    expect(gateway.sink.usage.slice(before)).toEqual([{ route: GADGET, method: 'DELETE', mode: 'passthrough' }]);
  });
});

describe('passthrough streams', () => {
  it('hands the first bytes to the client before the legacy body has ended', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const legacy = await startLegacyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"gadgets":[');
      // The rest only once the test has seen the first chunk at its client.
      await released;
      res.end('{"id":1}]}');
    });
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const chunks: string[] = [];
      const ended = new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${served.url}/v2/fixture_gadgets.json`, { headers: { 'x-api-key': KEY } }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            chunks.push(chunk);
            // The first chunk arrived while the legacy server is still holding the rest back.
            if (chunks.length === 1) release();
          });
          res.on('end', resolve);
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      await ended;
      expect(chunks[0]).toBe('{"gadgets":[');
      expect(chunks.join('')).toBe('{"gadgets":[{"id":1}]}');
    } finally {
      release();
      await served.close();
      await legacy.close();
    }
  });

  it('aborts the upstream request when the client leaves mid-body', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"gadgets":[');
      // Never ends on its own: only the gateway hanging up ends it.
      res.on('close', () => upstreamClosed());
    });
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      // The client reads the first chunk, then hangs up.
      const req = httpRequest(`${served.url}/v2/fixture_gadgets.json`, { headers: { 'x-api-key': KEY } }, (res) => res.once('data', () => req.destroy()));
      req.on('error', () => undefined);
      req.end();
      // Resolves only when the legacy server sees its response closed by the gateway.
      await closed;
      expect(req.destroyed).toBe(true);
    } finally {
      await served.close();
      await legacy.close();
    }
  });
});

describe('passthrough failures and routing', () => {
  it('answers a v2 503 when the legacy API is unreachable, never a crash', async () => {
    const legacy = await startLegacyServer((_req, res) => {
      res.end();
    });
    const origin = legacy.origin;
    await legacy.close();
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: origin });
    const read = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY } });
    expect(read.status).toBe(503);
    expect(await read.json()).toEqual({ error: { title: 'The legacy REST API is unreachable' } });
    const write = await gateway.app.request('/v2/fixture_gadgets.xml', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' });
    expect(write.status).toBe(503);
    expect(await write.text()).toContain('nothing was changed');
  });

  it('answers a v2 504 when the legacy API sends no headers before the request deadline', async () => {
    // Holds every request: only the gateway's deadline (REQUEST_DEADLINE_MS) ends the wait.
    const legacy = await startLegacyServer(() => undefined);
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, deadlineMs: 200 });
      const response = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY } });
      expect(response.status).toBe(504);
      expect(Object.keys(((await response.json()) as { error: object }).error)).toEqual(['title']);
      const write = await gateway.app.request('/v2/fixture_gadgets/3.json', { method: 'DELETE', headers: { 'x-api-key': KEY } });
      expect(write.status).toBe(504);
      expect(await write.text()).toContain('the change may have been made');
    } finally {
      await legacy.close();
    }
  });

  it('forwards unknown /v2 paths under a passthrough rule, labelled unmapped; translated routes stay translated', async () => {
    const legacy = await startLegacyServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echo: req.url }));
    });
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: 'GET /v2/no_such_resource=passthrough' });
      const response = await gateway.app.request('/v2/no_such_resource.json?only_open=true', { headers: { 'x-api-key': KEY } });
      expect(await response.json()).toEqual({ echo: '/v2/no_such_resource.json?only_open=true' });
      expect(gateway.sink.usage.at(-1)).toEqual({ route: 'unmapped', method: 'GET', mode: 'passthrough' });
      // Not under the rule: the router's v2 404, nothing forwarded.
      const before = legacy.received.length;
      const unknown = await gateway.app.request('/v2/another_unknown_resource.json', { headers: { 'x-api-key': KEY } });
      expect(unknown.status).toBe(404);
      expect(legacy.received.length).toBe(before);
    } finally {
      await legacy.close();
    }
  });

  it('without modes configured, a passthrough-only route is a clear v2 error', async () => {
    const gateway = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: NO_NERDGRAPH });
    const response = await gateway.app.request('/v2/fixture_gadgets.json?kind=1', { headers: { 'x-api-key': KEY } });
    expect(response.status).toBe(404);
    expect((await response.json()) as unknown).toEqual({ error: { title: expect.stringContaining('passthrough') as unknown } });
  });

  it('rewrites only Link URLs under the legacy base', () => {
    expect(rewriteLink('<http://legacy:1/v2/a.json?page=2>; rel="next", <http://legacy:10/v2/a.json>; rel="x"', 'http://legacy:1', 'https://gw')).toBe(
      '<https://gw/v2/a.json?page=2>; rel="next", <http://legacy:10/v2/a.json>; rel="x"',
    );
  });
});
