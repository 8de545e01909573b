import { request as httpRequest, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback } from '../support/http.ts';
import { createModesGateway, startLegacyServer, type ReceivedRequest } from '../support/modes.ts';

/**
 * The legacy side's edges: what is sent to it besides the key (the gateway's own
 * request id, no header that carries the key in any encoding), a legacy API that stalls
 * mid-body (the deadline cuts the caller's answer and aborts the legacy request), and a legacy
 * timeout named as the legacy API's, never as NerdGraph's.
 */
const KEY = 'NRAK-LEGACYEDGES7Q2W9E4R6T8Y1U3I';
// Never called: the translation side fails fast where it runs at all.
const NO_NERDGRAPH = 'http://127.0.0.1:9/graphql';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const READ_TIMEOUT = 'The legacy REST API did not answer in time';
const WRITE_TIMEOUT = 'The legacy REST API did not answer in time; the change may have been made: read before retrying';

interface RawAnswer {
  status: number;
  body: string;
  /** Node's verdict: the whole message arrived (its Content-Length or final chunk). */
  complete: boolean;
}

/** One request over real HTTP; resolves when the response closes, whole or cut. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers, connection: 'close' };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = httpRequest(url, { method: options.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A cut answer ends in 'aborted'/'error' and then 'close'; a whole one in 'end' then 'close'.
      res.on('error', () => undefined);
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), complete: res.complete }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * A legacy API that stalls: `headers` sends nothing at all; `body` sends its headers and the
 * first bytes of the body, then nothing. Resolves `abandoned` with each request whose answer
 * the gateway hung up on before it was finished.
 */
async function startStallingLegacy(stall: 'headers' | 'body', framing: 'content-length' | 'chunked' = 'content-length') {
  const abandoned: string[] = [];
  let wake: () => void = () => undefined;
  const legacy = await startLegacyServer((req: ReceivedRequest, res: ServerResponse) => {
    res.on('close', () => {
      if (res.writableFinished) return;
      abandoned.push(`${req.method} ${req.url}`);
      wake();
    });
    if (stall === 'headers') return;
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', ...(framing === 'content-length' ? { 'content-length': '1000' } : {}) });
    res.write('{"widget":{"id":1,');
  });
  return {
    ...legacy,
    abandoned,
    /** Resolves once `count` requests have been abandoned by the gateway. */
    waitForAbandoned(count: number): Promise<string[]> {
      return new Promise((resolve) => {
        const check = (): void => {
          if (abandoned.length >= count) resolve(abandoned.slice(0, count));
        };
        wake = check;
        check();
      });
    },
  };
}

describe('what the legacy API is sent besides the key', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  beforeAll(async () => {
    legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"application":{"id":1}}');
    });
  });
  afterAll(() => legacy.close());

  /** The key, disguised as clients disguise it, in each forwarded header it could be pasted into. */
  const disguised = {
    'x-request-id': Buffer.from(KEY).toString('base64url'),
    'user-agent': `curl/8.5.0 (${Buffer.from(KEY.toLowerCase()).toString('hex').toUpperCase()})`,
    'if-none-match': `W/"${Buffer.from(KEY).toString('base64')}"`,
    accept: `application/json; key=${[...Buffer.from(KEY)].map((byte) => `%${byte.toString(16)}`).join('')}`,
    'x-account-id': KEY.slice(5, 17),
  };

  it("passthrough: sends the gateway's request id and drops a header that carries the key, plain or encoded", async () => {
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin });
    const before = legacy.received.length;
    const response = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY, ...disguised } });
    expect(response.status).toBe(200);
    const gatewayId = response.headers.get('x-request-id') ?? '';
    expect(gatewayId).toMatch(UUID);
    const sent = legacy.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers['x-request-id']).toBe(gatewayId);
    for (const name of ['user-agent', 'if-none-match', 'accept', 'x-account-id']) expect(sent[0]?.headers[name], name).toBeUndefined();
    expect(sent[0]?.headers['x-api-key']).toBe(KEY);
    // Nor was any of it logged.
    expect(gateway.logs.filter((line) => Object.values(disguised).some((value) => line.includes(value)))).toEqual([]);

    // Honest values go as they came, the caller's honest id included.
    const honest = { 'x-request-id': '4bf92f3577b34da6a3ce929d0e0e4736', 'user-agent': 'newrelic-client-go/2.0 (linux)', 'if-none-match': 'W/"9a0364b9e99bb480dd25e1f0284c8555"', accept: 'application/json', 'x-account-id': '1000001' };
    await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY, ...honest } });
    for (const [name, value] of Object.entries(honest)) expect(legacy.received.at(-1)?.headers[name], name).toBe(value);
  });

  it("compare and candidate: every legacy call, the shadow calls included, carries the gateway's request id, never the raw header", async () => {
    for (const mode of ['compare', 'candidate'] as const) {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: `*=${mode}` });
      const before = legacy.received.length;
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'x-api-key': KEY, ...disguised } });
      await response.text();
      await gateway.sink.waitForRecords(1);
      const gatewayId = response.headers.get('x-request-id');
      expect(gatewayId).toMatch(UUID);
      const sent = legacy.received.slice(before);
      // compare: the caller's call and the noise call; candidate: its two shadow calls.
      expect(sent, mode).toHaveLength(2);
      for (const received of sent) {
        expect(received.headers['x-request-id'], mode).toBe(gatewayId);
        const others = Object.entries(received.headers).filter(([name]) => name !== 'x-api-key');
        const text = JSON.stringify(others);
        expect(Object.values(disguised).filter((value) => text.includes(value)), mode).toEqual([]);
      }
    }
  });
});

