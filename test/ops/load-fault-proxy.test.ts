import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../../load/fault-proxy.ts';
import { json, startFakeUpstream } from '../support/fake-upstream.ts';

/**
 * The load run's fault proxy (npm run load with LOAD_FAULTS=1) must really inject what it
 * reports, and pass everything else through untouched, or the fault figures mean nothing.
 */
describe('load/fault-proxy.ts', () => {
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let proxy: FaultProxy;
  // Rolls, in order: the first request is answered 500, the second reset, the third delayed
  // (then the delay roll), the fourth passed on.
  const rolls = [0.001, 0.025, 0.05, 0, 0.9];

  beforeAll(async () => {
    upstream = await startFakeUpstream((req, res) => json(res, 200, { data: { echo: req.operationName, key: req.headers['api-key'] } }));
    proxy = await startFaultProxy(upstream.url, { error500: 0.02, reset: 0.01, delay: 0.1, delayMs: [0, 0] }, () => rolls.shift() ?? 0.9);
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  const post = () =>
    request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'NRAK-PROXY' },
      body: JSON.stringify({ query: 'query Probe { actor { user { name } } }' }),
    });

  it('answers 500, resets a connection, delays and passes on, as rolled, and counts each', async () => {
    const failed = await post();
    expect(failed.statusCode).toBe(500);
    expect(((await failed.body.json()) as { errors: unknown[] }).errors).toHaveLength(1);
    await expect(post()).rejects.toThrow();
    for (let i = 0; i < 2; i++) {
      const passed = await post();
      expect(passed.statusCode).toBe(200);
      expect(await passed.body.json()).toEqual({ data: { echo: 'Probe', key: 'NRAK-PROXY' } });
    }
    expect(proxy.counts).toEqual({ error500: 1, reset: 1, delayed: 1, passed: 1 });
    expect(upstream.received).toHaveLength(2);
  });
});
