import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeTitles, isLoopbackAddress, isLoopbackHost, presentedSecret } from '../../src/bridge/access.ts';
import { escapeHtml } from '../../src/bridge/page.ts';
import { daysLeft, V2_END_OF_LIFE } from '../../src/bridge/page-head.ts';
import type { ParityReport } from '../../src/compare/parity-store.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';
import {
  SHOW,
  LIST,
  DASHBOARD_KEY,
  COMPARED,
  UNSUPPORTED,
  DEPLOY_KEY,
  HOSTILE_AGENT,
  HOSTILE_NAME,
  PARITY_SENTINEL_KEY,
  PASSTHROUGH_ONLY,
  SLA_KEY,
  createBridgeGateway,
  fillStore,
} from '../support/parity-fixture.ts';

/** The /bridge/ page and parity.json in-process (and over real loopback for the access rules). */
const TOKEN = 'bridge-token-for-tests';
/** Headers a proxy adds: any of them means the loopback peer is relaying someone else. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-real-ip', 'via', 'cf-connecting-ip', 'true-client-ip', 'x-client-ip'];
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
// What @hono/node-server passes as env: the socket a request came in on.
const fromAddress = (remoteAddress: string) => ({ incoming: { socket: { remoteAddress } } });

/** The one `<tr>` whose opening tag carries all these data attributes. */
function rowWith(html: string, attributes: Record<string, string>): string {
  const rows = html.match(/<tr\b[^>]*>[\s\S]*?<\/tr>/g) ?? [];
  const found = rows.filter((row) => {
    const open = row.slice(0, row.indexOf('>') + 1);
    return Object.entries(attributes).every(([name, value]) => open.includes(` ${name}="${escapeHtml(value)}"`));
  });
  if (found.length !== 1) throw new Error(`${found.length} rows with ${JSON.stringify(attributes)}`);
  return found[0] as string;
}

function sectionOf(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  if (start < 0) throw new Error(`no section ${id}`);
  return html.slice(start, html.indexOf('</section>', start));
}