describe('a legacy API that stalls mid-body', () => {
  it('passthrough GET over HTTP: past the deadline the client sees its connection cut, and the legacy request is aborted', async () => {
    const legacy = await startStallingLegacy('body');
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, deadlineMs: 300 });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const answer = await send(`${served.url}/v2/fixture_gadgets.json`, { headers: { 'x-api-key': KEY } });
      expect(answer.status).toBe(200);
      expect(answer.complete).toBe(false);
      expect(answer.body).toBe('{"widget":{"id":1,');
      expect(await legacy.waitForAbandoned(1)).toEqual(['GET /v2/fixture_gadgets.json']);
    } finally {
      await served.close();
      await legacy.close();
    }
  });

  it('passthrough GET in process (app.request): the body stream errors with the legacy timeout', async () => {
    const legacy = await startStallingLegacy('body', 'chunked');
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, deadlineMs: 300 });
      const response = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': KEY } });
      expect(response.status).toBe(200);
      await expect(response.text()).rejects.toThrow(READ_TIMEOUT);
      expect(await legacy.waitForAbandoned(1)).toEqual(['GET /v2/fixture_gadgets.json']);
    } finally {
      await legacy.close();
    }
  });

  for (const [what, method, path, framing] of [
    ['a compare GET', 'GET', '/v2/fixture_widgets/1.json', 'chunked'],
    ['a compare POST (a write)', 'POST', '/v2/fixture_widgets/1/notes.json', 'content-length'],
  ] as const) {
    it(`${what} over HTTP: the client's connection is cut, the legacy request aborted, and the cut answer recorded as an error, not compared`, async () => {
      const legacy = await startStallingLegacy('body', framing);
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: '*=compare', deadlineMs: 300 });
      const served = await serveOnLoopback(gateway.app.fetch);
      try {
        const body = method === 'POST' ? JSON.stringify({ note: { text: 'cut-1' } }) : undefined;
        const answer = await send(`${served.url}${path}`, { method, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body }) });
        expect(answer.status).toBe(method === 'POST' ? 201 : 200);
        expect(answer.complete).toBe(false);
        expect(await legacy.waitForAbandoned(1)).toEqual([`${method} ${path}`]);
        const [record] = await gateway.sink.waitForRecords(1);
        expect(record).toMatchObject({ outcome: 'error', mode: 'compare', status: { legacy: method === 'POST' ? 201 : 200, translated: null } });
        expect(record?.error).toBe(`legacy answer cut mid-body: V2Error: ${method === 'POST' ? WRITE_TIMEOUT : READ_TIMEOUT}`);
        // Nothing ran after it: no second legacy call, no translation or dry run (no NerdGraph call).
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
        expect(legacy.received).toHaveLength(1);
        expect(gateway.sink.records).toHaveLength(1);
        expect(await gateway.upstreamCount()).toBe(0);
      } finally {
        await served.close();
        await legacy.close();
      }
    });
  }
});

