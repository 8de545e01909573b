import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback } from '../support/http.ts';
import { createModesGateway, memorySink, startLegacyServer } from '../support/modes.ts';

/**
 * Passthrough over real HTTP, where the legacy answer is written straight to Node's response
 * (src/modes/direct.ts): byte-for-byte answers, the real status in the access log and metrics,
 * an upstream failure mid-body seen by the client as a cut answer, and compare's shadow work
 * started only after the caller's answer has finished, and only when the loop has room.
 */
const KEY = 'NRAK-DIRECT00000000000000000000';
const NO_NERDGRAPH = 'http://127.0.0.1:9/graphql';
const BIG = JSON.stringify({ gadgets: Array.from({ length: 2000 }, (_, id) => ({ id, name: `gadget ${id} ${'é'.repeat(20)}`, kind: 'PER_GADGET' })) });
const XML_404 = '<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <title>Not found</title>\n</error>\n';

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Node's verdict: the whole message arrived (its Content-Length or final chunk). */
  complete: boolean;
}

/** One request over a fresh connection; resolves when the response closes, whole or cut. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: { ...options.headers, connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A cut answer ends in 'aborted'/'error' and then 'close'; a whole one in 'end' then 'close'.
      res.on('error', () => undefined);
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('passthrough over HTTP, written directly', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  let gateway: Awaited<ReturnType<typeof createModesGateway>>;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;

  beforeAll(async () => {
    legacy = await startLegacyServer((req, res) => {
      if ((req.method === 'GET' || req.method === 'HEAD') && req.url.startsWith('/v2/fixture_gadgets.json')) {
        if (req.headers['if-none-match'] === '"big"') {
          res.writeHead(304, { etag: '"big"', 'x-ratelimit-remaining': '41' });
          res.end();
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(BIG),
          link: `<${legacy.origin}/v2/fixture_gadgets.json?page=2>; rel="next"`,
          etag: '"big"',
          'x-ratelimit-remaining': '42',
          'set-cookie': 'session=secret',
        });
        // In several writes, as a large answer arrives.
        const bytes = Buffer.from(BIG);
        for (let at = 0; at < bytes.length; at += 16_384) res.write(bytes.subarray(at, at + 16_384));
        res.end();
        return;
      }
      if (req.url.startsWith('/v2/fixture_gadgets/77.xml')) {
        res.writeHead(404, { 'content-type': 'application/xml; charset=utf-8' });
        res.end(XML_404);
        return;
      }
      if (req.method === 'POST') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(req.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, publicBaseUrl: 'https://gateway.example' });
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(async () => {
    await served.close();
    await legacy.close();
  });

  it('answers a large body byte for byte, with its length, Link (re-pointed), ETag, rate-limit headers and a request id', async () => {
    const answer = await send(`${served.url}/v2/fixture_gadgets.json?page=1`, { headers: { 'x-api-key': KEY, 'x-request-id': 'direct-1' } });
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(true);
    expect(answer.body.equals(Buffer.from(BIG))).toBe(true);
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(BIG)));
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.link).toBe('<https://gateway.example/v2/fixture_gadgets.json?page=2>; rel="next"');
    expect(answer.headers.etag).toBe('"big"');
    expect(answer.headers['x-ratelimit-remaining']).toBe('42');
    expect(answer.headers['x-request-id']).toBe('direct-1');
    expect(answer.headers['set-cookie']).toBeUndefined();
    // Nothing of the adapter's own leaks out.
    expect(answer.headers['x-hono-already-sent']).toBeUndefined();
  });

  it('answers an XML 404 with its status, and the access log and metrics see that status', async () => {
    const answer = await send(`${served.url}/v2/fixture_gadgets/77.xml`, { headers: { 'x-api-key': KEY, 'x-request-id': 'direct-404' } });
    expect(answer.status).toBe(404);
    expect(answer.body.toString('utf8')).toBe(XML_404);
    const line = gateway.logs.map((text) => JSON.parse(text) as { requestId?: string; status?: number; route?: string }).find((entry) => entry.requestId === 'direct-404');
    expect(line).toMatchObject({ status: 404, route: '/v2/fixture_gadgets/{gadget_id}.{format}' });
    const counted = (await gateway.metrics.httpRequests.get()).values.find((v) => v.labels.route === '/v2/fixture_gadgets/{gadget_id}.{format}' && v.labels.status === '404');
    expect(counted?.value).toBe(1);
  });

  it('answers a 304 with its ETag and no body, and a HEAD with headers only', async () => {
    const notModified = await send(`${served.url}/v2/fixture_gadgets.json`, { headers: { 'x-api-key': KEY, 'if-none-match': '"big"' } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe('"big"');
    expect(notModified.headers['x-ratelimit-remaining']).toBe('41');
    expect(notModified.body.length).toBe(0);
    const head = await send(`${served.url}/v2/fixture_gadgets.json`, { method: 'HEAD', headers: { 'x-api-key': KEY } });
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe('"big"');
    expect(head.body.length).toBe(0);
  });

  it('forwards a write once, body unchanged, and answers with the legacy status', async () => {
    const before = legacy.received.length;
    const body = '{"gadget":{"name":"Direct"}}';
    const answer = await send(`${served.url}/v2/fixture_gadgets.json`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body });
    expect(answer.status).toBe(201);
    expect(answer.body.toString('utf8')).toBe(body);
    expect(legacy.received.slice(before)).toMatchObject([{ method: 'POST', url: '/v2/fixture_gadgets.json', body }]);
  });
});

describe('an upstream failure mid-body over HTTP', () => {
  for (const framing of ['content-length', 'chunked'] as const) {
    it(`cuts the client's connection, so the ${framing} answer is visibly incomplete`, async () => {
      const legacy = await startLegacyServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', ...(framing === 'content-length' ? { 'content-length': '1000' } : {}) });
        res.write('{"gadgets":[{"id":1}');
        // Then the legacy API dies mid-answer (once the first bytes are on the wire).
        setImmediate(() => res.socket?.destroy());
      });
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin });
      const served = await serveOnLoopback(gateway.app.fetch);
      try {
        const answer = await send(`${served.url}/v2/fixture_gadgets.json`, { headers: { 'x-api-key': KEY } });
        expect(answer.status).toBe(200);
        expect(answer.complete).toBe(false);
        expect(answer.body.toString('utf8')).toBe('{"gadgets":[{"id":1}'.slice(0, answer.body.length));
      } finally {
        await served.close();
        await legacy.close();
      }
    });
  }
});

describe('compare over HTTP: shadow work after the answer, only when the loop has room', () => {
  const APP = '/v2/fixture_widgets/5.json';
  const ROUTE = '/v2/fixture_widgets/{id}.{format}';

  it('starts the shadow work (a second legacy call) only once the caller has the whole answer', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstChunkSeen!: () => void;
    const firstChunk = new Promise<void>((resolve) => (firstChunkSeen = resolve));
    const legacy = await startLegacyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"application":');
      await released;
      res.end('{"id":5}}');
    });
    // The translation has no NerdGraph (its answer is a v2 error): whatever the verdict, a record says the work ran.
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: 'GET /v2/fixture_widgets/*=compare', maxLoopUtilisation: 0.5, loopUtilisation: () => 0 });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const answered = new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${served.url}${APP}`, { headers: { 'x-api-key': KEY } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
            firstChunkSeen();
          });
          res.on('end', () => resolve(text));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      await firstChunk;
      // Mid-answer: the one legacy call is the caller's; no shadow work yet.
      expect(legacy.received).toHaveLength(1);
      release();
      expect(await answered).toBe('{"application":{"id":5}}');
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record).toMatchObject({ mode: 'compare', status: { legacy: 200 } });
      expect(legacy.received).toHaveLength(2);
    } finally {
      release();
      await served.close();
      await legacy.close();
    }
  });

  it('sheds shadow work while the loop is busier than COMPARE_MAX_LOOP_UTILISATION: counted dropped, the caller served as by passthrough', async () => {
    const legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"application":{"id":5}}');
    });
    let utilisation = 0.9;
    const sink = memorySink();
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: 'GET /v2/fixture_widgets/*=compare', sink, maxLoopUtilisation: 0.5, loopUtilisation: () => utilisation });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await send(`${served.url}${APP}`, { headers: { 'x-api-key': KEY } });
        expect(answer.body.toString('utf8')).toBe('{"application":{"id":5}}');
      }
      expect(sink.drops).toEqual(Array.from({ length: 3 }, () => ({ route: ROUTE, method: 'GET' })));
      expect(sink.records).toEqual([]);
      // Only the callers' own legacy calls: no second call, no translation.
      expect(legacy.received).toHaveLength(3);
      // Room again: the next request is compared.
      utilisation = 0.2;
      await send(`${served.url}${APP}`, { headers: { 'x-api-key': KEY } });
      expect(await sink.waitForRecords(1)).toHaveLength(1);
      expect(sink.drops).toHaveLength(3);
    } finally {
      await served.close();
      await legacy.close();
    }
  });
});
