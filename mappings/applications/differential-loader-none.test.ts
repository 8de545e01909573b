import { expect, it } from 'vitest';
import { switchedOffLater } from '../../sandbox/browser-loader.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { TOPOLOGY_ID_PATHS } from '../../test/support/derived-ids.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT } from '../../test/support/harness.ts';

/**
 * An APM app whose browser loader is NONE while its browser app and page views remain (what the
 * probe browser-side-only-while-loader-on found on a real account; the sandbox's behaviour
 * browserSideOnlyWhileLoaderOn off does the same): v2 says settings.enable_real_user_monitoring
 * false, and still shows an end_user_summary. The list must say what v2 and the show say, or a
 * client that lists, then PUTs back what it read, turns browser monitoring on.
 */
const HEADERS = { 'X-Api-Key': DEMO_KEY };

let switchedOff: SandboxApp[] = [];

interface Listed {
  id: number;
  name: string;
  settings: { app_apdex_threshold: number; end_user_apdex_threshold: number; enable_real_user_monitoring: boolean; use_server_side_config: boolean };
  end_user_summary?: unknown;
}

describeDifferential(
  'differential: the browser side of an app whose loader is NONE',
  {
    apmApps: 240,
    ids: TOPOLOGY_ID_PATHS,
    // As the sandbox's behaviour browserSideOnlyWhileLoaderOn=false: the loader switched off after the browser app was made.
    prepare: ({ upstream }) => {
      switchedOff = upstream.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT && switchedOffLater(app));
      for (const app of switchedOff) app.browserLoader = 'NONE';
    },
  },
  (faces) => {
    const corpus = (): DifferentialCase[] => {
      const cases: DifferentialCase[] = [];
      for (const format of ['json', 'xml']) {
        for (const query of ['', '?page=2', '?exclude_links=true', '?exclude_links=true&page=2']) {
          cases.push({ name: `list ${format} ${query}`, path: `/v2/applications.${format}${query}`, route: 'applications.list' });
        }
        const ids = switchedOff.slice(0, 40).map((app) => app.id);
        cases.push({ name: `list ${format} of the NONE apps`, path: `/v2/applications.${format}?filter[ids]=${ids.join(',')}`, route: 'applications.list' });
        for (const app of switchedOff.slice(0, 4)) cases.push({ name: `show ${format} ${app.id}`, path: `/v2/applications/${app.id}.${format}`, route: 'applications.show' });
      }
      return cases;
    };

    it('has apps with the loader NONE and a browser app with page views, in the first pages', () => {
      expect(switchedOff.length).toBeGreaterThan(5);
      expect(switchedOff.every((app) => app.browser !== null && app.reporting !== undefined)).toBe(true);
    });

    it('lists and shows them as v2 does: browser monitoring off, the end-user summary still there', async () => {
      await faces.expectAlike(corpus());
      const response = await faces.gateway.app.request(`/v2/applications.json?filter[ids]=${switchedOff.map((app) => app.id).join(',')}`, { headers: HEADERS });
      const listed = ((await response.json()) as { applications: Listed[] }).applications;
      expect(listed.length).toBe(switchedOff.length);
      for (const item of listed) expect(item.settings.enable_real_user_monitoring, String(item.id)).toBe(false);
      // Page views remain: the summary a reporting app's browser traffic gives is still shown.
      expect(listed.some((item) => item.end_user_summary !== undefined)).toBe(true);
    }, 120_000);

    it('a list-then-PUT echo of every NONE app leaves browser monitoring off', async () => {
      const response = await faces.gateway.app.request(`/v2/applications.json?filter[ids]=${switchedOff.map((app) => app.id).join(',')}`, { headers: HEADERS });
      const listed = ((await response.json()) as { applications: Listed[] }).applications;
      for (const item of listed) {
        const put = await faces.gateway.app.request(`/v2/applications/${item.id}.json`, {
          method: 'PUT',
          headers: { ...HEADERS, 'Content-Type': 'application/json' },
          body: JSON.stringify({ application: { name: item.name, settings: item.settings } }),
        });
        expect(put.status, String(item.id)).toBe(200);
        expect(((await put.json()) as { application: Listed }).application.settings.enable_real_user_monitoring).toBe(false);
      }
      for (const app of switchedOff) expect(app.browserLoader, String(app.id)).toBe('NONE');
      // And the legacy face, over the same world, still says off.
      const legacy = await fetch(`${faces.legacyUrl}/v2/applications/${switchedOff[0]!.id}.json`, { headers: HEADERS });
      expect(((await legacy.json()) as { application: Listed }).application.settings.enable_real_user_monitoring).toBe(false);
    }, 120_000);
  },
);