describe('a legacy timeout is named as the legacy API', () => {
  let legacy: Awaited<ReturnType<typeof startStallingLegacy>>;
  beforeAll(async () => {
    legacy = await startStallingLegacy('headers');
  });
  afterAll(() => legacy.close());

  for (const mode of ['passthrough', 'compare'] as const) {
    it(`${mode}: a read and a write the legacy API does not answer in time get a v2 504 that names the legacy API`, async () => {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: mode === 'compare' ? '*=compare' : '/v2/fixture_widgets/*=passthrough', deadlineMs: 300 });
      const read = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'x-api-key': KEY } });
      expect(read.status).toBe(504);
      expect(await read.json()).toEqual({ error: { title: READ_TIMEOUT } });
      const write = await gateway.app.request('/v2/fixture_widgets/1/notes.json', { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{"note":{"text":"late"}}' });
      expect(write.status).toBe(504);
      expect(await write.json()).toEqual({ error: { title: WRITE_TIMEOUT } });
      expect(gateway.logs.filter((line) => line.includes('"kind":"legacy_timeout"'))).toHaveLength(1);
      expect(gateway.logs.filter((line) => line.includes('"kind":"legacy_write_unconfirmed"'))).toHaveLength(1);
      expect(gateway.logs.join('\n')).not.toContain('NerdGraph');
      if (mode === 'compare') {
        const records = await gateway.sink.waitForRecords(2);
        expect(records.map((record) => record.error)).toEqual([`legacy call failed: V2Error: ${READ_TIMEOUT}`, `legacy call failed: V2Error: ${WRITE_TIMEOUT}`]);
      }
    });
  }

  it('compare: a write whose body arrives after the deadline is never sent, and says so', async () => {
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: '*=compare', deadlineMs: 200 });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const before = legacy.received.length;
      const body = '{"note":{"text":"slow-client"}}';
      const answer = await new Promise<RawAnswer>((resolve, reject) => {
        const req = httpRequest(`${served.url}/v2/fixture_widgets/1/notes.json`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'content-length': String(body.length), connection: 'close' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('close', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), complete: res.complete }));
        });
        req.on('error', reject);
        // Half the body, then the rest well after the request's deadline has passed.
        req.write(body.slice(0, 10));
        setTimeout(() => req.end(body.slice(10)), 600);
      });
      expect(answer.status).toBe(504);
      expect(JSON.parse(answer.body)).toEqual({ error: { title: 'The request deadline passed before the legacy REST API was called; nothing was changed' } });
      expect(legacy.received.length).toBe(before);
    } finally {
      await served.close();
    }
  });

  it("candidate: a shadow legacy read that does not answer in time is recorded as the legacy API's timeout", async () => {
    // The translation answers (a 503: no NerdGraph here); its legacy shadow call times out.
    const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: legacy.origin, routeModes: '*=candidate', deadlineMs: 300 });
    const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'x-api-key': KEY } });
    await response.text();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ outcome: 'error', mode: 'candidate', status: { legacy: null } });
    expect(record?.error).toBe(`legacy call failed: V2Error: ${READ_TIMEOUT}`);
  });

  it("candidate: a shadow legacy read that stalls mid-body is recorded as the legacy API's timeout", async () => {
    const stalling = await startStallingLegacy('body');
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: NO_NERDGRAPH, legacyUrl: stalling.origin, routeModes: '*=candidate', deadlineMs: 300 });
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'x-api-key': KEY } });
      await response.text();
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record?.error).toBe(`legacy call failed: V2Error: ${READ_TIMEOUT}`);
      expect(await stalling.waitForAbandoned(1)).toEqual(['GET /v2/fixture_widgets/1.json']);
      // One legacy call: a second is made only for a mismatch, and there was no answer to judge
      // (the record comes after the deadline, by which time a second call would have arrived).
      expect(stalling.received).toHaveLength(1);
    } finally {
      await stalling.close();
    }
  });
});
