import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { KeyGuard, addressBucket } from '../../src/caller/key-guard.ts';
import { keylessTraceContext } from '../../src/caller/trace-context.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from '../support/fake-upstream.ts';
import { createTestGateway } from '../support/harness.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';

/**
 * Bad keys must not become NerdGraph traffic: a key NerdGraph refused is answered from a
 * short-lived cache, one key's concurrent first requests share one lookup, and one client
 * address may only make the gateway verify a few distinct unknown keys a minute.
 */
const GOOD_KEY = 'NRAK-GOODKEY00000000000000000000';
const ACCOUNT = 1000001;

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

describe('refused keys and unknown keys', () => {
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  const lookups = () => upstream.received.filter((r) => r.operationName === 'AccessibleAccounts').length;

  beforeAll(async () => {
    upstream = await startFakeUpstream(async (req, res) => {
      if (req.operationName === 'AccessibleAccounts') {
        // A little latency, so concurrent first requests overlap the lookup.
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (req.headers['api-key'] === GOOD_KEY) return json(res, 200, accountsAnswer([ACCOUNT]));
        return json(res, 401, { errors: [{ message: 'Invalid API key' }] });
      }
      // FixtureWidget: widget 1 of the account.
      return json(res, 200, { data: { actor: { entity: apmEntity(ACCOUNT, 1) } } });
    });
  });
  afterAll(() => upstream.close());

  it('makes one upstream call for 100 requests with one bad key, concurrent and sequential', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, routes: 'fixtures' });
    const before = lookups();
    const send = () => gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'X-Api-Key': 'NRAK-BADKEY1111111111111111111' } });
    const answers = await Promise.all(Array.from({ length: 50 }, send));
    for (let i = 0; i < 50; i++) answers.push(await send());

    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(await answer.json()).toEqual({ error: { title: 'Invalid API key' } });
    }
    expect(lookups() - before).toBe(1);
    expect(await gateway.upstreamCount()).toBe(1);
    const metrics = await (await gateway.app.request('/metrics')).text();
    expect(metrics).toMatch(/v2bridge_upstream_requests_total\{operation="AccessibleAccounts",outcome="bad_key"\} 1\n/);
    // The 50 later ones came from the refused-key cache; the first 49 concurrent ones shared the lookup.
    expect(metricValue(metrics, 'v2bridge_refused_key_hits_total')).toBe(50);
    expect(metrics).toMatch(/v2bridge_cache_lookups_total\{cache="accounts",result="coalesced"\} 49\n/);
  });

  it('limits the distinct unknown keys one address may have verified, but not known keys', async () => {
    const gateway = await createTestGateway({
      nerdgraphUrl: upstream.url,
      routes: 'fixtures',
      config: { keyGuard: { refusedTtlMs: 60_000, refusedMax: 100, verificationsPerAddressPerMinute: 3 } },
    });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const before = lookups();
      const get = (key: string) => httpSend(`${served.url}/v2/fixture_widgets/1.json`, { headers: { 'x-api-key': key } });
      // Three verifications: the good key (now known), two bad keys (now refused).
      expect((await get(GOOD_KEY)).status).toBe(200);
      expect((await get('NRAK-UNKNOWN1')).status).toBe(401);
      expect((await get('NRAK-UNKNOWN2')).status).toBe(401);

      // A fourth distinct unknown key from the same address: 429 in v2 form, no lookup.
      const limited = await get('NRAK-UNKNOWN3');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toEqual({ error: { title: 'Too many different API keys from this address; retry later' } });
      expect(lookups() - before).toBe(3);

      // Known keys still work: the good key, and the refused one is still refused (not 429).
      expect((await get(GOOD_KEY)).status).toBe(200);
      expect((await get('NRAK-UNKNOWN1')).status).toBe(401);
      expect(lookups() - before).toBe(3);

      const metrics = await (await httpSend(`${served.url}/metrics`)).text();
      expect(metricValue(metrics, 'v2bridge_key_verifications_limited_total')).toBe(1);
      expect(metricValue(metrics, 'v2bridge_refused_key_hits_total')).toBe(1);
    } finally {
      await served.close();
    }
  });

  it('does not limit in-process requests, which have no client address', async () => {
    const gateway = await createTestGateway({
      nerdgraphUrl: upstream.url,
      routes: 'fixtures',
      config: { keyGuard: { refusedTtlMs: 60_000, refusedMax: 100, verificationsPerAddressPerMinute: 1 } },
    });
    for (let i = 0; i < 3; i++) {
      const response = await gateway.app.request('/v2/fixture_widgets/1.json', { headers: { 'X-Api-Key': `NRAK-INPROCESS${i}` } });
      expect(response.status).toBe(401);
    }
  });
});

