import { expect, it } from 'vitest';
import type { SandboxData, SandboxMobileApp } from '../../sandbox/model.ts';
import { canonical, withoutGaps } from '../../test/support/compare.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';
import { httpSend } from '../../test/support/http.ts';

/**
 * GET /v2/mobile_applications and /v2/mobile_applications/{id}: the gateway (through the
 * sandbox's NerdGraph face) answers as the sandbox's legacy face does, request for request,
 * with only the mappings' documented gap paths removed.
 */

const demo = { 'X-Api-Key': DEMO_KEY };

function listCorpus(data: SandboxData): DifferentialCase[] {
  const primary = data.mobileApps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const secondary = data.mobileApps.filter((a) => a.accountId === SECONDARY_ACCOUNT);
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo) => cases.push({ name, path, headers, route: 'mobile-applications.list' });
  const keys: Array<[string, Record<string, string>]> = [
    ['demo', demo],
    ['secondary', { 'X-Api-Key': SECONDARY_KEY }],
    ['multi pinned to secondary', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) }],
    ['multi pinned to primary', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) }],
  ];
  const sample = (list: SandboxMobileApp[], n: number) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n);
  const ids = sample(primary, 5).map((a) => a.id);
  for (const format of ['json', 'xml']) {
    for (const [keyName, headers] of keys) {
      for (const page of ['', '?page=1', '?page=2', '?page=3', '?page=4']) add(`${keyName} list ${page}`, `/v2/mobile_applications.${format}${page}`, headers);
    }
    for (const fragment of [...sample(primary, 4).map((a) => a.name.slice(2, 7)), 'MOBILE', 'checkout', "o'brien", '\\', '/', 'nothing-matches-this', '%'])
      add(`name ${fragment}`, `/v2/mobile_applications.${format}?filter[name]=${encodeURIComponent(fragment)}`);
    add('name, page 2', `/v2/mobile_applications.${format}?filter[name]=mobile&page=2`);
    add('ids raw commas', `/v2/mobile_applications.${format}?filter[ids]=${ids.join(',')}`);
    add('ids encoded', `/v2/mobile_applications.${format}?filter%5Bids%5D=${ids.join('%2C')}`);
    add('ids[] spelling', `/v2/mobile_applications.${format}?${ids.map((id) => `filter[ids][]=${id}`).join('&')}`);
    add('ids of another account', `/v2/mobile_applications.${format}?filter[ids]=${[...secondary.slice(0, 2).map((a) => a.id), ids[0]].join(',')}`);
    add('ids unknown', `/v2/mobile_applications.${format}?filter[ids]=1,2,3`);
    add('ids empty', `/v2/mobile_applications.${format}?filter[ids]=`);
    add('ids with name', `/v2/mobile_applications.${format}?filter[ids]=${ids.join(',')}&filter[name]=${encodeURIComponent(primary[0]!.name.slice(0, 3))}`);
    add('bad ids', `/v2/mobile_applications.${format}?filter[ids]=1,abc`);
    add('bad page', `/v2/mobile_applications.${format}?page=0`);
    add('control character in name', `/v2/mobile_applications.${format}?filter[name]=a%01b`);
    add('missing key', `/v2/mobile_applications.${format}`, {});
    add('bad key', `/v2/mobile_applications.${format}`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
    add('account not allowed', `/v2/mobile_applications.${format}`, { ...demo, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
  }
  return cases;
}

function showCorpus(data: SandboxData): DifferentialCase[] {
  const primary = data.mobileApps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const secondary = data.mobileApps.filter((a) => a.accountId === SECONDARY_ACCOUNT);
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo) => cases.push({ name, path, headers, route: 'mobile-applications.show' });
  const reporting = primary.filter((a) => a.reporting).slice(0, 6);
  const stopped = primary.filter((a) => !a.reporting).slice(0, 3);
  for (const format of ['json', 'xml']) {
    for (const app of [...reporting, ...stopped]) add(`show ${app.id}`, `/v2/mobile_applications/${app.id}.${format}`);
    for (const app of secondary.slice(0, 2)) add(`show secondary ${app.id}`, `/v2/mobile_applications/${app.id}.${format}`, { 'X-Api-Key': SECONDARY_KEY });
    add('show pinned to secondary', `/v2/mobile_applications/${secondary[0]!.id}.${format}`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add('show of another account', `/v2/mobile_applications/${secondary[0]!.id}.${format}`);
    add('show an APM app id', `/v2/mobile_applications/${data.apps[0]!.id}.${format}`);
    add('show unknown', `/v2/mobile_applications/123.${format}`);
    add('show non-numeric', `/v2/mobile_applications/abc.${format}`);
    add('show zero', `/v2/mobile_applications/0.${format}`);
    add('show huge', `/v2/mobile_applications/99999999999999999999.${format}`);
    add('show bad key', `/v2/mobile_applications/${primary[0]!.id}.${format}`, { 'X-Api-Key': 'nope' });
  }
  return cases;
}

// 450 APM apps give 585 mobile apps in the primary account: three pages of 200.
describeDifferential('differential: mobile applications, gateway via NerdGraph == sandbox legacy /v2', { apmApps: 450 }, (faces) => {
  it('the list answers every request of its corpus as v2 would', async () => {
    const corpus = listCorpus(faces.legacy.data);
    expect(corpus.length).toBeGreaterThanOrEqual(30);
    console.info(`mobile list differential corpus: ${corpus.length} requests`);
    const report = await faces.expectAlike(corpus);
    expect(report.statuses()).toEqual(expect.arrayContaining([200, 401, 403, 422]));
  }, 120_000);

  it('the show answers every request of its corpus as v2 would', async () => {
    const corpus = showCorpus(faces.legacy.data);
    expect(corpus.length).toBeGreaterThanOrEqual(30);
    console.info(`mobile show differential corpus: ${corpus.length} requests`);
    const report = await faces.expectAlike(corpus);
    expect(report.statuses()).toEqual(expect.arrayContaining([200, 401, 404]));
  }, 120_000);

  it('the corpus really pages and really holds summaries, so the comparison is not vacuous', async () => {
    const { gateway: first } = await faces.send({ name: 'page 2', path: '/v2/mobile_applications.json?page=2' });
    const body = first.body as { applications: Array<Record<string, unknown>> };
    expect(body.applications).toHaveLength(200);
    expect(first.link).toMatch(/^first .* \| prev .* \| next .* \| last /);
    expect(body.applications.some((app) => app.mobile_summary !== undefined && app.crash_summary !== undefined)).toBe(true);
    expect(body.applications.some((app) => app.reporting === false && app.mobile_summary === undefined)).toBe(true);
  });

  it('mobile apps created through either face appear in later lists and shows of both faces', async () => {
    const json = { ...demo, 'Content-Type': 'application/json' };
    const viaGateway = await httpSend(`${faces.gatewayUrl}/v2/mobile_applications.json`, { method: 'POST', headers: json, body: JSON.stringify({ mobile_application: { name: 'Created Via Gateway' } }) });
    expect(viaGateway.status).toBe(201);
    const viaLegacy = await httpSend(`${faces.legacyUrl}/v2/mobile_applications.json`, { method: 'POST', headers: json, body: JSON.stringify({ mobile_application: { name: 'Created Via Legacy' } }) });
    expect(viaLegacy.status).toBe(201);
    const createdIds = [
      ((await viaGateway.json()) as { application: { id: number } }).application.id,
      ((await viaLegacy.json()) as { application: { id: number } }).application.id,
    ];
    const paths = [
      ...createdIds.flatMap((id) => [`/v2/mobile_applications/${id}.json`, `/v2/mobile_applications/${id}.xml`]),
      `/v2/mobile_applications.json?filter[ids]=${createdIds.join(',')}`,
      '/v2/mobile_applications.xml?filter[name]=created%20via',
    ];
    for (const path of paths) {
      const gaps = faces.gapsOf(path.includes('filter') ? 'mobile-applications.list' : 'mobile-applications.show');
      const { gateway: gatewayAnswer, legacy: legacyAnswer } = await faces.send({ name: path, path });
      expect(gatewayAnswer.status, path).toBe(200);
      expect(canonical(withoutGaps(gatewayAnswer.body, gaps)), path).toEqual(canonical(withoutGaps(legacyAnswer.body, gaps)));
    }
    const { gateway: listed } = await faces.send({ name: 'created', path: `/v2/mobile_applications.json?filter[ids]=${createdIds.join(',')}` });
    expect(listed.body).toEqual({
      applications: expect.arrayContaining([
        { id: createdIds[0], name: 'Created Via Gateway', health_status: 'gray', reporting: false },
        { id: createdIds[1], name: 'Created Via Legacy', health_status: 'gray', reporting: false },
      ]),
    });
  });
});
