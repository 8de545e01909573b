import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { DiffThreadClosed, DiffThreadError } from '../../src/compare/thread-comparer.ts';
import type { Comparer } from '../../src/modes/ports.ts';
import { sampledIn } from '../../src/modes/shadow.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, startSandbox } from '../support/harness.ts';
import { FIXTURE_OPERATIONS, startFixtureLegacy, WIDGET, WIDGETS } from '../support/fixture-routes.ts';
import { httpSend, listenOnLoopback, serveOnLoopback } from '../support/http.ts';
import { createModesGateway, memorySink, startLegacyServer } from '../support/modes.ts';

/**
 * compare and candidate modes on the fixture routes, over the sandbox's NerdGraph face and the fixture
 * legacy face (test/support/fixture-routes.ts), through
 * a counting proxy that sees every request either face receives: reads and writes routed as
 * specified, no write ever executed twice, shadow work shed under overload, no key in any record.
 */
// Not New Relic-shaped on purpose: only the caller's own key, split out by value, can mask it.
const KEY = 'plainsecretkey0123456789';

interface Seen {
  method: string;
  url: string;
  /** For /graphql: the mutation's first field, when the document is a mutation. */
  mutation?: string;
}

async function startCountingProxy(target: string) {
  const seen: Seen[] = [];
  // A gate the tests can close: legacy requests then wait until it opens.
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = req.url ?? '';
        const entry: Seen = { method: req.method ?? '', url };
        if (url.startsWith('/graphql')) {
          const query = (JSON.parse(body.toString('utf8')) as { query: string }).query;
          const mutation = /^\s*mutation\b[^{]*\{\s*(\w+)/m.exec(query)?.[1];
          if (mutation) entry.mutation = mutation;
        } else {
          await gate;
        }
        seen.push(entry);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
        const upstream = await fetch(`${target}${url}`, { method: req.method, headers, ...(body.length > 0 ? { body } : {}) });
        const out: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (name !== 'content-encoding' && name !== 'content-length' && name !== 'transfer-encoding') out[name] = value;
        });
        res.writeHead(upstream.status, out);
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })().catch(() => res.destroy());
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    origin,
    close,
    seen,
    legacy: (method?: string) => seen.filter((s) => !s.url.startsWith('/graphql') && (method === undefined || s.method === method)),
    mutations: () => seen.filter((s) => s.mutation !== undefined),
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
  };
}