describe('the key guard tables', () => {
  const settings = { refusedTtlMs: 1_000, refusedMax: 2, verificationsPerAddressPerMinute: 2 };

  it('forgets a refusal after its TTL and keeps at most refusedMax', () => {
    let now = 1_000_000;
    const guard = new KeyGuard(settings, () => now);
    guard.refuse('a', 'bad_key');
    expect(guard.refusal('a')).toBe('bad_key');
    now += 1_001;
    expect(guard.refusal('a')).toBeUndefined();
    guard.refuse('a', 'bad_key');
    guard.refuse('b', 'forbidden');
    guard.refuse('c', 'bad_key');
    expect([guard.refusal('a'), guard.refusal('b'), guard.refusal('c')]).toEqual([undefined, 'forbidden', 'bad_key']);
  });

  it('counts each key once per address and minute, and opens a new minute', () => {
    let now = 1_000_000;
    const guard = new KeyGuard(settings, () => now);
    expect(guard.admit('10.0.0.1', 'k1').admitted).toBe(true);
    expect(guard.admit('10.0.0.1', 'k1').admitted).toBe(true);
    expect(guard.admit('10.0.0.1', 'k2').admitted).toBe(true);
    now += 45_000;
    expect(guard.admit('10.0.0.1', 'k3')).toEqual({ admitted: false, retryAfterSeconds: 15 });
    expect(guard.admit('::ffff:10.0.0.1', 'k4').admitted).toBe(false);
    expect(guard.admit('10.0.0.2', 'k3').admitted).toBe(true);
    now += 15_000;
    expect(guard.admit('10.0.0.1', 'k3').admitted).toBe(true);
  });

  it('never counts a key NerdGraph accepted lately, whose accounts entry may have expired', () => {
    const now = 1_000_000;
    const guard = new KeyGuard(settings, () => now);
    for (const key of ['good1', 'good2', 'good3', 'good4']) guard.accept(key);
    // Many more accepted keys than the limit, verified again from one address: all admitted.
    for (const key of ['good1', 'good2', 'good3', 'good4']) expect(guard.admit('10.0.0.9', key).admitted).toBe(true);
    expect(guard.admit('10.0.0.9', 'u1').admitted).toBe(true);
    expect(guard.admit('10.0.0.9', 'u2').admitted).toBe(true);
    expect(guard.admit('10.0.0.9', 'u3').admitted).toBe(false);
  });

  it('keeps a key in use accepted past the hour, and lets an unused one go', () => {
    let now = 1_000_000;
    const guard = new KeyGuard(settings, () => now);
    guard.accept('in-use');
    guard.accept('unused');
    // Checked every 50 minutes (each answered request asks), over three hours.
    for (let i = 0; i < 4; i++) {
      now += 50 * 60_000;
      expect(guard.isAccepted('in-use')).toBe(true);
    }
    expect(guard.isAccepted('unused')).toBe(false);
  });

  it('groups IPv6 clients by /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe('a caller trace context carrying a key', () => {
  const USER_KEY = 'NRAK-Q7WZ4KX9MD2PLR8TVB3HJ6NC5YF';
  const LICENSE_KEY = '0123456789abcdef0123456789abcdef01234567';
  const hex = (text: string): string => Buffer.from(text).toString('hex');
  const context = (traceparent: string, key = USER_KEY, tracestate = 'vendor=opaque') =>
    keylessTraceContext(new Headers({ 'x-api-key': key, traceparent, tracestate }));

  it('is dropped, with its tracestate, whether the key is the trace id, the span id, in either case or hex of hex', () => {
    const cases = [
      `00-${hex(USER_KEY.slice(0, 16))}-${'5'.repeat(16)}-01`,
      `00-${hex(USER_KEY.slice(10, 26)).toUpperCase()}-${'5'.repeat(16)}-01`,
      `00-${'4'.repeat(32)}-${hex(USER_KEY.slice(20, 28))}-01`,
      `00-${hex(hex(USER_KEY.slice(5, 13)))}-${'5'.repeat(16)}-01`,
      // Any New Relic key, not the caller's: 8 characters with a key prefix.
      `00-${'4'.repeat(32)}-${hex('NRII-ABC')}-01`,
    ];
    for (const traceparent of cases) expect(context(traceparent), traceparent).toEqual({ traceparent: null, tracestate: null });
    // A hex key (a license key) as the trace id, as it is.
    expect(context(`00-${LICENSE_KEY.slice(4, 36)}-${'5'.repeat(16)}-01`, LICENSE_KEY)).toEqual({ traceparent: null, tracestate: null });
  });

  it('keeps honest trace contexts: random ids, with the tracestate unless it carries a key', () => {
    for (let i = 0; i < 2000; i++) {
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      expect(context(traceparent)).toEqual({ traceparent, tracestate: 'vendor=opaque' });
      expect(context(traceparent, LICENSE_KEY).traceparent).toBe(traceparent);
    }
    const honest = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    expect(context(honest, USER_KEY, `k=${Buffer.from(USER_KEY).toString('base64')}`)).toEqual({ traceparent: honest, tracestate: null });
    expect(keylessTraceContext(new Headers({ 'x-api-key': USER_KEY }))).toEqual({ traceparent: null, tracestate: null });
  });
});