describe('GET /bridge/parity.json and /bridge/ (no token: loopback only)', async () => {
  const { gateway, store } = await createBridgeGateway({ maxRecords: 100 });
  fillStore(store);
  const app = gateway.app;

  it('serves the report as JSON, never cached', async () => {
    const res = await app.request('/bridge/parity.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const report = (await res.json()) as ParityReport;
    const verdicts = Object.fromEntries(report.routes.filter((r) => r.requests > 0).map((r) => [`${r.method} ${r.route}`, r.verdict]));
    expect(verdicts).toEqual({
      [`GET ${LIST}`]: 'differs in widgets[].name, widgets[].health_status',
      [`GET ${SHOW}`]: 'safe to translate',
      [`GET ${COMPARED}`]: 'safe to translate',
      [`DELETE ${UNSUPPORTED}`]: 'unsupported',
      [`GET ${PASSTHROUGH_ONLY}`]: 'passthrough only',
    });
    expect(report.recent).toHaveLength(5);
    const limited = (await (await app.request('/bridge/parity.json?recent=1')).json()) as ParityReport;
    expect(limited.recent).toHaveLength(1);
  });

  it.each(['-1', 'abc', '1001', '1e3', ''])('answers recent=%s with a v2 422', async (recent) => {
    const res = await app.request(`/bridge/parity.json?recent=${recent}`);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: { title: 'Invalid parameter recent: expected a whole number from 0 to 1000' } });
  });

  it('renders verdicts, worst field paths with their examples, and usage, without JavaScript', async () => {
    const res = await app.request('/bridge/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();

    const readiness = sectionOf(html, 'readiness');
    const apps = rowWith(readiness, { 'data-route': LIST, 'data-method': 'GET' });
    expect(apps).toContain('data-verdict="differs"');
    expect(apps).toContain('differs in widgets[].name, widgets[].health_status');
    expect(apps).toContain('<td class="n" data-outcome="mismatch">2</td>');
    expect(apps).toContain('<td class="n" data-outcome="dropped">1</td>');
    expect(rowWith(readiness, { 'data-route': SHOW, 'data-method': 'GET' })).toContain('data-verdict="safe to translate"');
    expect(rowWith(readiness, { 'data-route': UNSUPPORTED })).toContain('data-verdict="unsupported"');
    expect(rowWith(readiness, { 'data-route': PASSTHROUGH_ONLY, 'data-method': 'GET' })).toContain('data-verdict="passthrough only"');
    // Declared routes nobody called are listed too, folded away.
    expect(html).toMatch(/<details id="idle-routes" data-fold="idle-routes"><summary>\d+ routes not requested yet<\/summary>/);
    expect(rowWith(html, { 'data-route': PASSTHROUGH_ONLY, 'data-method': 'POST' })).toContain('data-verdict="passthrough only"');

    const patterns = sectionOf(html, 'worst-patterns');
    const name = rowWith(patterns, { 'data-route': LIST, 'data-pattern': 'widgets[].name' });
    expect(name).toContain('<td class="n" data-count="mismatch">2</td>');
    // The latest mismatch is the example: the hostile name, as text.
    expect(name).toContain(`<pre class="legacy" data-side="legacy">${escapeHtml(JSON.stringify(HOSTILE_NAME))}</pre>`);
    expect(name).toContain('<pre class="translated" data-side="translated">&quot;checkout&quot;</pre>');
    expect(name).toContain('/v2/fixture_widgets.json?filter[name]=Checkout&amp;api_key=[redacted]');
    const health = rowWith(patterns, { 'data-pattern': 'widgets[].health_status' });
    expect(health).toContain('&quot;green&quot;');
    expect(health).toContain('&quot;gray&quot;');
    expect(rowWith(patterns, { 'data-pattern': 'widgets[].summary.throughput' })).toContain('<td class="n" data-count="noise">2</td>');

    const usage = sectionOf(html, 'usage');
    const keptAlive = rowWith(usage, { 'data-route': PASSTHROUGH_ONLY });
    expect(keptAlive).toContain('<td class="n" data-count="requests">7</td>');
    expect(keptAlive).toContain('data-fidelity="passthrough"');
    expect(rowWith(usage, { 'data-route': LIST })).toContain('<td class="n" data-count="requests">6</td>');
    const data = rowWith(usage, { 'data-route': COMPARED });
    expect(data).toMatch(/<div class="if-switched">fidelity approximate; \d+ known gaps<\/div><details class="gaps" data-fold="gaps GET [^"]+"><summary>the \d+ known gaps<\/summary><ul><li>/);
    // By requests.
    expect(usage.indexOf(`data-route="${escapeHtml(PASSTHROUGH_ONLY)}"`)).toBeLessThan(usage.indexOf(`data-route="${escapeHtml(LIST)}"`));

    expect(sectionOf(html, 'recent')).toContain('The newest 5 of 5 kept');
  });

  it('opens with the routes in use that are safe to translate, the days left, the chart and the integrations; the details folded', async () => {
    const html = await (await app.request('/bridge/')).text();
    const head = sectionOf(html, 'head');
    expect(head).toContain('<strong data-figure="safe">2</strong> of <strong data-figure="in-use">5</strong></span> routes in use are safe to translate');
    // FIXED_NOW is 2026-11-22: 251 days to 2027-07-31.
    expect(head).toContain('<strong data-figure="days-left" data-end-of-life="2027-07-31">251</strong>');
    expect(head).toContain('&quot;safe to translate&quot;: compared with the legacy API');
    expect(sectionOf(html, 'trend').match(/<g class="bucket"/g)).toHaveLength(4);
    expect(sectionOf(html, 'integrations').match(/<tr class="integration"/g)).toHaveLength(3);
    // What comes first is short; the long tables are one click away.
    expect(html.indexOf('<section id="integrations">')).toBeLessThan(html.indexOf('<section id="readiness">'));
    for (const id of ['readiness', 'worst-patterns', 'usage', 'recent']) expect(sectionOf(html, id)).toMatch(/^<section id="[a-z-]+"><details data-fold="[a-z-]+"><summary><h2>/);
  });

  it('counts the days left to the end of life by the server clock, in whole UTC days', () => {
    expect(V2_END_OF_LIFE).toBe('2027-07-31');
    expect(daysLeft(Date.UTC(2027, 6, 30, 23, 59))).toBe(1);
    expect(daysLeft(Date.UTC(2027, 6, 30, 0, 0))).toBe(1);
    expect(daysLeft(Date.UTC(2027, 6, 31, 0, 0))).toBe(0);
    expect(daysLeft(Date.UTC(2028, 0, 1))).toBe(0);
    expect(daysLeft(Date.UTC(2026, 6, 31, 12))).toBe(365);
  });

  it('never lets caller data become markup', async () => {
    const html = await (await app.request('/bridge/')).text();
    // A User-Agent is the caller's text: shown, escaped.
    expect(html).toContain(`<div class="agent">${escapeHtml(HOSTILE_AGENT)}</div>`);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('onerror="');
    // The only scripts are the page's own, nonce'd.
    expect(html.match(/<script\b[^>]*>/g)).toEqual([expect.stringMatching(/^<script nonce="[A-Za-z0-9+/=]+">$/)]);
  });

  it('shows no key in the report, the page or /metrics', async () => {
    for (const path of ['/bridge/parity.json?recent=1000', '/bridge/', '/metrics']) {
      const text = (await (await app.request(path)).text()).toLowerCase();
      expect(text, path).not.toContain(PARITY_SENTINEL_KEY.toLowerCase());
      expect(text, path).not.toContain('bridgesentinel');
      // Nor 8 characters of the integrations' keys: their fingerprints are HMACs, not prefixes.
      for (const key of [DASHBOARD_KEY, SLA_KEY, DEPLOY_KEY]) expect(text, path).not.toContain(key.toLowerCase().slice(0, 8 + 5));
    }
  });

  it('redirects /bridge to /bridge/', async () => {
    const res = await app.request('/bridge');
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/bridge/');
  });

  it('refuses clients that are not on loopback, with a v2 403 that says to set BRIDGE_TOKEN', async () => {
    for (const path of ['/bridge/', '/bridge/parity.json']) {
      const res = await app.request(path, {}, fromAddress('203.0.113.9'));
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: { title: BridgeTitles.loopbackOnly } });
    }
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.8.9.10']) {
      expect((await app.request('/bridge/parity.json', {}, fromAddress(address))).status, address).toBe(200);
    }
    // Loopback, but forwarded by a proxy on this host: not a local client.
    for (const header of PROXY_HEADERS) {
      const res = await app.request('/bridge/', { headers: { [header]: '203.0.113.9' } }, fromAddress('127.0.0.1'));
      expect(res.status, header).toBe(403);
    }
    // A bearer token does not open anything when none is configured.
    expect((await app.request('/bridge/', { headers: { authorization: 'Bearer anything' } }, fromAddress('10.0.0.1'))).status).toBe(403);
  });
});