describe('compare and candidate modes on the sandbox', () => {
  let sandbox: { url: string; close: () => Promise<void> };
  let legacy: Awaited<ReturnType<typeof startFixtureLegacy>>;
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
  let appId: number;

  const gatewayWith = (routeModes: string, extra: Partial<Parameters<typeof createModesGateway>[0]> = {}) =>
    createModesGateway({ nerdgraphUrl: `${proxy.origin}/graphql`, legacyUrl: proxy.origin, routeModes, ...extra });
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

  beforeAll(async () => {
    const created = createSandbox({ seed: 7, apmApps: 30, now: () => FIXED_NOW, apiKeys: new Map([[KEY, [PRIMARY_ACCOUNT]]]) });
    sandbox = await created.listen(0, '127.0.0.1');
    legacy = await startFixtureLegacy(created, sandbox.url);
    proxy = await startCountingProxy(legacy.origin);
    const app = [...created.data.apps.values()].find((a) => a.accountId === PRIMARY_ACCOUNT);
    appId = (app as { id: number }).id;
  });
  afterAll(async () => {
    await proxy.close();
    await legacy.close();
    await sandbox.close();
  });

  it('compare, read: the legacy API answers; the translation runs afterwards, and no second legacy call when the answers agree', async () => {
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare');
    const direct = await fetch(`${legacy.origin}/v2/fixture_widgets/${appId}.json`, { headers: { 'x-api-key': KEY } });
    const before = proxy.legacy('GET').length;
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(await direct.text());
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ route: WIDGET, method: 'GET', mode: 'compare', request: `/v2/fixture_widgets/${appId}.json`, status: { legacy: 200, translated: 200 } });
    expect(record?.outcome).toBe('match');
    // The caller's call alone: noise could only turn a mismatch into noise.
    expect(proxy.legacy('GET').length - before).toBe(1);
    // One caller request counted and noted; the internal translation is neither.
    expect(await gateway.callerRequests()).toBe(1);
    expect(gateway.sink.usage).toEqual([{ route: WIDGET, method: 'GET', mode: 'compare' }]);
    expect(gateway.sink.sides.map((s) => s.side).sort()).toEqual(['legacy', 'translated']);
  });

  it('compare and candidate, read: a mismatch is judged again with a second legacy answer, which can turn it into noise', async () => {
    for (const mode of ['compare', 'candidate'] as const) {
      const inputs: Array<{ again: boolean }> = [];
      // A comparer that finds a mismatch unless a second legacy answer is there to explain it.
      const comparer: Comparer = (input) => {
        inputs.push({ again: input.legacyAgain !== undefined });
        return input.legacyAgain === undefined ? { outcome: 'mismatch', differences: [] } : { outcome: 'noise', differences: [] };
      };
      const gateway = await gatewayWith(`GET /v2/fixture_widgets/*=${mode}`, { comparer });
      const before = proxy.legacy('GET').length;
      const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
      await response.text();
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record?.outcome).toBe('noise');
      expect(inputs).toEqual([{ again: false }, { again: true }]);
      // compare: the caller's call and the noise call; candidate: the compared call and the noise call.
      expect(proxy.legacy('GET').length - before).toBe(2);
    }
  });

  it('compare, read: a second judgement that fails leaves the first judgement standing', async () => {
    const judged: boolean[] = [];
    const comparer: Comparer = (input) => {
      judged.push(input.legacyAgain !== undefined);
      return input.legacyAgain === undefined ? { outcome: 'mismatch', differences: [] } : Promise.reject(new DiffThreadError('diff thread exited (code 1)'));
    };
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare', { comparer });
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
    await response.text();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record?.outcome).toBe('mismatch');
    expect(judged).toEqual([false, true]);
  });

  it('candidate, read: a legacy API that refuses the caller is not asked a second time', async () => {
    const refusing = await startLegacyServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { title: 'Invalid API key' } }));
    });
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: `${proxy.origin}/graphql`, legacyUrl: refusing.origin, routeModes: 'GET /v2/fixture_widgets/*=candidate' });
      const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
      expect(response.status).toBe(200);
      await response.text();
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record).toMatchObject({ mode: 'candidate', outcome: 'mismatch', status: { legacy: 401, translated: 200 } });
      expect(refusing.received).toHaveLength(1);
    } finally {
      await refusing.close();
    }
  });

  it('compare, read: a second legacy call that fails leaves the first judgement standing', async () => {
    // The caller's legacy call is answered; every later one is cut before its headers.
    const cutting = await startLegacyServer(async (req, res, raw) => {
      if (cutting.received.length > 1) {
        raw.socket.destroy();
        return;
      }
      const upstream = await fetch(`${legacy.origin}${req.url}`, { headers: { 'x-api-key': KEY } });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    try {
      const judged: boolean[] = [];
      const comparer: Comparer = (input) => {
        judged.push(input.legacyAgain !== undefined);
        return { outcome: 'mismatch', differences: [] };
      };
      const gateway = await createModesGateway({ nerdgraphUrl: `${proxy.origin}/graphql`, legacyUrl: cutting.origin, routeModes: 'GET /v2/fixture_widgets/*=compare', comparer });
      const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
      expect(response.status).toBe(200);
      await response.text();
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record?.outcome).toBe('mismatch');
      expect(judged).toEqual([false]);
      expect(cutting.received).toHaveLength(2);
    } finally {
      await cutting.close();
    }
  });


  it('candidate, read: the translation answers; one legacy call runs afterwards when the answers agree', async () => {
    const translateOnly = await gatewayWith('');
    const expected = await (await translateOnly.app.request(`/v2/fixture_widgets/${appId}.json`, { headers })).text();
    const gateway = await gatewayWith('*=candidate');
    const before = proxy.legacy('GET').length;
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
    expect(await response.text()).toBe(expected);
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ mode: 'candidate', outcome: 'match', status: { legacy: 200, translated: 200 } });
    expect(proxy.legacy('GET').length - before).toBe(1);
  });

  it('compare, write: executed once, by the legacy API; the translation records its mutation without sending it', async () => {
    const gateway = await gatewayWith('POST /v2/fixture_widgets/*=compare');
    const writesBefore = proxy.legacy('POST').length;
    const mutationsBefore = proxy.mutations().length;
    const body = JSON.stringify({ note: { text: 'compare-1' } });
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}/notes.json`, { method: 'POST', headers, body });
    expect(response.status).toBe(201);
    // Shadow work starts once the caller has the whole answer.
    await response.text();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ outcome: 'dry_run', mode: 'compare', status: { legacy: 201, translated: null }, dryRun: { side: 'translated' } });
    expect(record?.dryRun?.calls).toHaveLength(1);
    expect(record?.dryRun?.calls[0]?.operation).toBe(FIXTURE_OPERATIONS.widgetNote);
    expect(JSON.stringify(record?.dryRun?.calls[0]?.variables)).toContain('compare-1');
    expect(proxy.legacy('POST').length - writesBefore).toBe(1);
    expect(proxy.mutations().length - mutationsBefore).toBe(0);
    expect(await gateway.upstreamCount(FIXTURE_OPERATIONS.widgetNote)).toBe(0);
  });

  it('candidate, write: executed once, by the translation; the legacy side records the request it would have sent', async () => {
    const gateway = await gatewayWith('POST /v2/fixture_widgets/*=candidate');
    const writesBefore = proxy.legacy('POST').length;
    const mutationsBefore = proxy.mutations().length;
    const body = JSON.stringify({ note: { text: 'candidate-1' } });
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}/notes.json`, { method: 'POST', headers, body });
    expect(response.status).toBe(201);
    // Shadow work starts once the caller has the whole answer.
    await response.text();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({
      outcome: 'dry_run',
      mode: 'candidate',
      status: { legacy: null, translated: 201 },
      dryRun: { side: 'legacy', calls: [{ operation: 'POST /v2/fixture_widgets/{id}/notes.{format}', variables: { note: { text: 'candidate-1' } } }] },
    });
    expect(proxy.legacy('POST').length - writesBefore).toBe(0);
    expect(proxy.mutations().length - mutationsBefore).toBe(1);
  });

  it('compare, a POST read (a form of list parameters): the translation runs once, one legacy call when the answers agree, never a loop', async () => {
    const gateway = await gatewayWith('*=compare');
    const before = proxy.legacy('POST').length;
    // A body without Content-Length: Hono's body limit then replaces the request object.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('filter[name]=a&page=1'));
        controller.close();
      },
    });
    const response = await gateway.app.request(`/v2/fixture_widgets.json`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    await response.text();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ mode: 'compare', outcome: 'match', status: { legacy: 200, translated: 200 } });
    for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(proxy.legacy('POST').length - before).toBe(1);
    expect(gateway.sink.records).toHaveLength(1);
    expect(await gateway.upstreamCount()).toBeGreaterThan(0);
  });

  it('compare, HEAD: passed through once, nothing compared', async () => {
    const gateway = await gatewayWith('*=compare');
    const before = proxy.legacy('HEAD').length;
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { method: 'HEAD', headers });
    expect(response.status).toBe(200);
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(proxy.legacy('HEAD').length - before).toBe(1);
    expect(gateway.sink.records).toEqual([]);
  });

  it('under overload (queue 1, concurrency 1, a stalled legacy API) drops and counts shadow work; every caller is answered', async () => {
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=candidate', { concurrency: 1, queueMax: 1 });
    proxy.hold();
    try {
      for (let i = 0; i < 5; i++) {
        const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
        expect(response.status).toBe(200);
        await response.text();
      }
      // Shadow work is submitted a turn after each answer: wait for the last submit (bounded turns).
      for (let turn = 0; turn < 100 && gateway.sink.drops.length < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      // One running (stalled at the legacy API), one waiting, three dropped.
      expect(gateway.sink.drops).toEqual(Array.from({ length: 3 }, () => ({ route: WIDGET, method: 'GET' })));
    } finally {
      proxy.release();
    }
    expect(await gateway.sink.waitForRecords(2)).toHaveLength(2);
  });

  it('a judgement still pending (a comparer on its thread) holds its shadow slot: with concurrency 1 and no queue the next comparison is dropped until it is judged', async () => {
    let judge: () => void = () => undefined;
    const comparer: Comparer = () => new Promise((resolve) => (judge = () => resolve({ outcome: 'match', differences: [] })));
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare', { concurrency: 1, queueMax: 0, comparer });
    const ask = async (): Promise<void> => {
      const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
      expect(response.status).toBe(200);
      await response.text();
    };
    await ask();
    // The first request's shadow work reaches the comparer and waits there.
    for (let turn = 0; turn < 500 && gateway.sink.sides.filter((s) => s.side === 'translated').length < 1; turn++) await new Promise((resolve) => setTimeout(resolve, 2));
    await ask();
    for (let turn = 0; turn < 100 && gateway.sink.drops.length < 1; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(gateway.sink.drops).toEqual([{ route: WIDGET, method: 'GET' }]);
    expect(gateway.sink.records).toEqual([]);
    judge();
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ outcome: 'match' });
  });

  it('a comparer that rejects is an error record; one closed under the comparison records nothing', async () => {
    const failing = await gatewayWith('GET /v2/fixture_widgets/*=compare', { comparer: () => Promise.reject(new DiffThreadError('diff thread exited (code 1)')) });
    await (await failing.app.request(`/v2/fixture_widgets/${appId}.json`, { headers })).text();
    const [record] = await failing.sink.waitForRecords(1);
    expect(record).toMatchObject({ outcome: 'error', error: 'comparer failed: DiffThreadError: diff thread exited (code 1)' });

    let rejected = false;
    const closing = await gatewayWith('GET /v2/fixture_widgets/*=compare', {
      comparer: () => {
        rejected = true;
        return Promise.reject(new DiffThreadClosed('diff thread closed'));
      },
    });
    await (await closing.app.request(`/v2/fixture_widgets/${appId}.json`, { headers })).text();
    for (let turn = 0; turn < 500 && !rejected; turn++) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(rejected).toBe(true);
    // A few more turns for a record that must not come.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(closing.sink.records).toEqual([]);
  });

  it('a legacy answer over COMPARE_MAX_BODY_BYTES reaches the caller whole and is counted as an error', async () => {
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare', { maxBodyBytes: 16 });
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
    expect((await response.text()).length).toBeGreaterThan(16);
    const [record] = await gateway.sink.waitForRecords(1);
    expect(record).toMatchObject({ outcome: 'error', error: 'too large to compare (over 16 bytes)' });
  });

  it('over real HTTP: the caller gets the whole legacy answer, then the comparison is recorded', async () => {
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare');
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const direct = await (await fetch(`${legacy.origin}/v2/fixture_widgets/${appId}.xml`, { headers: { 'x-api-key': KEY } })).text();
      const response = await httpSend(`${served.url}/v2/fixture_widgets/${appId}.xml`, { headers: { 'x-api-key': KEY } });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(direct);
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record).toMatchObject({ mode: 'compare', status: { legacy: 200, translated: 200 } });
    } finally {
      await served.close();
    }
  });

  it('sampling 0: served by the mode, no shadow work', async () => {
    const gateway = await gatewayWith('GET /v2/fixture_widgets/*=compare', { sampleRate: 0 });
    const before = proxy.legacy('GET').length;
    const response = await gateway.app.request(`/v2/fixture_widgets/${appId}.json`, { headers });
    expect(response.status).toBe(200);
    await response.text();
    expect(proxy.legacy('GET').length - before).toBe(1);
    expect(gateway.sink.records).toEqual([]);
  });

  it('no record, sink call or dry-run call holds the key, wherever the caller put it', async () => {
    const sink = memorySink();
    const reads = await gatewayWith(`GET /v2/fixture_widgets/*=compare`, { sink });
    await (await reads.app.request(`/v2/fixture_widgets/${appId}.json?note=${KEY}`, { headers })).text();
    const writes = await gatewayWith(`POST /v2/fixture_widgets/*=compare`, { sink });
    const body = JSON.stringify({ note: { text: `key ${KEY}` } });
    await (await writes.app.request(`/v2/fixture_widgets/${appId}/notes.json?x=${KEY}`, { method: 'POST', headers, body })).text();
    const candidate = await gatewayWith(`POST /v2/fixture_widgets/*=candidate`, { sink });
    await (await candidate.app.request(`/v2/fixture_widgets/${appId}/notes.json`, { method: 'POST', headers, body })).text();
    await sink.waitForRecords(3);
    expect(sink.records.map((r) => r.outcome).filter((o) => o === 'dry_run')).toHaveLength(2);
    expect(sink.seen()).not.toContain(KEY);
    expect(sink.seen()).toContain('[redacted]');
  });
});

