import { describe, expect, it } from 'vitest';
import { FLEET_EXTRA_HOSTS, defaultApiKeys, fleetApp, generateSandboxData, parseApiKeys } from '../../sandbox/data.ts';
import { decodeEntityGuid } from '../../src/v2/ids.ts';

const NOW = 1_750_000_000_000;
const data = generateSandboxData({ seed: 42, apmApps: 1000, now: NOW });

function decimals(value: number): number {
  return (String(value).split('.')[1] ?? '').length;
}

describe('generateSandboxData', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    expect(generateSandboxData({ seed: 42, apmApps: 1000, now: NOW })).toEqual(data);
    const other = generateSandboxData({ seed: 43, apmApps: 1000, now: NOW });
    expect(other.apps.map((app) => app.name)).not.toEqual(data.apps.map((app) => app.name));
  });

  it('creates both accounts, apmApps apps in the primary and 25 in the secondary', () => {
    expect(data.accounts).toEqual([
      { id: 1000001, name: 'Sandbox Primary' },
      { id: 1000002, name: 'Sandbox Secondary' },
    ]);
    expect(data.apps.filter((app) => app.accountId === 1000001)).toHaveLength(1000);
    expect(data.apps.filter((app) => app.accountId === 1000002)).toHaveLength(25);
    expect(data.keys).toEqual(defaultApiKeys());
  });

  it('keeps ids, names, host and instance ids unique and guids derived', () => {
    expect(new Set(data.apps.map((app) => app.id)).size).toBe(data.apps.length);
    expect(new Set(data.apps.map((app) => app.name)).size).toBe(data.apps.length);
    const instanceIds = data.apps.flatMap((app) => app.hosts.flatMap((host) => host.instances.map((instance) => instance.id)));
    // Host ids are the world's own row ids (one sequence), not derived from names.
    const hostIds = data.apps.flatMap((app) => app.hosts.map((host) => host.id));
    expect(new Set(hostIds).size).toBe(hostIds.length);
    expect(new Set(instanceIds).size).toBe(instanceIds.length);
    for (const app of data.apps) {
      expect(decodeEntityGuid(app.guid)).toEqual({ accountId: app.accountId, domain: 'APM', type: 'APPLICATION', domainId: String(app.id) });
      expect(app.hosts.length).toBeGreaterThanOrEqual(1);
      // One app (the fleet) has hundreds, so its host and instance lists fill several pages.
      expect(app.hosts.length).toBeLessThanOrEqual(app === fleetApp(data.apps) ? 4 + FLEET_EXTRA_HOSTS : 4);
      expect(new Set(app.hosts.map((host) => host.name)).size).toBe(app.hosts.length);
      for (const host of app.hosts) {
        expect(Number.isSafeInteger(host.id) && host.id > 0).toBe(true);
        expect(host.instances.length).toBeGreaterThanOrEqual(1);
        expect(host.instances.length).toBeLessThanOrEqual(3);
        for (const instance of host.instances) expect([0, 80, 8080, 3000]).toContain(instance.port);
      }
    }
  });

  it('produces the name shapes filters and quoting need, in both accounts', () => {
    for (const accountId of [1000001, 1000002]) {
      const names = data.apps.filter((app) => app.accountId === accountId).map((app) => app.name);
      expect(names.some((name) => name.toLowerCase().includes('checkout'))).toBe(true);
      expect(names.some((name) => name.includes('/'))).toBe(true);
      expect(names.some((name) => name.includes("'") && name.includes('\\'))).toBe(true);
    }
  });

  it('mixes reporting, severities, languages, browser data and policies in plausible proportions', () => {
    const share = (predicate: (app: (typeof data.apps)[number]) => boolean): number =>
      data.apps.filter(predicate).length / data.apps.length;
    expect(share((app) => app.reporting)).toBeGreaterThan(0.7);
    expect(share((app) => app.reporting)).toBeLessThan(0.9);
    expect(share((app) => app.browser !== null)).toBeGreaterThan(0.3);
    expect(share((app) => app.browser !== null)).toBeLessThan(0.5);
    expect(share((app) => app.alertPolicyId === null)).toBeGreaterThan(0.2);
    expect(share((app) => app.alertPolicyId === null)).toBeLessThan(0.4);
    expect(new Set(data.apps.map((app) => app.alertSeverity))).toEqual(new Set(['CRITICAL', 'WARNING', 'NOT_ALERTING', 'NOT_CONFIGURED']));
    expect(new Set(data.apps.map((app) => app.language))).toEqual(new Set(['java', 'python', 'ruby', 'nodejs', 'php', 'dotnet', 'go']));
  });

  it('keeps summaries null exactly when not reporting, with the documented ranges and decimals', () => {
    for (const app of data.apps) {
      expect(app.summary === null).toBe(!app.reporting);
      expect([0.1, 0.25, 0.5, 1, 2]).toContain(app.apdexTarget);
      expect(app.lastReportingChangeAt).toBeLessThan(NOW);
      expect(Number.isInteger(app.lastReportingChangeAt)).toBe(true);
      if (app.summary) {
        expect(app.summary.responseTimeMs).toBeGreaterThanOrEqual(1);
        expect(app.summary.responseTimeMs).toBeLessThanOrEqual(900);
        expect(decimals(app.summary.responseTimeMs)).toBeLessThanOrEqual(2);
        expect(decimals(app.summary.throughput)).toBeLessThanOrEqual(1);
        expect(app.summary.errorRate).toBeLessThanOrEqual(5);
        expect(decimals(app.summary.errorRate)).toBeLessThanOrEqual(2);
        expect(app.summary.apdexScore).toBeLessThanOrEqual(1);
        expect(decimals(app.summary.apdexScore)).toBeLessThanOrEqual(2);
      }
      if (app.browser) {
        for (const value of Object.values(app.browser)) expect(decimals(value)).toBeLessThanOrEqual(2);
      }
    }
  });

  it('rejects keys that refer to accounts the sandbox does not have', () => {
    expect(() => generateSandboxData({ seed: 1, apmApps: 1, now: NOW, apiKeys: new Map([['K', [42]]]) })).toThrow(
      'API key K refers to unknown account 42',
    );
  });
});

describe('parseApiKeys', () => {
  it('parses KEY=acct[,acct...];KEY2=acct with optional spaces and a trailing ;', () => {
    expect(parseApiKeys('A=1000001; B = 1000001, 1000002 ;')).toEqual(
      new Map([
        ['A', [1000001]],
        ['B', [1000001, 1000002]],
      ]),
    );
  });

  it.each([
    ['', 'API key list is empty'],
    ['A', 'Bad API key entry "A"'],
    ['=1', 'Bad API key entry "=1"'],
    ['A=', 'Bad API key entry "A="'],
    ['A=1;;B=2', 'Bad API key entry ""'],
    ['A=x', 'Bad account id "x" for API key A'],
    ['A=1,,2', 'Bad account id "" for API key A'],
    ['A=1;A=2', 'API key A is listed twice'],
  ])('rejects %j', (spec, message) => {
    expect(() => parseApiKeys(spec)).toThrow(message);
  });
});
