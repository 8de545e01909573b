import { expect, it } from 'vitest';
import { currentHosts } from '../../sandbox/hosts.ts';
import { fleetApp } from '../../sandbox/data.ts';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { TOPOLOGY_ID_PATHS, hostKey, idToken } from '../../test/support/derived-ids.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * Application hosts and instances: the gateway (one NerdGraph request: the app entity with its
 * instances and one NRQL summary faceted by host or realAgentId) must answer exactly as the
 * legacy face (current hosts, instances and REST summaries computed from the split rows):
 * status, content type, Link, body (lists without regard to order), only the mapping's gap
 * paths removed. Every route gets at least 30 requests.
 */
const DEMO = { 'X-Api-Key': DEMO_KEY };
const SECONDARY = { 'X-Api-Key': SECONDARY_KEY };
const PINNED_SECONDARY = { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) };

const instancesOf = (app: SandboxApp) => app.hosts.flatMap((host) => host.instances);

/** Apps that cover the interesting shapes: several hosts, Java ports, browser, not reporting. */
function pickApps(data: SandboxData): { primary: SandboxApp[]; secondary: SandboxApp[]; silent: SandboxApp } {
  const primary = data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
  const reporting = primary.filter((app) => app.reporting);
  const pick = (predicate: (app: SandboxApp) => boolean): SandboxApp => {
    const found = reporting.find(predicate);
    if (!found) throw new Error('the sandbox lacks an app shape the corpus needs');
    return found;
  };
  const chosen = new Set<SandboxApp>([
    pick((app) => app.hosts.length >= 3),
    pick((app) => app.hosts.some((host) => host.instances.length >= 2)),
    pick((app) => instancesOf(app).some((instance) => instance.port !== 0)),
    pick((app) => app.browser !== null),
    pick((app) => app.browser === null),
    pick((app) => app.alertSeverity === 'CRITICAL'),
  ]);
  const silent = primary.find((app) => !app.reporting && app.hosts.length > 0);
  if (!silent) throw new Error('the sandbox has no non-reporting app with hosts');
  const secondary = data.apps.filter((app) => app.accountId === SECONDARY_ACCOUNT && app.reporting).slice(0, 2);
  return { primary: [...chosen], secondary, silent };
}