describe('/bridge/ with BRIDGE_TOKEN', async () => {
  const { gateway, store } = await createBridgeGateway({ bridgeToken: TOKEN });
  fillStore(store);
  const app = gateway.app;
  let served: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    served = await serveOnLoopback(app.fetch);
  });
  afterAll(() => served.close());

  it('accepts the token as Bearer or as a Basic password, from any address, proxied or not', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, basic('anyone', TOKEN), basic('', TOKEN)]) {
      expect((await app.request('/bridge/parity.json', { headers: { authorization } }, fromAddress('198.51.100.7'))).status, authorization).toBe(200);
    }
    const proxied = await app.request('/bridge/', { headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '198.51.100.7' } }, fromAddress('127.0.0.1'));
    expect(proxied.status).toBe(200);
  });

  it('asks for it otherwise (401, with a Basic challenge so a browser prompts)', async () => {
    const wrong = [undefined, 'Bearer nope', `Bearer ${TOKEN}x`, basic(TOKEN, 'nope'), `Basic ${TOKEN}`, `Token ${TOKEN}`, `Bearer ${TOKEN} extra`];
    for (const authorization of wrong) {
      const res = await app.request('/bridge/', authorization === undefined ? {} : { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="v2-bridge", charset="UTF-8"');
      expect(await res.json()).toEqual({ error: { title: BridgeTitles.tokenRequired } });
    }
  });

  it('over real loopback: the token is still required, and works', async () => {
    const refused = await httpSend(`${served.url}/bridge/parity.json`);
    expect(refused.status).toBe(401);
    const res = await httpSend(`${served.url}/bridge/`, { headers: { authorization: basic('me', TOKEN) } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('differs in widgets[].name');
  });
});

describe('over real loopback without a token', async () => {
  const { gateway, store } = await createBridgeGateway();
  fillStore(store);
  let served: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(() => served.close());

  it('serves a loopback client (the socket address is read)', async () => {
    const res = await httpSend(`${served.url}/bridge/parity.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as ParityReport).usage[0]?.route).toBe(PASSTHROUGH_ONLY);
  });

  it('under any loopback host name, any port', async () => {
    const port = new URL(served.url).port;
    for (const host of [`localhost:${port}`, 'LOCALHOST', `127.0.0.1:${port}`, '127.0.0.1', '127.8.9.10:1', `[::1]:${port}`, '[::1]']) {
      const res = await httpSend(`${served.url}/bridge/parity.json`, { headers: { host } });
      expect(res.status, host).toBe(200);
    }
  });

  it('refuses a foreign Host even from 127.0.0.1 (DNS rebinding: a page whose domain now points here)', async () => {
    const port = new URL(served.url).port;
    for (const host of [`rebind.attacker.example:${port}`, 'rebind.attacker.example', `localhost.attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, `mylaptop:${port}`, `10.0.0.5:${port}`, '[::2]']) {
      for (const path of ['/bridge/', '/bridge/parity.json']) {
        const res = await httpSend(`${served.url}${path}`, { headers: { host } });
        expect(res.status, `${host} ${path}`).toBe(403);
        expect(await res.json()).toEqual({ error: { title: BridgeTitles.loopbackHost } });
      }
    }
  });

  it('refuses a request another site made (Sec-Fetch-Site: cross-site), not a direct visit', async () => {
    const crossSite = await httpSend(`${served.url}/bridge/`, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.json()).toEqual({ error: { title: BridgeTitles.crossSite } });
    for (const site of ['none', 'same-origin']) {
      expect((await httpSend(`${served.url}/bridge/`, { headers: { 'sec-fetch-site': site } })).status, site).toBe(200);
    }
  });

  it('refuses what a proxy on this host relays, whichever header it adds', async () => {
    for (const header of PROXY_HEADERS) {
      const res = await httpSend(`${served.url}/bridge/parity.json`, { headers: { [header]: '203.0.113.9' } });
      expect(res.status, header).toBe(403);
      expect(await res.json()).toEqual({ error: { title: BridgeTitles.loopbackOnly } });
    }
  });

  it('puts no key in /metrics, even sent where a metric label is made from the request', async () => {
    const key = PARITY_SENTINEL_KEY;
    const headers = { 'x-api-key': key };
    // The path (route labels), a matched route's ids, the query, the key header. (Not the
    // method: node's HTTP parser turns away any method it does not know.)
    await httpSend(`${served.url}/${key}`, { headers });
    await httpSend(`${served.url}/v2/${key}.json?api_key=${key}`, { headers });
    await httpSend(`${served.url}/v2/fixture_widgets/${key}.json?filter[name]=${key}`, { headers });
    await httpSend(`${served.url}/v2/fixture_widgets.json?filter[name]=${key}`, { headers });
    await httpSend(`${served.url}/bridge/explain?request=${encodeURIComponent(`/v2/fixture_widgets.json?filter[name]=${key}`)}`, { headers });
    await httpSend(`${served.url}/bridge/parity.json?recent=${key}`, { headers });
    await httpSend(`${served.url}/bridge/${key}`, { headers });
    const metrics = await httpSend(`${served.url}/metrics`);
    const text = (await metrics.text()).toLowerCase();
    expect(metrics.status).toBe(200);
    expect(text).not.toContain(key.toLowerCase());
    expect(text).not.toContain('bridgesentinel');
    // The requests above were counted, so their labels are in the text just checked.
    expect(text).toMatch(/route="\/v2\/fixture_widgets\.\{format\}"/);
    expect(text).toMatch(/route="\/bridge\/explain"/);
    expect(text).toMatch(/route="unmatched"/);
  });
});

describe('access parsing', () => {
  it('never throws on any Authorization header, and finds Bearer and Basic secrets', () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        const secret = presentedSecret(header);
        expect(secret === undefined || typeof secret === 'string').toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((s) => !/\s/.test(s)), fc.string().filter((s) => !s.includes(':')), fc.string(), (token, user, password) => {
        expect(presentedSecret(`Bearer ${token}`)).toBe(token);
        expect(presentedSecret(basic(user, password))).toBe(password);
      }),
    );
  });

  it('knows loopback host names, and no other', () => {
    for (const host of ['localhost', 'localhost:8080', 'LocalHost:1', '127.0.0.1', '127.0.0.1:65535', '127.1.2.3:80', '[::1]', '[::1]:8080', '127.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    const refused = ['', 'localhost.', 'foo.localhost', 'localhost:port', 'localhost:99999', '127.0.0.1.evil.example', 'user@localhost', 'localhost/x', '[::2]', '0.0.0.0', '128.0.0.1', 'evil.example:8080', ' localhost'];
    for (const host of refused) expect(isLoopbackHost(host), host).toBe(false);
    // A rebinding page's Host names a registered domain: never taken for loopback.
    fc.assert(
      fc.property(fc.domain(), fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }), (domain, port) => {
        expect(isLoopbackHost(port === undefined ? domain : `${domain}:${port}`)).toBe(false);
      }),
    );
    // Any text: never throws, and what it accepts is a bare host name with an optional port.
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string().map((s) => `localhost${s}`), fc.string().map((s) => `127.0.0.1${s}`)), (text) => {
        if (isLoopbackHost(text)) expect(text).toMatch(/^(?:localhost|[\d.x]+|\[::1\])(?::\d*)?$/i);
      }),
    );
  });

  it('knows loopback addresses', () => {
    expect(['127.0.0.1', '127.255.0.3', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.1'].every(isLoopbackAddress)).toBe(true);
    expect(['10.0.0.1', '::', '0.0.0.0', '128.0.0.1', '::ffff:10.0.0.1', '127.0.0.1.evil', 'localhost', ''].some(isLoopbackAddress)).toBe(false);
  });
});
