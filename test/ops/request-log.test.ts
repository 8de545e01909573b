import { afterEach, describe, expect, it } from 'vitest';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { createTestGateway } from '../support/harness.ts';
import { json, startFakeUpstream, type FakeHandler } from '../support/fake-upstream.ts';
import { WIDGETS } from '../support/fixture-routes.ts';

/** One flat log line per request, the error's fields included; identities computed once per key. */
const KEY = 'NRAK-LOGLINETEST0011223344';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function gatewayOn(handler: FakeHandler) {
  const upstream = await startFakeUpstream(handler);
  closers.push(upstream.close);
  return createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures' });
}

const linesOf = (logs: string[], requestId: string) =>
  logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId === requestId);

describe('request log', () => {
  it('writes one line per request, carrying the upstream failure that answered it', async () => {
    const gateway = await gatewayOn((_req, res) => json(res, 503, { errors: [{ message: `down for ${KEY}` }] }));
    const response = await gateway.app.request(`/v2/fixture_widgets.json?filter[name]=${KEY}`, { headers: { 'X-Api-Key': KEY, 'X-Request-Id': 'log-503' } });
    expect(response.status).toBe(503);
    const lines = linesOf(gateway.logs, 'log-503');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      level: 40,
      method: 'GET',
      route: WIDGETS,
      path: '/v2/fixture_widgets.json',
      status: 503,
      kind: 'upstream_unavailable',
      upstreamClass: 'unavailable',
      title: 'NerdGraph is unavailable',
    });
    expect(String(lines[0]?.upstreamDetail)).toContain('down for');
    expect(gateway.logs.join('\n')).not.toContain('LOGLINETEST');
  });

  it('writes one info line for an answered request, and one for a client error with its kind', async () => {
    const gateway = await gatewayOn((_req, res) => json(res, 200, { data: { actor: { accounts: [] } } }));
    await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Request-Id': 'log-401' } });
    const [line, ...more] = linesOf(gateway.logs, 'log-401');
    expect(more).toHaveLength(0);
    expect(line).toMatchObject({ level: 30, status: 401, kind: 'missing_key' });
    await gateway.app.request('/healthz', { headers: { 'X-Request-Id': 'log-200' } });
    const ok = linesOf(gateway.logs, 'log-200');
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ level: 30, status: 200, route: '/healthz' });
    expect(ok[0]).not.toHaveProperty('kind');
  });
});

describe('caller identity', () => {
  it('is stable per key, distinct across keys, and stays bounded', () => {
    const identityOf = createIdentityHasher(Buffer.alloc(32, 1), 2);
    const a = identityOf('NRAK-A');
    expect(identityOf('NRAK-B')).not.toBe(a);
    identityOf('NRAK-C'); // evicts NRAK-A from the memo
    expect(identityOf('NRAK-A')).toBe(a);
    expect(createIdentityHasher(Buffer.alloc(32, 1))('NRAK-A')).toBe(a);
    expect(createIdentityHasher(Buffer.alloc(32, 2))('NRAK-A')).not.toBe(a);
  });
});