function buildCorpus(data: SandboxData): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const { primary, secondary, silent } = pickApps(data);
  const foreign = secondary[0] as SandboxApp;
  const first = primary[0] as SandboxApp;
  const other = primary[1] as SandboxApp;

  const families = [
    // Host ids are each side's own: a host is named by its app and name (support/derived-ids.ts).
    { segment: 'hosts', list: 'applications.hosts.list', show: 'applications.hosts.show', idsOf: (app: SandboxApp) => app.hosts.map((host) => idToken('host', hostKey(app.id, host.name))) },
    { segment: 'instances', list: 'applications.instances.list', show: 'applications.instances.show', idsOf: (app: SandboxApp) => instancesOf(app).map((instance) => String(instance.id)) },
  ] as const;

  for (const format of ['json', 'xml']) {
    for (const { segment, list, show, idsOf } of families) {
      // The pages of one listing are compared together: each side orders hosts by its own ids.
      const add = (route: string, name: string, path: string, headers: Record<string, string> = DEMO, listing?: string) =>
        cases.push({ route, name: `${segment} ${format} ${name}`, path, headers, ...(listing && { listing: `${segment} ${format} ${listing}`, listKey: `application_${segment}` }) });
      const listPath = (app: SandboxApp | number | string, query = '') => `/v2/applications/${typeof app === 'object' ? app.id : app}/${segment}.${format}${query}`;
      const showPath = (app: SandboxApp | number | string, id: number | string) =>
        `/v2/applications/${typeof app === 'object' ? app.id : app}/${segment}/${id}.${format}`;

      // Lists: every app shape, filters, pages, errors, other accounts.
      for (const app of primary) add(list, `list ${app.id}`, listPath(app));
      for (const app of secondary) add(list, `list secondary ${app.id}`, listPath(app), SECONDARY);
      add(list, 'list pinned to secondary', listPath(foreign), PINNED_SECONDARY);
      add(list, 'list not reporting', listPath(silent));
      add(list, 'list page 1', listPath(first, '?page=1'));
      add(list, 'list page 2 (past the end)', listPath(first, '?page=2'));
      add(list, 'list page 3 with a filter', listPath(first, '?page=3&filter[hostname]=a'));
      // The fleet app: hundreds of hosts and instances, so Link paging is real.
      const fleet = fleetApp(data.apps);
      if (!fleet) throw new Error('the sandbox has no fleet app');
      for (const page of ['', '?page=2', '?page=3', '?page=4']) add(list, `fleet list ${page}`, listPath(fleet, page), DEMO, 'fleet');
      for (const page of ['', '?page=2']) add(list, `fleet filtered ${page}`, listPath(fleet, `?filter[hostname]=fleet-1${page.replace('?', '&')}`), DEMO, 'fleet filtered');
      const everyOther = idsOf(fleet).filter((_, i) => i % 2 === 0).join(',');
      for (const page of ['', '&page=2']) add(list, `fleet ids across pages ${page}`, listPath(fleet, `?filter[ids]=${everyOther}${page}`), DEMO, 'fleet ids');
      add(show, 'fleet show', showPath(fleet, idsOf(fleet).at(-1) as string));
      const hostName = first.hosts[0]?.name ?? 'host';
      add(list, 'hostname substring', listPath(first, `?filter[hostname]=${encodeURIComponent(hostName.slice(1, 5))}`));
      add(list, 'hostname upper case', listPath(first, `?filter[hostname]=${encodeURIComponent(hostName.toUpperCase())}`));
      add(list, 'hostname no match', listPath(first, '?filter[hostname]=no-such-host'));
      add(list, 'hostname quote and percent', listPath(first, `?filter[hostname]=${encodeURIComponent("'%\\")}`));
      const ids = idsOf(first);
      add(list, 'ids raw commas', listPath(first, `?filter[ids]=${ids.slice(0, 2).join(',')}`));
      add(list, 'ids encoded', listPath(first, `?filter%5Bids%5D=${ids.slice(0, 2).join('%2C')}`));
      add(list, 'ids[] spelling', listPath(first, `?${ids.slice(0, 2).map((id) => `filter[ids][]=${id}`).join('&')}`));
      add(list, 'ids of another app', listPath(first, `?filter[ids]=${[...idsOf(other), ids[0]].join(',')}`));
      add(list, 'ids and hostname', listPath(first, `?filter[ids]=${ids.join(',')}&filter[hostname]=${encodeURIComponent(hostName)}`));
      add(list, 'ids empty', listPath(first, '?filter[ids]='));
      add(list, 'bad ids', listPath(first, '?filter[ids]=1,abc'));
      add(list, 'bad page', listPath(first, '?page=0'));
      add(list, 'bad page on an unknown app', listPath(123, '?page=x'));
      add(list, 'control character in hostname', listPath(first, '?filter[hostname]=a%01b'));
      add(list, 'unknown app', listPath(123));
      add(list, 'app of another account', listPath(foreign));
      add(list, 'malformed app id', listPath('abc'));
      add(list, 'huge app id', listPath('99999999999999999999'));
      add(list, 'bad key', listPath(first), { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
      add(list, 'account the key may not use', listPath(first), { ...DEMO, 'X-Account-Id': String(SECONDARY_ACCOUNT) });

      // Shows: every host/instance of some apps, then each kind of wrong id.
      for (const app of primary.slice(0, 4)) for (const id of idsOf(app)) add(show, `show ${app.id}/${id}`, showPath(app, id));
      for (const app of secondary) for (const id of idsOf(app).slice(0, 2)) add(show, `show secondary ${app.id}/${id}`, showPath(app, id), SECONDARY);
      add(show, 'show pinned to secondary', showPath(foreign, idsOf(foreign)[0] as string), PINNED_SECONDARY);
      add(show, 'unknown id', showPath(first, 123));
      add(show, 'id of another app', showPath(first, idsOf(other)[0] as string));
      add(show, 'id of the foreign app under its app', showPath(foreign, idsOf(foreign)[0] as string));
      add(show, 'malformed id', showPath(first, 'abc'));
      add(show, 'zero id', showPath(first, '0'));
      add(show, 'malformed app id', showPath('abc', ids[0] as string));
      add(show, 'unknown app', showPath(123, ids[0] as string));
      add(show, 'unknown app, malformed id', showPath(123, 'abc'));
      add(show, 'id of a non-reporting app', showPath(silent, idsOf(silent)[0] as string));
      add(show, 'bad key', showPath(first, ids[0] as string), { 'X-Api-Key': 'nope' });
      add(show, 'account the key may not use', showPath(foreign, idsOf(foreign)[0] as string), { ...DEMO, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    }
  }
  return cases;
}

describeDifferential('differential: application hosts and instances, gateway via NerdGraph == legacy /v2', { apmApps: 120, ids: TOPOLOGY_ID_PATHS }, (faces) => {
  it('has at least 30 requests per route', () => {
    const perRoute = new Map<string, number>();
    for (const testCase of buildCorpus(faces.legacy.data)) perRoute.set(testCase.route as string, (perRoute.get(testCase.route as string) ?? 0) + 1);
    expect([...perRoute.keys()].sort()).toEqual(['applications.hosts.list', 'applications.hosts.show', 'applications.instances.list', 'applications.instances.show']);
    for (const count of perRoute.values()) expect(count).toBeGreaterThanOrEqual(30);
    console.info(`topology corpus: ${JSON.stringify(Object.fromEntries(perRoute))}`);
  });

  it('answers every request exactly as v2 would', async () => {
    const report = await faces.expectAlike(buildCorpus(faces.legacy.data));
    expect(report.statuses()).toEqual(expect.arrayContaining([200, 401, 403, 404, 422]));
    // The corpus really compares summaries, browser summaries and non-empty lists.
    const answers = report.outcomes.map((outcome) => outcome.legacyText);
    expect(answers.filter((text) => text.includes('application_summary')).length).toBeGreaterThan(40);
    expect(answers.filter((text) => text.includes('end_user_summary')).length).toBeGreaterThan(10);
    expect(answers.filter((text) => /"application_(hosts|instances)":\[\{/.test(text)).length).toBeGreaterThan(20);
  }, 240_000);

  it('lists no host or instance of a non-reporting app, and the fleet app fills three pages of each', () => {
    const data = faces.legacy.data;
    expect(data.apps.filter((app) => !app.reporting).every((app) => currentHosts(app).length === 0)).toBe(true);
    const fleet = fleetApp(data.apps);
    expect(fleet?.hosts.length).toBeGreaterThan(400);
    expect(instancesOf(fleet as SandboxApp).length).toBeGreaterThan(400);
  });
});
