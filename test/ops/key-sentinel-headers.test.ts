import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway } from '../support/harness.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';

/**
 * A sentinel key placed in every request header a client may send (the key headers
 * themselves, auth and cookie headers, proxy headers, caching and tracing headers, custom
 * ones) must come back in no response header or body, no log line and no /metrics text:
 * in-process and over real HTTP, as the caller's key and as a stranger's.
 */
const SENTINEL = 'NRAK-SENTINEL7Q2W9E4R6T8Y1U3I5O0P';

/** Header -> how a client would put a key there. */
const CARRIERS: Record<string, string> = {
  'X-Request-Id': SENTINEL,
  'X-Api-Key': SENTINEL,
  'Api-Key': SENTINEL,
  Authorization: `Bearer ${SENTINEL}`,
  Cookie: `session=${SENTINEL}; api_key=${SENTINEL}`,
  Referer: `https://dashboards.example.com/?api_key=${SENTINEL}`,
  Origin: `https://${SENTINEL.toLowerCase()}.example.com`,
  'User-Agent': `curl/8.5.0 ${SENTINEL}`,
  'X-Forwarded-For': `203.0.113.7, ${SENTINEL}`,
  'X-Forwarded-Host': SENTINEL,
  'X-Forwarded-Proto': SENTINEL,
  Forwarded: `for=203.0.113.7;host=${SENTINEL}`,
  'X-Account-Id': SENTINEL,
  Accept: `application/json; key=${SENTINEL}`,
  'Accept-Language': SENTINEL,
  'Accept-Encoding': SENTINEL,
  'Content-Type': `application/json; charset=${SENTINEL}`,
  'If-None-Match': `"${SENTINEL}"`,
  'If-Modified-Since': SENTINEL,
  'Cache-Control': SENTINEL,
  Range: `bytes=${SENTINEL}`,
  Traceparent: `00-${SENTINEL}-01`,
  'X-Correlation-Id': SENTINEL,
  'X-Http-Method-Override': SENTINEL,
  'NewRelic-Requesting-Services': SENTINEL,
  'X-Custom-Header': SENTINEL,
};

/** A translated list (its Link header is built from the request), a show in XML, an unknown path, the gateway's own. */
const PATHS = ['/v2/fixture_widgets.json?page=1', '/v2/fixture_widgets/1.xml', '/v2/nothing-here.json', '/healthz'];

/** The sentinel, its body without the prefix, in any case. */
function leaks(texts: readonly string[]): string[] {
  const needles = [SENTINEL, SENTINEL.slice(5)].map((n) => n.toLowerCase());
  return texts.filter((text) => needles.some((needle) => text.toLowerCase().includes(needle)));
}

describe('a key in any request header', () => {
  let sandbox: ReturnType<typeof createSandbox>;
  let close: () => Promise<void>;
  let graphqlUrl: string;

  beforeAll(async () => {
    // Enough apps for a second page of widgets, so the Link header (built from the request) is written.
    sandbox = createSandbox({ seed: 5, apmApps: 250, now: () => FIXED_NOW, apiKeys: new Map([[SENTINEL, [1000001]], [DEMO_KEY, [1000001]]]) });
    const running = await sandbox.listen(0, '127.0.0.1');
    close = running.close;
    graphqlUrl = `${running.url}/graphql`;
  });
  afterAll(() => close());

  /** As the caller's own key, and beside another caller's key. */
  const callers = [
    { name: "the caller's key", key: SENTINEL },
    { name: "a stranger's key", key: DEMO_KEY },
  ];

  it('never comes back in process (app.request)', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: graphqlUrl, routes: 'fixtures' });
    const seen: string[] = [];
    for (const { key } of callers) {
      for (const [header, value] of Object.entries(CARRIERS)) {
        for (const path of PATHS) {
          // The carrier goes last, so it also replaces the key header it names.
          const response = await gateway.app.request(path, { headers: { 'X-Api-Key': key, [header]: value } });
          seen.push(await response.text(), JSON.stringify([...response.headers]));
        }
      }
    }
    seen.push(await (await gateway.app.request('/metrics')).text());
    // Not vacuous: requests succeeded and were logged.
    expect(gateway.logs.length).toBeGreaterThan(Object.keys(CARRIERS).length);
    expect(seen.some((text) => text.includes('"widgets"'))).toBe(true);
    expect(leaks([...seen, ...gateway.logs])).toEqual([]);
  });

  it('never comes back over real HTTP, Host header included', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: graphqlUrl, routes: 'fixtures' });
    const served = await serveOnLoopback(gateway.app.fetch);
    try {
      const seen: string[] = [];
      let linked = 0;
      const carriers = { ...CARRIERS, Host: SENTINEL.toLowerCase() };
      for (const { key } of callers) {
        for (const [header, value] of Object.entries(carriers)) {
          for (const path of PATHS) {
            const headers: Record<string, string> = { 'x-api-key': key };
            headers[header.toLowerCase()] = value;
            const response = await httpSend(`${served.url}${path}`, { headers });
            if (response.headers.get('link')) linked++;
            seen.push(await response.text(), JSON.stringify([...response.headers]));
          }
        }
      }
      seen.push(await (await httpSend(`${served.url}/metrics`)).text());
      expect(linked).toBeGreaterThan(0);
      expect(leaks([...seen, ...gateway.logs])).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
