import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLegacyApi, type LegacyApi } from '../../src/modes/passthrough.ts';
import { listenOnLoopback } from '../support/http.ts';

/**
 * What the legacy API is asked for, under a LEGACY_REST_URL with a base path: a plain target
 * goes byte for byte (the client handed to undici without a URL parse), any other as the URL
 * parse makes it, as it always did. And the Link header is re-pointed at the gateway's origin,
 * which is worked out only when there is a Link to re-point.
 */
const asked: string[] = [];
let legacy: { origin: string; close: () => Promise<void> };
let api: LegacyApi;

beforeAll(async () => {
  legacy = await listenOnLoopback(
    createServer((req, res) => {
      asked.push(req.url ?? '');
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (req.url?.includes('paged')) headers.link = `<${legacy.origin}/base/v2/paged.json?page=2>; rel="next"`;
      res.writeHead(200, headers).end('{}');
    }),
  );
  api = createLegacyApi({ baseUrl: `${legacy.origin}/base/` });
});
afterAll(async () => {
  await api.close();
  await legacy.close();
});

async function legacyTargetOf(target: string): Promise<string> {
  asked.length = 0;
  const answer = await api.exchange({ method: 'GET', target, headers: new Headers(), body: null, dueAt: performance.now() + 10_000, publicOrigin: 'http://gateway.test', requestId: 'target-test' });
  answer.body?.resume();
  expect(answer.status).toBe(200);
  return asked[0] as string;
}

describe('the legacy request target', () => {
  it('is the client target under the base path, as sent, when a URL parse would not change it', async () => {
    expect(await legacyTargetOf('/v2/fixture_widgets.json?filter[ids]=1,2&names[]=Apdex%2Fx&page=2')).toBe('/base/v2/fixture_widgets.json?filter[ids]=1,2&names[]=Apdex%2Fx&page=2');
    expect(await legacyTargetOf('/v2/fixture_widgets/12.json')).toBe('/base/v2/fixture_widgets/12.json');
  });

  it('is the URL parse of it otherwise: dot segments resolved, quotes escaped, an empty query dropped', async () => {
    expect(await legacyTargetOf('/v2/../v2/x.json')).toBe('/base/v2/x.json');
    expect(await legacyTargetOf('/v2/%2e%2e/x.json')).toBe('/base/x.json');
    expect(await legacyTargetOf("/v2/x.json?name='a'")).toBe('/base/v2/x.json?name=%27a%27');
    expect(await legacyTargetOf('/v2/x.json?')).toBe('/base/v2/x.json');
  });
});

describe("the gateway's origin in Link", () => {
  it('is asked for only when the answer has a Link, and then re-points it', async () => {
    let asks = 0;
    const publicOrigin = (): string => {
      asks++;
      return 'http://gateway.test';
    };
    const plain = await api.exchange({ method: 'GET', target: '/v2/fixture_widgets.json', headers: new Headers(), body: null, dueAt: performance.now() + 10_000, publicOrigin, requestId: 'link-test' });
    plain.body?.resume();
    expect(asks).toBe(0);
    const paged = await api.exchange({ method: 'GET', target: '/v2/paged.json', headers: new Headers(), body: null, dueAt: performance.now() + 10_000, publicOrigin, requestId: 'link-test' });
    paged.body?.resume();
    expect(asks).toBe(1);
    expect(paged.headers.link).toBe('<http://gateway.test/v2/paged.json?page=2>; rel="next"');
  });
});
