import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBody, readSnapshot } from '../../src/modes/shadow.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { FIXED_NOW, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT } from '../support/harness.ts';
import { createModesGateway, startLegacyServer } from '../support/modes.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';
import { loadTestMappings, startFixtureLegacy, WIDGETS } from '../support/fixture-routes.ts';

/** Fixes from the review of the migration modes, each as the user-visible behaviour it protects. */
describe('passthrough carries the account the caller names', () => {
  let legacy: Awaited<ReturnType<typeof startLegacyServer>>;
  beforeAll(async () => {
    legacy = await startLegacyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"gadgets":[]}');
    });
  });
  afterAll(async () => {
    await legacy.close();
  });

  it('forwards X-Account-Id, so a multi-account key is answered (and written) in the same account as the translation', async () => {
    const gateway = await createModesGateway({ nerdgraphUrl: 'http://127.0.0.1:9/graphql', legacyUrl: legacy.origin, routeModes: '*=passthrough' });
    const response = await gateway.app.request('/v2/fixture_gadgets.json', { headers: { 'x-api-key': 'NRAK-ACCOUNTHEADER000000000000000', 'x-account-id': '1000002' } });
    expect(response.status).toBe(200);
    expect(legacy.received.at(-1)?.headers['x-account-id']).toBe('1000002');
  });
});

describe('compare answers from the legacy API whatever the translation lacks', () => {
  it('an unknown route, an unserved method and a GET with a body go to the legacy API as sent', async () => {
    const legacy = await startLegacyServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ got: `${req.method} ${req.url} ${req.body}` }));
    });
    try {
      const gateway = await createModesGateway({ nerdgraphUrl: 'http://127.0.0.1:9/graphql', legacyUrl: legacy.origin, routeModes: '*=compare' });
      const headers = { 'x-api-key': 'NRAK-UNKNOWNROUTE0000000000000000' };
      expect(await (await gateway.app.request('/v2/no_such_resource.json', { headers })).json()).toEqual({ got: 'GET /v2/no_such_resource.json ' });
      expect(await (await gateway.app.request('/v2/fixture_widgets/1.json', { method: 'PATCH', headers, body: '{}' })).json()).toEqual({ got: 'PATCH /v2/fixture_widgets/1.json {}' });
      // Over HTTP, a GET carrying form parameters (as v2's documentation sends metric data).
      const server = await serveOnLoopback(gateway.app.fetch);
      try {
        const answer = await httpSend(`${server.url}/v2/fixture_widgets.json`, { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: 'filter[name]=a' });
        expect(await answer.json()).toEqual({ got: 'GET /v2/fixture_widgets.json filter[name]=a' });
      } finally {
        await server.close();
      }
      expect(gateway.sink.records).toEqual([]);
    } finally {
      await legacy.close();
    }
  });
});

describe('ROUTE_MODES written as the parity page shows routes', () => {
  it('a pattern with a format suffix and a HEAD rule still match', async () => {
    const { modeResolverFor } = await import('../../src/modes/mode-resolver.ts');
    const { parseRouteModes } = await import('../../src/ops/route-modes.ts');
    const mappings = await loadTestMappings('fixtures');
    const route = { template: WIDGETS, passthroughOnly: false };
    for (const rules of ['GET /v2/fixture_widgets.json=compare', 'GET /v2/fixture_widgets.{format}=compare', 'HEAD /v2/fixture_widgets=compare']) {
      expect(modeResolverFor(parseRouteModes(rules), mappings).modeOf({ method: 'GET', path: '/v2/fixture_widgets.json', route }), rules).toBe('compare');
    }
  });
});

describe("shadow answers are bounded like the caller's", () => {
  it('refuses to inflate a compressed answer past the comparison bound (a gzip bomb)', () => {
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    expect(() => decodeBody(bomb, 'gzip', 1024 * 1024)).toThrow();
    expect(decodeBody(gzipSync(Buffer.from('{"a":1}')), 'gzip', 1024)).toBe('{"a":1}');
  });

  it('stops reading a second legacy or a translated answer past the bound', async () => {
    const big = new Response('x'.repeat(4096), { headers: { 'content-type': 'application/json' } });
    await expect(readSnapshot(big, performance.now(), 1024)).rejects.toThrow(/too large to compare/);
    const small = await readSnapshot(new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }), performance.now(), 1024);
    expect(small.body).toBe('{"ok":true}');
  });
});

describe('a write from a refused caller leaves no record', () => {
  const sandbox = createSandbox({ seed: 5, apmApps: 10, now: () => FIXED_NOW, apiKeys: new Map([['NRAK-GOODKEY00000000000000000000', [PRIMARY_ACCOUNT, SECONDARY_ACCOUNT]]]) });
  let server: { url: string; close: () => Promise<void> };
  let legacy: Awaited<ReturnType<typeof startFixtureLegacy>>;
  beforeAll(async () => {
    server = await sandbox.listen(0, '127.0.0.1');
    legacy = await startFixtureLegacy(sandbox, server.url);
  });
  afterAll(async () => {
    await legacy.close();
    await server.close();
  });

  it('candidate and compare: a bad key gets its 401, and nothing is recorded or written', async () => {
    const app = sandbox.data.apps[0]?.id as number;
    const body = JSON.stringify({ note: { text: 'refused' } });
    const headers = { 'x-api-key': 'NRAK-NOTAKEYTHESANDBOXKNOWS0000000', 'content-type': 'application/json' };
    for (const mode of ['candidate', 'compare']) {
      const gateway = await createModesGateway({ nerdgraphUrl: `${legacy.origin}/graphql`, legacyUrl: legacy.origin, routeModes: `*=${mode}` });
      const before = sandbox.writes().total;
      const response = await gateway.app.request(`/v2/fixture_widgets/${app}/notes.json`, { method: 'POST', headers, body });
      expect(response.status, mode).toBe(401);
      await response.text();
      // The shadow job runs after the answer; give it every chance to record before looking.
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(gateway.sink.records, mode).toEqual([]);
      expect(sandbox.writes().total, mode).toBe(before);
      expect(legacy.notes, mode).toEqual([]);
    }
  });
});
