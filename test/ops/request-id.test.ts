import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFinder } from '../../src/caller/key-disguises.ts';
import { looksSecret, refuseSecretHost, requestIdFor } from '../../src/caller/request-id.ts';
import { DEMO_KEY, createTestGateway, startSandbox } from '../support/harness.ts';

/** X-Request-Id is echoed and logged: a key or token sent there must never come back out. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.array(fc.constantFrom(...alphabet), { minLength, maxLength }).map((a) => a.join(''));
const HEX = '0123456789abcdef';
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const B64URL = `${UPPER_ALNUM}abcdefghijklmnopqrstuvwxyz-_`;

/** Secrets as they come: every New Relic key shape, JWTs, auth words, random tokens. */
const secret = fc.oneof(
  fc.tuple(fc.constantFrom('NRAK-', 'NRAA-', 'NRII-', 'NRJS-', 'NRIQ-', 'NRSP-', 'NRAL-', 'nrak-'), chars(UPPER_ALNUM, 27, 27)).map(([p, body]) => p + body),
  chars(HEX, 40, 40),
  chars(HEX, 47, 47),
  chars(`${HEX}ABCDEF`, 47, 47),
  chars(HEX, 36, 36).map((hex) => `${hex}NRAL`),
  fc.tuple(chars(B64URL, 8, 18), chars(B64URL, 8, 18), chars(B64URL, 8, 18)).map(([a, b, c]) => `eyJ${a}.${b}.${c}`),
  chars(B64URL, 8, 50).map((token) => `Bearer-${token}`.slice(0, 64)),
  // 24 random bytes or more (192 bits), as base64url.
  fc.uint8Array({ minLength: 24, maxLength: 45 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
  // A user key's body without its prefix.
  chars(UPPER_ALNUM, 27, 27).filter((body) => /[0-9]/.test(body) && /[A-Z]/.test(body)),
);

/** Honest ids: UUIDs, W3C trace and span ids, short service tokens. */
const honest = fc.oneof(
  fc.uuid(),
  chars(HEX, 32, 32),
  chars(HEX, 16, 16),
  fc.tuple(chars(HEX, 32, 32), chars(HEX, 16, 16)).map(([t, s]) => `${t}-${s}`),
  // (Ids with the word bearer or basic as a part read as auth schemes and are replaced.)
  chars('abcdefghijklmnopqrstuvwxyz0123456789-', 1, 23).filter((id) => !id.split('-').some((part) => part === 'bearer' || part === 'basic')),
  // (Mixed-case ids holding eyJ, the base64 of '{"', read as JWT-like and are replaced.)
  chars(`${UPPER_ALNUM}abcdefghijklmnopqrstuvwxyz`, 1, 21).filter((id) => !id.includes('eyJ')),
);

describe('the request id rule', () => {
  it('replaces any key or token, alone or inside an id', () => {
    fc.assert(
      fc.property(secret, fc.constantFrom('', 'req-', 'a.'), (token, prefix) => {
        const id = `${prefix}${token}`.slice(0, 64);
        expect(looksSecret(id)).toBe(true);
        const chosen = requestIdFor(new Headers({ 'x-request-id': id }));
        expect(chosen).toMatch(UUID);
        expect(chosen).not.toContain(token.slice(0, 8));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps honest ids', () => {
    // ULIDs are time-ordered ids, not secrets.
    expect(requestIdFor(new Headers({ 'x-request-id': '01ARZ3NDEKTSV4RRFFQ69G5FAV' }))).toBe('01ARZ3NDEKTSV4RRFFQ69G5FAV');
    // Found by this property once: a lowercase `eyj` inside an id is not a JWT marker.
    expect(requestIdFor(new Headers({ 'x-request-id': 'eyja', 'x-api-key': DEMO_KEY }))).toBe('eyja');
    fc.assert(
      fc.property(honest, (id) => {
        expect(requestIdFor(new Headers({ 'x-request-id': id, 'x-api-key': DEMO_KEY }))).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });

  it("replaces the caller's own key and any long part of it, whatever its shape", () => {
    fc.assert(
      fc.property(chars(`${B64URL}.`, 8, 64), fc.constantFrom('x-api-key', 'api-key'), fc.nat(), (key, header, cut) => {
        const start = cut % (key.length - 7);
        for (const id of [key, key.slice(start, start + 8 + (cut % 5))]) {
          const chosen = requestIdFor(new Headers({ 'x-request-id': id, [header]: key }));
          expect(chosen).toMatch(UUID);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('replaces ids that are not id-shaped (spaces, other bytes, too long)', () => {
    for (const id of ['Bearer abc', 'a/b', 'x'.repeat(65), '']) {
      expect(requestIdFor(new Headers({ 'x-request-id': id }))).toMatch(UUID);
    }
    expect(requestIdFor(new Headers())).toMatch(UUID);
  });
});

/** Any printable ASCII (what a key header may hold), no space. */
const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, at) => String.fromCharCode(0x21 + at)).join('');

/** Keys as callers send them: New Relic shapes, and anything printable. */
const anyKey = fc.oneof(
  fc.tuple(fc.constantFrom('NRAK-', 'NRAA-', 'NRIQ-'), chars(UPPER_ALNUM, 27, 27)).map(([prefix, body]) => prefix + body),
  chars(HEX, 40, 40),
  chars(PRINTABLE, 12, 64),
);

const base64 = (text: string): string => Buffer.from(text, 'latin1').toString('base64');
const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex');
const everyBytePercent = (text: string): string => [...Buffer.from(text, 'latin1')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** How a client may disguise a key (or part of one) on its way into a header. */
const DISGUISES: Record<string, (text: string) => string> = {
  plain: (t) => t,
  'lower case': (t) => t.toLowerCase(),
  'upper case': (t) => t.toUpperCase(),
  base64,
  'base64, no padding': (t) => base64(t).replace(/=+$/, ''),
  base64url: (t) => Buffer.from(t, 'latin1').toString('base64url'),
  'base64 of the lower-cased key': (t) => base64(t.toLowerCase()),
  'base64url of the upper-cased key': (t) => Buffer.from(t.toUpperCase(), 'latin1').toString('base64url'),
  hex,
  'upper-case hex': (t) => hex(t).toUpperCase(),
  'hex of the lower-cased key': (t) => hex(t.toLowerCase()),
  'URL-encoded': encodeURIComponent,
  'every byte percent-encoded': everyBytePercent,
  'every byte percent-encoded, upper-case hex': (t) => everyBytePercent(t).toUpperCase(),
  'percent-encoded twice': (t) => encodeURIComponent(everyBytePercent(t)),
  'base64 of its hex': (t) => base64(hex(t)),
  'hex of its base64': (t) => hex(base64(t)),
};

/** Where the disguised key sits in a header value. */
const PLACES: Record<string, (value: string) => string> = {
  alone: (v) => v,
  'glued after a prefix': (v) => `req-${v}`,
  'glued after an odd prefix': (v) => `abc${v}`,
  'glued before a suffix': (v) => `${v}.trace`,
  'in a user agent': (v) => `curl/8.5.0 (${v})`,
  'in an ETag': (v) => `W/"${v}"`,
};

/** Realistic keys without a pattern in common with the ids (fast-check likes repeated characters). */
const randomKey = fc.tuple(fc.constantFrom('user', 'license', 'rest'), fc.string()).map(([shape, seed]) => {
  const digest = createHash('sha256').update(seed).digest();
  if (shape === 'user') return `NRAK-${[...digest].slice(0, 27).map((byte) => UPPER_ALNUM[byte % 36]).join('')}`;
  return shape === 'license' ? `${digest.toString('hex').slice(0, 36)}NRAL` : digest.toString('hex').slice(0, 40);
});

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** UUIDs, trace ids, short tokens, ULIDs. */
const honestIds = fc.oneof(honest, fc.tuple(fc.constantFrom(...'01234567'), chars(CROCKFORD, 25, 25)).map(([first, rest]) => first + rest));
const honestHeaderValues = fc.oneof(
  honestIds,
  chars(HEX, 32, 32).map((md5) => `W/"${md5}"`),
  fc.constantFrom(
    'curl/8.5.0',
    'newrelic-client-go/2.41.0 (https://github.com/newrelic/newrelic-client-go)',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    'python-requests/2.31.0',
    'application/json, text/plain, */*',
    'gzip, deflate, br',
    'Wed, 21 Oct 2015 07:28:00 GMT',
  ),
);

describe('a key in disguise', () => {
  it('is found in every encoding and place, whole or any 8 of its characters, and never kept as the request id', () => {
    const disguises = Object.entries(DISGUISES);
    const places = Object.entries(PLACES);
    fc.assert(
      fc.property(anyKey, fc.nat(), fc.nat(), fc.constantFrom(...disguises), fc.constantFrom(...places), (key, start, length, [, disguise], [, place]) => {
        const from = start % (key.length - 7);
        const part = key.slice(from, from + 8 + (length % (key.length - from - 7)));
        for (const secret of [key, part]) {
          const value = place(disguise(secret));
          expect(keyFinder([key])(value)).toBe(true);
          expect(requestIdFor(new Headers({ 'x-request-id': value, 'x-api-key': key }))).not.toBe(value);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("the base64 of the sandbox's demo key (23 characters, under the long-token threshold) is replaced", () => {
    const id = Buffer.from(DEMO_KEY).toString('base64url');
    expect(id).toHaveLength(23);
    expect(requestIdFor(new Headers({ 'x-request-id': id, 'x-api-key': DEMO_KEY }))).toMatch(UUID);
  });

  it('keeps honest ids and leaves honest header values alone, whatever the key', () => {
    fc.assert(
      fc.property(randomKey, honestIds, (key, id) => {
        expect(requestIdFor(new Headers({ 'x-request-id': id, 'x-api-key': key }))).toBe(id);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(randomKey, honestHeaderValues, (key, value) => {
        expect(keyFinder([key])(value)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the Host rule (Host is reflected into Link URLs)', () => {
  it('refuses a key-shaped Host and keeps real ones', () => {
    for (const host of ['localhost:8080', '127.0.0.1:41234', '[::1]:8080', 'v2-bridge.internal.example.com', 'api.newrelic.com', 'my-loadbalancer-1234567890.us-west-2.elb.amazonaws.com', 'a1b2c3d4e5f6g7h8i9j0k1l2m3.example.com:443', 'basic-gw.default.svc.cluster.local', 'api.bearer-tokens.internal.example', 'internalloadbalancerproductioneu01.example.com:8080']) {
      expect(() => refuseSecretHost(new Headers({ host }))).not.toThrow();
    }
    for (const host of ['nrak-sentinel7q2w9e4r6t8y1u3i5o0p', 'NRAK-SENTINEL7Q2W9E4R6T8Y1U3I5O0P:8080', `${'ab12'.repeat(9)}NRAL.example.com`]) {
      expect(() => refuseSecretHost(new Headers({ host }))).toThrow(/Invalid Host header/);
    }
    // The caller's own key, whatever its shape, in any case.
    const key = 'Abc123Def456Ghi789';
    expect(() => refuseSecretHost(new Headers({ host: 'abc123def456ghi789.example.com', 'x-api-key': key }))).toThrow(/Invalid Host header/);
    expect(() => refuseSecretHost(new Headers({ host: 'abc123def456ghi789.example.com', 'x-api-key': 'another-key-entirely' }))).not.toThrow();
  });
});

describe('X-Request-Id through the gateway', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 5 });
  });
  afterAll(() => sandbox.close());

  it('never echoes or logs a key sent as the request id, and keeps an honest one', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl, routes: 'fixtures' });
    const SENTINEL = 'NRAK-SENTINEL7Q2W9E4R6T8Y1U3I5O0P';
    for (const id of [SENTINEL, DEMO_KEY, SENTINEL.slice(5)]) {
      const response = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY, 'X-Request-Id': id } });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(UUID);
      expect(JSON.stringify([...response.headers])).not.toContain(id);
    }
    expect(gateway.logs.filter((line) => line.includes(SENTINEL.slice(5)) || line.includes(DEMO_KEY))).toEqual([]);

    const honestId = randomUUID();
    const response = await gateway.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY, 'X-Request-Id': honestId } });
    expect(response.headers.get('x-request-id')).toBe(honestId);
    expect(gateway.logs.some((line) => line.includes(honestId))).toBe(true);
  });
});
