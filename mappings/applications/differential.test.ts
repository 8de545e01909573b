import { expect, it } from 'vitest';
import type { SandboxData } from '../../sandbox/model.ts';
import { TOPOLOGY_ID_PATHS } from '../../test/support/derived-ids.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * The gateway's answer through the sandbox's NerdGraph face must equal the sandbox's own
 * legacy /v2 answer (the REST v2 rules applied to the same data), request for request:
 * status, content type, Link header and body, lists compared without regard to order, with
 * only the fields the mapping declares as known gaps left out. Host ids in the application
 * links are each side's own (support/derived-ids.ts).
 */

function buildCorpus(data: SandboxData): DifferentialCase[] {
  const primary = data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const secondary = data.apps.filter((a) => a.accountId === SECONDARY_ACCOUNT);
  const keys: Array<[string, Record<string, string>]> = [
    ['demo', { 'X-Api-Key': DEMO_KEY }],
    ['demo via Api-Key', { 'Api-Key': DEMO_KEY }],
    ['secondary', { 'X-Api-Key': SECONDARY_KEY }],
    ['multi pinned to secondary', { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) }],
  ];
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string>, route = 'applications.list') => cases.push({ name, path, headers, route });
  const addForm = (name: string, path: string, body: string) =>
    cases.push({ name, path, headers: { 'X-Api-Key': DEMO_KEY, 'Content-Type': 'application/x-www-form-urlencoded' }, route: 'applications.list', body });

  const sample = (list: typeof primary, n: number) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n);
  const languages = [...new Set(data.apps.map((a) => a.language))];
  const nameFragments = [
    ...sample(primary, 6).map((a) => a.name.slice(2, 7)),
    ...sample(primary, 3).map((a) => a.name.toUpperCase().slice(0, 4)),
    'checkout',
    "'",
    '\\',
    '/',
    'no-such-application-anywhere',
    '%',
  ];

  const reportingHosts = primary.filter((a) => a.reporting).flatMap((a) => a.hosts.map((h) => h.name));
  const hostFragments = [
    ...sample(primary.filter((a) => a.reporting), 4).map((a) => a.hosts[0]!.name),
    ...sample(primary.filter((a) => a.reporting), 3).map((a) => a.hosts.at(-1)!.name.toUpperCase().slice(2, 9)),
    reportingHosts[5]!.slice(0, -1),
    'WORKER',
    'Worker-1',
    '.example.internal',
    '%',
    '_',
    'worker_',
    '%worker%',
    "'",
    "ip-10'",
    '\\',
    'no-such-host',
    // A host of a non-reporting app: v2 lists only current hosts.
    primary.find((a) => !a.reporting && a.hosts.length > 0)!.hosts[0]!.name,
  ];
  const hostIds = primary.filter((a) => a.reporting).slice(0, 3).map((a) => a.id);
  const secondaryHost = secondary.find((a) => a.reporting && a.hosts.length > 0)!.hosts[0]!.name;

  for (const format of ['json', 'xml']) {
    for (const [keyName, headers] of keys) {
      for (const page of ['', '?page=1', '?page=2', '?page=3', '?page=4']) add(`${keyName} list ${page}`, `/v2/applications.${format}${page}`, headers);
    }
    const demo = keys[0]![1];
    for (const fragment of nameFragments) add(`name ${fragment}`, `/v2/applications.${format}?filter[name]=${encodeURIComponent(fragment)}`, demo);
    for (const language of languages) {
      add(`language ${language}`, `/v2/applications.${format}?filter[language]=${language}`, demo);
      add(`language ${language} page 2`, `/v2/applications.${format}?filter[language]=${language}&page=2`, demo);
    }
    const ids = sample(primary, 5).map((a) => a.id);
    const foreign = secondary.slice(0, 2).map((a) => a.id);
    add('ids raw commas', `/v2/applications.${format}?filter[ids]=${ids.join(',')}`, demo);
    add('ids encoded', `/v2/applications.${format}?filter%5Bids%5D=${ids.join('%2C')}`, demo);
    add('ids[] spelling', `/v2/applications.${format}?${ids.map((id) => `filter[ids][]=${id}`).join('&')}`, demo);
    add('ids of another account', `/v2/applications.${format}?filter[ids]=${[...foreign, ids[0]].join(',')}`, demo);
    add('ids unknown', `/v2/applications.${format}?filter[ids]=1,2,3`, demo);
    add('ids empty', `/v2/applications.${format}?filter[ids]=`, demo);
    add('ids only commas', `/v2/applications.${format}?filter[ids]=,,&filter[name]=a`, demo);
    addForm('encoded non-ASCII form body', `/v2/applications.${format}`, 'note=%E2%82%AC&x=100%25&filter[name]=%20');
    addForm('raw non-ASCII form body, stray %', `/v2/applications.${format}`, 'note=€é&x=100%&filter[name]=+');
    add('ids with name', `/v2/applications.${format}?filter[ids]=${ids.join(',')}&filter[name]=${encodeURIComponent(primary[0]!.name.slice(0, 3))}`, demo);
    add('ids and language', `/v2/applications.${format}?filter[ids]=${ids.join(',')}&filter[language]=${languages[0]}`, demo);
    addForm('form body name', `/v2/applications.${format}`, 'filter%5Bname%5D=%20');
    addForm('form body page 2', `/v2/applications.${format}?page=2`, 'filter[name]=+&exclude_links=true');
    addForm('form body ids', `/v2/applications.${format}`, `filter[ids]=${ids.join('%2C')}`);
    addForm('form body bad ids', `/v2/applications.${format}`, 'filter[ids]=x');
    add('name with ; and ,', `/v2/applications.${format}?filter[name]=${encodeURIComponent(' ')};x,y&page=1`, demo);
    add('api_key parameter never echoed', `/v2/applications.${format}?api_key=${DEMO_KEY}`, demo);
    add('bad ids', `/v2/applications.${format}?filter[ids]=1,abc`, demo);
    add('bad page', `/v2/applications.${format}?page=0`, demo);
    add('bad language', `/v2/applications.${format}?filter[language]=${encodeURIComponent('java; DROP')}`, demo);
    // filter[host]: v2's case-insensitive substring of a current host name; LIKE's % and _ and quotes are plain text.
    for (const fragment of hostFragments) {
      add(`host ${fragment}`, `/v2/applications.${format}?filter[host]=${encodeURIComponent(fragment)}`, demo);
    }
    for (const page of ['2', '3', '4']) add(`host ip-10 page ${page}`, `/v2/applications.${format}?filter[host]=IP-10&page=${page}`, demo);
    add('host with ids', `/v2/applications.${format}?filter[host]=worker&filter[ids]=${[...ids, ...hostIds].join(',')}`, demo);
    add('host with name', `/v2/applications.${format}?filter[host]=example&filter[name]=${encodeURIComponent(primary[0]!.name.slice(0, 3))}`, demo);
    add('host with language', `/v2/applications.${format}?filter[host]=ip&filter[language]=${languages[0]}`, demo);
    add('host, exclude_links', `/v2/applications.${format}?filter[host]=worker&exclude_links=true`, demo);
    add('host of another account', `/v2/applications.${format}?filter[host]=${encodeURIComponent(secondaryHost)}`, demo);
    add('host, secondary key', `/v2/applications.${format}?filter[host]=${encodeURIComponent(secondaryHost)}`, { 'X-Api-Key': SECONDARY_KEY });
    add('host, multi pinned to secondary', `/v2/applications.${format}?filter[host]=ip-10&page=2`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add('host control character', `/v2/applications.${format}?filter[host]=a%01b`, demo);
    add('host too long', `/v2/applications.${format}?filter[host]=${'h'.repeat(256)}`, demo);
    add('host empty', `/v2/applications.${format}?filter[host]=`, demo);
    addForm('host form body', `/v2/applications.${format}`, 'filter%5Bhost%5D=WORKER&page=1');
    for (const value of ['true', '1', 'false', 'maybe']) {
      add(`exclude_links=${value}`, `/v2/applications.${format}?exclude_links=${value}`, demo);
      add(`exclude_links=${value} page 3`, `/v2/applications.${format}?exclude_links=${value}&page=3`, demo);
    }
    add('missing key', `/v2/applications.${format}`, {});
    add('bad key', `/v2/applications.${format}`, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
    add('multi pinned to primary', `/v2/applications.${format}`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
    add('account not allowed', `/v2/applications.${format}`, { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });

    const showApps = [
      ...sample(primary, 8),
      ...primary.filter((a) => a.browser !== null).slice(0, 3),
      ...primary.filter((a) => !a.reporting).slice(0, 2),
      ...secondary.slice(0, 2),
    ];
    for (const app of showApps) {
      const headers = app.accountId === PRIMARY_ACCOUNT ? demo : { 'X-Api-Key': SECONDARY_KEY };
      add(`show ${app.id}`, `/v2/applications/${app.id}.${format}`, headers, 'applications.show');
    }
    add('show of another account', `/v2/applications/${secondary[0]!.id}.${format}`, demo, 'applications.show');
    add('show unknown', `/v2/applications/123.${format}`, demo, 'applications.show');
    add('show non-numeric', `/v2/applications/abc.${format}`, demo, 'applications.show');
    add('show huge', `/v2/applications/99999999999999999999.${format}`, demo, 'applications.show');
    add('show bad key', `/v2/applications/${primary[0]!.id}.${format}`, { 'X-Api-Key': 'nope' }, 'applications.show');
  }
  return cases;
}

// Both sides over real HTTP, so GET form bodies reach them as clients send them.
describeDifferential('differential: gateway via NerdGraph == sandbox legacy /v2', { apmApps: 450, ids: TOPOLOGY_ID_PATHS }, (faces) => {
  it('has a corpus of at least 100 application requests', () => {
    const corpus = buildCorpus(faces.legacy.data);
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    console.info(`differential corpus: ${corpus.length} requests`);
  });

  it('answers every request of the corpus exactly as v2 would', async () => {
    const report = await faces.expectAlike(buildCorpus(faces.legacy.data));
    // The corpus really covers successes, client errors and auth failures.
    expect(report.statuses()).toEqual(expect.arrayContaining([200, 401, 403, 404, 422]));
    // Not a timed assertion: a bound for ~270 sequential requests on both faces on a busy machine.
  }, 120_000);
});