describe('consistent sampling', () => {
  it('keeps a (caller, route) pair in or out for good, close to the rate overall', () => {
    const identities = Array.from({ length: 2000 }, (_, i) => `identity-${i}`);
    const inAt = identities.filter((id) => sampledIn(id, WIDGETS, 0.25));
    expect(inAt.length / identities.length).toBeGreaterThan(0.2);
    expect(inAt.length / identities.length).toBeLessThan(0.3);
    for (const id of identities.slice(0, 50)) expect(sampledIn(id, WIDGETS, 0.25)).toBe(inAt.includes(id));
    expect(identities.every((id) => sampledIn(id, 'r', 1))).toBe(true);
    expect(identities.some((id) => sampledIn(id, 'r', 0))).toBe(false);
  });
});

describe('a failing legacy side', () => {
  it('compare: the caller gets the v2 error, the comparison is recorded as an error', async () => {
    const legacy = await startLegacyServer((_req, res) => {
      res.end();
    });
    const origin = legacy.origin;
    await legacy.close();
    const sandbox = await startSandbox({ apmApps: 5 });
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: sandbox.graphqlUrl, legacyUrl: origin, routeModes: '*=compare' });
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'x-api-key': DEMO_KEY } });
      expect(response.status).toBe(503);
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record).toMatchObject({ outcome: 'error', mode: 'compare', status: { legacy: null, translated: null } });
      expect(record?.error).toContain('legacy call failed');
    } finally {
      await sandbox.close();
    }
  });

  it('candidate: a legacy API that stalls mid-body is cut at the shadow deadline and recorded as an error', async () => {
    const legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Never ends.
      res.write('{"widget":');
    });
    const sandbox = await startSandbox({ apmApps: 5 });
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: sandbox.graphqlUrl, legacyUrl: legacy.origin, routeModes: '*=candidate', deadlineMs: 1_000 });
      const id = sandbox.sandbox.data.apps[0]?.id ?? 0;
      const response = await gateway.app.request(`/v2/fixture_widgets/${id}.json`, { headers: { 'x-api-key': DEMO_KEY } });
      expect(response.status).toBe(200);
      await response.text();
      const [record] = await gateway.sink.waitForRecords(1);
      expect(record).toMatchObject({ outcome: 'error', mode: 'candidate', status: { legacy: null, translated: 200 } });
      expect(record?.error).toContain('legacy call failed');
    } finally {
      await legacy.close();
      await sandbox.close();
    }
  });
});
