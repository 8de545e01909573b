import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINGERPRINT_CHARS } from '../../src/caller/seen-caller.ts';
import {
  SHOW,
  LIST,
  DASHBOARD_AGENT,
  DASHBOARD_KEY,
  COMPARED,
  UNSUPPORTED,
  DEPLOY_KEY,
  HOSTILE_AGENT,
  HOSTILE_NAME,
  PARITY_SENTINEL_KEY,
  PASSTHROUGH_ONLY,
  SLA_AGENT,
  SLA_KEY,
  createBridgeGateway,
  fillStore,
  fixtureFingerprintOf,
} from '../support/parity-fixture.ts';
import { WIDGET_NOTES } from '../support/fixture-routes.ts';
import { serveOnLoopback } from '../support/http.ts';

/**
 * The /bridge/ page in a real headless Chromium (Debian's, driven by playwright-core): what a
 * person sees, read from the rendered DOM, for a store filled with known comparisons. Without
 * chromium the test is skipped with one notice, unless REQUIRE_BROWSER is set (.ci/run sets it).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const TOKEN = 'browser-test-token';
const present = existsSync(CHROMIUM);
if (!present && process.env.REQUIRE_BROWSER) throw new Error(`REQUIRE_BROWSER is set but there is no chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
if (!present) process.stdout.write(`notice: skipping the /bridge/ browser test (no chromium at ${CHROMIUM}; install Debian's chromium or set CHROMIUM_PATH)\n`);

const row = (section: string, route: string, method = 'GET'): string => `#${section} tr[data-route="${route}"][data-method="${method}"]`;

describe.skipIf(!present)('the /bridge/ page in headless Chromium', () => {
  let browser: Browser;
  const servers: Array<{ url: string; close: () => Promise<void> }> = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  async function served(bridgeToken?: string, now?: () => number): Promise<string> {
    const { gateway, store } = await createBridgeGateway({ ...(bridgeToken === undefined ? {} : { bridgeToken }), ...(now ? { now } : {}) });
    fillStore(store);
    const server = await serveOnLoopback(gateway.app.fetch);
    servers.push(server);
    return server.url;
  }

  /** A fresh context (own storage, no cache) per page; console errors (a CSP refusal is one) collected. */
  async function open(url: string, credentials?: { username: string; password: string }): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...(credentials ? { httpCredentials: credentials } : {}) });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    const answer = await page.goto(`${url}/bridge/`);
    expect(answer?.status()).toBe(200);
    return { page, errors };
  }

  it('shows the readiness verdict of each route, the worst field paths with their example values, and usage', async () => {
    const { page, errors } = await open(await served());
    expect(await page.title()).toBe('v2-bridge parity');
    // The detail tables come folded; a click unfolds each.
    for (const section of ['readiness', 'worst-patterns', 'usage', 'recent']) {
      const fold = page.locator(`#${section} > details`);
      expect(await fold.getAttribute('open')).toBeNull();
      await fold.locator('> summary').click();
      expect(await fold.getAttribute('open')).not.toBeNull();
    }

    // Readiness, as text a person reads.
    const verdictOf = (route: string, method = 'GET') => page.locator(`${row('readiness', route, method)} td.verdict`).innerText();
    expect(await verdictOf(LIST)).toBe('differs in widgets[].name, widgets[].health_status');
    expect(await verdictOf(SHOW)).toBe('safe to translate');
    expect(await verdictOf(COMPARED)).toBe('safe to translate');
    expect(await verdictOf(UNSUPPORTED, 'DELETE')).toBe('unsupported');
    expect(await verdictOf(PASSTHROUGH_ONLY)).toBe('passthrough only');
    expect(await page.locator(row('readiness', LIST)).getAttribute('data-verdict')).toBe('differs');
    expect(await page.locator(`${row('readiness', LIST)} td[data-outcome="mismatch"]`).innerText()).toBe('2');
    expect(await page.locator(`${row('readiness', LIST)} td[data-outcome="noise"]`).innerText()).toBe('1');
    expect(await page.locator(`${row('readiness', LIST)} td[data-outcome="dropped"]`).innerText()).toBe('1');
    expect(await page.locator(`${row('readiness', SHOW)} td[data-outcome="match"]`).innerText()).toBe('3');

    // Routes nobody called are folded away, and open on a click.
    const idle = page.locator('#idle-routes tr[data-route]');
    // The fixture table's routes (and methods) but the five in use.
    expect(await idle.count()).toBe(7);
    expect(await page.locator(`#idle-routes tr[data-route="${WIDGET_NOTES}"]`).count()).toBe(1);
    expect(await idle.first().isVisible()).toBe(false);
    await page.locator('#idle-routes summary').click();
    expect(await idle.first().isVisible()).toBe(true);

    // Worst field paths, worst first, each with its example (the caller's hostile text shown as text).
    const patterns = page.locator('#worst-patterns tr[data-pattern]');
    expect(await patterns.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-pattern')))).toEqual([
      'widgets[].name',
      'widgets[].health_status',
      'sprockets[].call_count',
      'widgets[].summary.throughput',
    ]);
    const name = page.locator('#worst-patterns tr[data-pattern="widgets[].name"]');
    expect(await name.locator('[data-count="mismatch"]').innerText()).toBe('2');
    expect(await name.locator('pre.legacy').innerText()).toBe(JSON.stringify(HOSTILE_NAME));
    expect(await name.locator('pre.translated').innerText()).toBe('"checkout"');
    expect(await name.locator('code.request').innerText()).toBe('/v2/fixture_widgets.json?filter[name]=Checkout&api_key=[redacted]');
    const health = page.locator('#worst-patterns tr[data-pattern="widgets[].health_status"]');
    expect([await health.locator('pre.legacy').innerText(), await health.locator('pre.translated').innerText()]).toEqual(['"green"', '"gray"']);
    const throughput = page.locator('#worst-patterns tr[data-pattern="widgets[].summary.throughput"]');
    expect(await throughput.locator('[data-count="noise"]').innerText()).toBe('2');
    expect(await throughput.locator('[data-count="mismatch"]').innerText()).toBe('0');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();

    // Usage, by requests, with fidelity.
    const usage = page.locator('#usage tr[data-route]');
    expect(
      await usage.evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-route'), r.querySelector('[data-count="requests"]')?.textContent, r.getAttribute('data-fidelity')])),
    ).toEqual([
      [PASSTHROUGH_ONLY, '7', 'passthrough'],
      [LIST, '6', 'exact'],
      [SHOW, '3', 'exact'],
      [COMPARED, '2', 'approximate'],
      [UNSUPPORTED, '1', 'unsupported'],
    ]);
    expect(await page.locator(`${row('usage', PASSTHROUGH_ONLY)} div.if-switched`).innerText()).toContain('stays on the legacy API');
    expect(await page.locator(`${row('usage', LIST)} div.if-switched`).innerText()).toContain('differs in widgets[].name');
    // The known gaps are one click away, each a list item.
    const gaps = page.locator(`${row('usage', COMPARED)} details.gaps`);
    expect(await gaps.locator('summary').innerText()).toMatch(/^the \d+ known gaps$/);
    expect(await gaps.locator('li').first().isVisible()).toBe(false);
    await gaps.locator('summary').click();
    expect(await gaps.locator('li').first().isVisible()).toBe(true);

    expect(await page.locator('#recent tr[data-record]').count()).toBe(5);
    expect(await page.locator('[data-total="requests"]').innerText()).toBe('19 requests');

    // The page's own script ran under its CSP (it reveals the refresh toggle), and nothing was refused.
    expect(await page.locator('#refresh').isVisible()).toBe(true);

    // Its refresh (every 15 s; at once on 'bridge:refresh') replaces <main> and keeps open what the reader opened.
    await page.locator('main').evaluate((main) => main.setAttribute('data-stale', ''));
    await page.evaluate(
      "new Promise((resolve) => { document.addEventListener('bridge:refreshed', () => resolve(true), { once: true }); document.dispatchEvent(new Event('bridge:refresh')); })",
    );
    expect(await page.locator('main[data-stale]').count()).toBe(0);
    for (const section of ['readiness', 'worst-patterns', 'usage', 'recent']) expect(await page.locator(`#${section} > details`).getAttribute('open')).not.toBeNull();
    expect(await page.locator('#idle-routes').getAttribute('open')).not.toBeNull();
    expect(await gaps.getAttribute('open')).not.toBeNull();
    expect(await page.locator(`${row('usage', LIST)} details.gaps`).getAttribute('open')).toBeNull();
    expect(errors).toEqual([]);
    expect((await page.content()).toLowerCase()).not.toContain(PARITY_SENTINEL_KEY.toLowerCase());
  });

  it("at 1280 px: the head's two figures, the chart, the integrations, no horizontal scroll and no key", async () => {
    // A month before the end of life, by the page's injected clock.
    const { page, errors } = await open(await served(undefined, () => Date.UTC(2027, 6, 1, 9, 30)));
    expect(page.viewportSize()?.width).toBe(1280);

    // The head: 2 of the 5 routes in use are safe (SHOW and COMPARED), 30 days left.
    expect(await page.locator('[data-figure="safe"]').innerText()).toBe('2');
    expect(await page.locator('[data-figure="in-use"]').innerText()).toBe('5');
    expect(await page.locator('#safe-routes').innerText()).toMatch(/^2 of 5\s+routes in use are safe to translate$/);
    expect(await page.locator('[data-figure="days-left"]').innerText()).toBe('30');
    expect(await page.locator('#days-left').innerText()).toContain('2027-07-31');
    expect(await page.locator('#safe-rule').innerText()).toContain('"safe to translate"');

    // The chart: an SVG with a title, one bar per hour with comparisons, each bar's parts its counts.
    const chart = page.locator('#trend svg');
    expect(await chart.count()).toBe(1);
    expect(await chart.getAttribute('role')).toBe('img');
    expect(await chart.locator('title').first().textContent()).toContain('per hour');
    const bars = await chart.locator('g.bucket').evaluateAll((groups) =>
      groups.map((g) => [g.getAttribute('data-bucket'), ...['match', 'mismatch', 'noise'].map((o) => g.querySelector(`rect[data-outcome="${o}"]`)?.getAttribute('data-count'))]),
    );
    expect(bars).toEqual([
      ['2026-11-22T08:00:00.000Z', '1', '1', '0'],
      ['2026-11-22T09:00:00.000Z', '1', '0', '1'],
      ['2026-11-22T10:00:00.000Z', '1', '0', '1'],
      ['2026-11-22T11:00:00.000Z', '0', '1', '1'],
    ]);
    expect((await chart.boundingBox())?.height).toBeGreaterThan(100);

    // Integrations: the one with most calls to routes not ready first; the hostile User-Agent as text.
    const fingerprint = (key: string) => fixtureFingerprintOf(key).slice(0, FINGERPRINT_CHARS);
    const rows = await page.locator('#integrations tr.integration').evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-fingerprint'), tr.querySelector('.agent')?.textContent, tr.querySelector('[data-count="not-ready"]')?.textContent]),
    );
    expect(rows).toEqual([
      [fingerprint(SLA_KEY), SLA_AGENT, '7'],
      [fingerprint(DASHBOARD_KEY), DASHBOARD_AGENT, '6'],
      [fingerprint(DEPLOY_KEY), HOSTILE_AGENT, '1'],
    ]);
    const sla = page.locator(`#integrations tr[data-fingerprint="${fingerprint(SLA_KEY)}"]`);
    expect(await sla.locator('li[data-ready="false"]').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-route')))).toEqual([PASSTHROUGH_ONLY]);
    expect(await sla.locator('li[data-ready="true"]').first().isVisible()).toBe(false);
    await sla.locator('details.ready-routes > summary').click();
    expect(await sla.locator('li[data-ready="true"]').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-route')))).toEqual([SHOW]);
    expect(await page.locator('#integrations script, #integrations img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();

    // Nothing wider than the screen, folded or unfolded.
    const scrollWidth = () => page.locator('html').evaluate((html) => html.scrollWidth);
    expect(await scrollWidth()).toBeLessThanOrEqual(1280);
    await page.locator('details').evaluateAll((folds) => folds.forEach((fold) => fold.setAttribute('open', '')));
    expect(await page.locator('#worst-patterns pre.legacy').first().isVisible()).toBe(true);
    expect(await scrollWidth()).toBeLessThanOrEqual(1280);

    // No key anywhere on the page: not whole, not any 8 characters of it (a prefix shown as a fingerprint), in any case.
    const html = (await page.content()).toLowerCase();
    for (const key of [SLA_KEY, DASHBOARD_KEY, DEPLOY_KEY, PARITY_SENTINEL_KEY]) {
      const lower = key.toLowerCase();
      for (let at = 0; at + 8 <= lower.length; at += 1) expect(html, `${key} at ${at}`).not.toContain(lower.slice(at, at + 8));
      expect(key.startsWith(fingerprint(key))).toBe(false);
    }
    expect(errors).toEqual([]);
  });

  it('with BRIDGE_TOKEN, opens with the token as the Basic password (what a browser prompt sends)', async () => {
    const url = await served(TOKEN);
    const { page } = await open(url, { username: 'me', password: TOKEN });
    await page.locator('#readiness > details > summary').click();
    expect(await page.locator(`${row('readiness', LIST)} td.verdict`).innerText()).toBe('differs in widgets[].name, widgets[].health_status');

    // Without credentials the browser is challenged: headless Chromium has no one to prompt, so it
    // gives up on the navigation (or shows the 401), and the page is not shown.
    const context = await browser.newContext();
    const page2 = await context.newPage();
    const outcome = await page2.goto(`${url}/bridge/`).then(
      (answer) => `status ${answer?.status()}`,
      (error: Error) => error.message,
    );
    expect(outcome).toMatch(/status 401|ERR_INVALID_AUTH_CREDENTIALS/);
    expect(await page2.locator('#readiness').count()).toBe(0);
    await context.close();
  });
});
