import { expect, it } from 'vitest';
import type { SandboxData } from '../../sandbox/model.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * Key transactions (list, show) and the browser applications list: the gateway through the
 * sandbox's NerdGraph face equals the sandbox's legacy /v2 face, request for request (status,
 * content type, Link, body; lists without regard to order; only the mapping's gap paths removed).
 */

const demo = { 'X-Api-Key': DEMO_KEY };
const secondaryKey = { 'X-Api-Key': SECONDARY_KEY };
const keys: Array<[string, Record<string, string>]> = [
  ['demo', demo],
  ['demo via Api-Key', { 'Api-Key': DEMO_KEY }],
  ['secondary', secondaryKey],
  ['multi pinned to secondary', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) }],
];

interface Named {
  accountId: number;
  id: number;
  name: string;
}

/** The filter/page/auth cases every `filter[name]`, `filter[ids]`, `page` list gets. */
function listCases(route: string, base: string, items: readonly Named[]): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo, method?: string) => cases.push({ route, name, path, headers, ...(method && { method }) });
  const primary = items.filter((item) => item.accountId === PRIMARY_ACCOUNT);
  const secondary = items.filter((item) => item.accountId === SECONDARY_ACCOUNT);
  const sample = primary.filter((_, i) => i % Math.max(1, Math.floor(primary.length / 5)) === 0).slice(0, 5);
  // Whole words of real names (entity search LIKE tokenises on separators: see the mapping's gaps).
  const words = [...new Set(sample.flatMap((item) => item.name.split(/[^A-Za-z]+/)).filter((word) => word.length >= 4))].slice(0, 4);
  for (const format of ['json', 'xml']) {
    const path = `${base}.${format}`;
    for (const [keyName, headers] of keys) for (const page of ['', '?page=1', '?page=2', '?page=3', '?page=4']) add(`${keyName} ${page}`, `${path}${page}`, headers);
    for (const word of [...words, words[0]!.toUpperCase(), "O'Brien", 'Checkout "', '\\', 'no-such-entity-anywhere', '%']) {
      add(`name ${word}`, `${path}?filter[name]=${encodeURIComponent(word)}`);
    }
    add('name page 2', `${path}?filter[name]=${encodeURIComponent(words[0]!)}&page=2`);
    const ids = sample.map((item) => item.id);
    add('ids raw commas', `${path}?filter[ids]=${ids.join(',')}`);
    add('ids encoded', `${path}?filter%5Bids%5D=${ids.join('%2C')}`);
    add('ids[] spelling', `${path}?${ids.map((id) => `filter[ids][]=${id}`).join('&')}`);
    add('ids of another account', `${path}?filter[ids]=${[secondary[0]!.id, ids[0]].join(',')}`);
    add('ids of another account, their key', `${path}?filter[ids]=${[secondary[0]!.id, ids[0]].join(',')}`, secondaryKey);
    add('ids unknown', `${path}?filter[ids]=1,2,3`);
    add('ids empty', `${path}?filter[ids]=`);
    add('ids with name', `${path}?filter[ids]=${ids.join(',')}&filter[name]=${encodeURIComponent(primary[0]!.name.slice(0, 3))}`);
    add('bad ids', `${path}?filter[ids]=1,abc`);
    add('bad page', `${path}?page=0`);
    add('far page', `${path}?page=40`);
    add('api_key parameter never echoed', `${path}?api_key=${DEMO_KEY}&page=2`);
    add('missing key', path, {});
    add('bad key', path, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
    add('account not allowed', path, { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add('multi pinned to primary', `${path}?page=2`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
    add('PUT is 405 with Allow', path, demo, 'PUT');
  }
  return cases;
}

function showCases(route: string, items: readonly Named[]): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo, method?: string) => cases.push({ route, name, path, headers, ...(method && { method }) });
  const primary = items.filter((item) => item.accountId === PRIMARY_ACCOUNT);
  const secondary = items.filter((item) => item.accountId === SECONDARY_ACCOUNT);
  const sample = primary.filter((_, i) => i % Math.max(1, Math.floor(primary.length / 10)) === 0).slice(0, 10);
  for (const format of ['json', 'xml']) {
    for (const item of sample) add(`show ${item.id}`, `/v2/key_transactions/${item.id}.${format}`);
    for (const item of secondary.slice(0, 2)) add(`show secondary ${item.id}`, `/v2/key_transactions/${item.id}.${format}`, secondaryKey);
    add('show of another account', `/v2/key_transactions/${secondary[0]!.id}.${format}`);
    add('show unknown', `/v2/key_transactions/123.${format}`);
    add('show non-numeric', `/v2/key_transactions/abc.${format}`);
    add('show zero', `/v2/key_transactions/0.${format}`);
    add('show huge', `/v2/key_transactions/99999999999999999999.${format}`);
    add('show bad key', `/v2/key_transactions/${sample[0]!.id}.${format}`, { 'X-Api-Key': 'nope' });
    add('show an app id', `/v2/key_transactions/${primary[0]!.id + 1}.${format}`);
    add('DELETE is 405 with Allow', `/v2/key_transactions/${sample[0]!.id}.${format}`, demo, 'DELETE');
  }
  return cases;
}

const ROUTES = ['browser-applications.list', 'key-transactions.list', 'key-transactions.show'];

const buildCorpus = (data: SandboxData): DifferentialCase[] => [
  ...listCases('browser-applications.list', '/v2/browser_applications', data.browserApps),
  ...listCases('key-transactions.list', '/v2/key_transactions', data.keyTransactions),
  ...showCases('key-transactions.show', data.keyTransactions),
];

describeDifferential('differential: key transactions and browser applications, gateway == legacy /v2', { apmApps: 450 }, (faces) => {
  it('has at least 30 requests per route, with pages beyond the first', () => {
    const corpus = buildCorpus(faces.legacy.data);
    for (const route of ROUTES) {
      const count = corpus.filter((c) => c.route === route).length;
      expect(count, route).toBeGreaterThanOrEqual(30);
      console.info(`differential corpus ${route}: ${count} requests`);
    }
    const data = faces.legacy.data;
    expect(data.keyTransactions.filter((kt) => kt.accountId === PRIMARY_ACCOUNT).length).toBeGreaterThan(400);
    expect(data.browserApps.filter((app) => app.accountId === PRIMARY_ACCOUNT).length).toBeGreaterThan(400);
    expect(data.browserApps.some((app) => app.servingApmApplicationId !== null)).toBe(true);
  });

  it.each(ROUTES)('%s answers every request of the corpus exactly as v2 would', async (route) => {
    const report = await faces.expectAlike(buildCorpus(faces.legacy.data).filter((c) => c.route === route));
    expect(report.statuses()).toEqual(expect.arrayContaining(route.endsWith('show') ? [200, 401, 404, 405] : [200, 401, 403, 405, 422]));
    // ~90 requests, each of a 200-item page through both faces: more than the default budget on a busy machine.
  }, 120_000);
});
