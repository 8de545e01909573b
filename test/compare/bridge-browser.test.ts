import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, APPS, DATA, DEPLOY_DELETE, HOSTILE_NAME, PARITY_SENTINEL_KEY, LOCATION_FAILURE, createBridgeGateway, fillStore } from '../support/parity-fixture.ts';
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

  async function served(bridgeToken?: string): Promise<string> {
    const { gateway, store } = await createBridgeGateway(bridgeToken === undefined ? {} : { bridgeToken });
    fillStore(store);
    const server = await serveOnLoopback(gateway.app.fetch);
    servers.push(server);
    return server.url;
  }

  /** A fresh context (own storage, no cache) per page; console errors (a CSP refusal is one) collected. */
  async function open(url: string, credentials?: { username: string; password: string }): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext(credentials ? { httpCredentials: credentials } : {});
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

    // Readiness, as text a person reads.
    const verdictOf = (route: string, method = 'GET') => page.locator(`${row('readiness', route, method)} td.verdict`).innerText();
    expect(await verdictOf(APPS)).toBe('differs in applications[].name, applications[].health_status');
    expect(await verdictOf(APP)).toBe('safe to translate');
    expect(await verdictOf(DATA)).toBe('safe to translate');
    expect(await verdictOf(DEPLOY_DELETE, 'DELETE')).toBe('unsupported');
    expect(await verdictOf(LOCATION_FAILURE)).toBe('passthrough only');
    expect(await page.locator(row('readiness', APPS)).getAttribute('data-verdict')).toBe('differs');
    expect(await page.locator(`${row('readiness', APPS)} td[data-outcome="mismatch"]`).innerText()).toBe('2');
    expect(await page.locator(`${row('readiness', APPS)} td[data-outcome="noise"]`).innerText()).toBe('1');
    expect(await page.locator(`${row('readiness', APPS)} td[data-outcome="dropped"]`).innerText()).toBe('1');
    expect(await page.locator(`${row('readiness', APP)} td[data-outcome="match"]`).innerText()).toBe('3');

    // Routes nobody called are folded away, and open on a click.
    const idle = page.locator('#idle-routes tr[data-route]');
    expect(await idle.count()).toBeGreaterThan(10);
    expect(await idle.first().isVisible()).toBe(false);
    await page.locator('#idle-routes summary').click();
    expect(await idle.first().isVisible()).toBe(true);

    // Worst field paths, worst first, each with its example (the caller's hostile text shown as text).
    const patterns = page.locator('#worst-patterns tr[data-pattern]');
    expect(await patterns.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-pattern')))).toEqual([
      'applications[].name',
      'applications[].health_status',
      'applications[].application_summary.throughput',
      'metric_data.metrics[].timeslices[].values.call_count',
    ]);
    const name = page.locator('#worst-patterns tr[data-pattern="applications[].name"]');
    expect(await name.locator('[data-count="mismatch"]').innerText()).toBe('2');
    expect(await name.locator('pre.legacy').innerText()).toBe(JSON.stringify(HOSTILE_NAME));
    expect(await name.locator('pre.translated').innerText()).toBe('"checkout"');
    expect(await name.locator('code.request').innerText()).toBe('/v2/applications.json?filter[name]=Checkout&api_key=[redacted]');
    const health = page.locator('#worst-patterns tr[data-pattern="applications[].health_status"]');
    expect([await health.locator('pre.legacy').innerText(), await health.locator('pre.translated').innerText()]).toEqual(['"green"', '"gray"']);
    const throughput = page.locator('#worst-patterns tr[data-pattern="applications[].application_summary.throughput"]');
    expect(await throughput.locator('[data-count="noise"]').innerText()).toBe('2');
    expect(await throughput.locator('[data-count="mismatch"]').innerText()).toBe('0');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();

    // Usage, by requests, with fidelity.
    const usage = page.locator('#usage tr[data-route]');
    expect(
      await usage.evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-route'), r.querySelector('[data-count="requests"]')?.textContent, r.getAttribute('data-fidelity')])),
    ).toEqual([
      [LOCATION_FAILURE, '7', 'passthrough'],
      [APPS, '6', 'approximate'],
      [APP, '3', 'approximate'],
      [DATA, '2', 'approximate'],
      [DEPLOY_DELETE, '1', 'unsupported'],
    ]);
    expect(await page.locator(`${row('usage', LOCATION_FAILURE)} div.if-switched`).innerText()).toContain('stays on the legacy API');
    expect(await page.locator(`${row('usage', APPS)} div.if-switched`).innerText()).toContain('differs in applications[].name');
    // The known gaps are one click away, each a list item.
    const gaps = page.locator(`${row('usage', DATA)} details.gaps`);
    expect(await gaps.locator('summary').innerText()).toMatch(/^the \d+ known gaps$/);
    expect(await gaps.locator('li').first().isVisible()).toBe(false);
    await gaps.locator('summary').click();
    expect(await gaps.locator('li').first().isVisible()).toBe(true);

    expect(await page.locator('#recent tr[data-record]').count()).toBe(5);
    expect(await page.locator('[data-total="requests"]').innerText()).toBe('19 requests');

    // The page's own script ran under its CSP (it reveals the refresh toggle), and nothing was refused.
    expect(await page.locator('#refresh').isVisible()).toBe(true);
    expect(errors).toEqual([]);
    expect((await page.content()).toLowerCase()).not.toContain(PARITY_SENTINEL_KEY.toLowerCase());
  });

  it('with BRIDGE_TOKEN, opens with the token as the Basic password (what a browser prompt sends)', async () => {
    const url = await served(TOKEN);
    const { page } = await open(url, { username: 'me', password: TOKEN });
    expect(await page.locator(`${row('readiness', APPS)} td.verdict`).innerText()).toBe('differs in applications[].name, applications[].health_status');

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
