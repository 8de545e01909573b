import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../../sandbox/server.ts';
import type { RouteMode } from '../../../src/ops/route-modes.ts';
import { FIXED_NOW, PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { createModesGateway } from '../../support/modes.ts';
import { notificationsOf } from '../../../sandbox/notifications/store.ts';
import { allIssuesOf } from '../../../sandbox/ai-issues.ts';
import { legacyAlertId } from '../../../sandbox/legacy/ai-issues.ts';
import { legacyChannelId } from '../../../sandbox/legacy/notifications.ts';
import { policyWorkflowName, channelV2Id } from '../../../mappings/alerts-channels/channel-config.ts';
import { alertV2Id } from '../../../mappings/alerts-issues/alert-id.ts';

/**
 * "No write is ever executed twice", counted where it would happen: in the sandbox, whose two
 * faces share one account and count every write either of them executes (sandbox.writes()).
 * Every v2 write route, in every mode, through the gateway: exactly one write, on the side the
 * mode names, and still exactly one once the shadow work (dry runs) has finished.
 */
const KEY = 'NRAK-WRITESONCE0000000000000000000';
const JSON_HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };
/** The translated alert routes New Relic keeps alive are passed through unless a rule names them (mapping.passthroughByDefault). */
const ALERT_RULES = (mode: RouteMode): string => `/v2/alerts_policies*=${mode};/v2/alerts_nrql_conditions*=${mode};DELETE /v2/alerts_*conditions/*=${mode}`;

interface WriteCase {
  name: string;
  /** Built per mode, so each mode writes to its own application, deployment or name. */
  request(mode: RouteMode): { method: string; path: string; headers: Record<string, string>; body: string };
  /** Routes New Relic keeps alive are passed through in every mode. */
  passthroughOnly?: boolean;
  /** Refused by the translation (v2 error, nothing written) where it answers. */
  untranslated?: boolean;
  /** Mutations the translation sends for the one v2 write (a chained write: channel create is a destination and a channel). */
  translatedWrites?: number;
}

describe('every write route, in every mode: executed exactly once, on one side', () => {
  let sandbox: Sandbox;
  let server: { url: string; close: () => Promise<void> };
  const modes: RouteMode[] = ['translate', 'passthrough', 'compare', 'candidate'];
  // Per mode: a reporting app (deployments, updates), a silent one (delete), a deployment to delete.
  const fixtures = new Map<RouteMode, { app: number; silent: number; deployment: number }>();
  // alerts_policies: per mode a policy to rename and one to delete, none used by the channel fixtures.
  const policyFixtures = new Map<RouteMode, { renamed: number; doomed: number }>();
  // alerts_channels: per mode a channel to delete, a policy without channels to link one to, and a policy's linked channel to unlink.
  const channelFixtures = new Map<RouteMode, { doomed: number; bare: number; linkable: number; policy: number; linked: number }>();
  // Per mode: an open alert incident to acknowledge and another to close.
  const incidents = new Map<RouteMode, { acknowledge: number; close: number }>();
  // Per mode: NRQL conditions to update and to delete, and an APM condition to delete (condition ids are one number on both sides).
  const conditions = new Map<RouteMode, { update: number; delete: number; apm: number }>();
  const cases: WriteCase[] = [
    {
      name: 'POST deployments',
      request: (mode) => ({ method: 'POST', path: `/v2/applications/${fixtures.get(mode)?.app}/deployments.json`, headers: JSON_HEADERS, body: JSON.stringify({ deployment: { revision: `once-${mode}` } }) }),
    },
    {
      name: 'DELETE deployment',
      untranslated: true,
      request: (mode) => {
        const f = fixtures.get(mode);
        return { method: 'DELETE', path: `/v2/applications/${f?.app}/deployments/${f?.deployment}.json`, headers: JSON_HEADERS, body: '' };
      },
    },
    {
      name: 'PUT application',
      request: (mode) => ({ method: 'PUT', path: `/v2/applications/${fixtures.get(mode)?.app}.json`, headers: JSON_HEADERS, body: JSON.stringify({ application: { settings: { app_apdex_threshold: 0.7 } } }) }),
    },
    {
      name: 'DELETE application',
      request: (mode) => ({ method: 'DELETE', path: `/v2/applications/${fixtures.get(mode)?.silent}.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'POST mobile application',
      request: (mode) => ({ method: 'POST', path: '/v2/mobile_applications.json', headers: JSON_HEADERS, body: JSON.stringify({ mobile_application: { name: `once mobile ${mode}` } }) }),
    },
    {
      name: 'POST browser application',
      request: (mode) => ({ method: 'POST', path: '/v2/browser_applications.json', headers: JSON_HEADERS, body: JSON.stringify({ browser_application: { name: `once browser ${mode}` } }) }),
    },
    {
      name: 'POST v0 deployments.xml',
      request: (mode) => ({
        method: 'POST',
        path: '/deployments.xml',
        headers: { 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded' },
        body: `deployment[application_id]=${fixtures.get(mode)?.app}&deployment[revision]=v0-${mode}`,
      }),
    },
    // Labels: one application each, so one tagging mutation (a chained write of one step).
    {
      name: 'PUT label',
      request: (mode) => ({ method: 'PUT', path: '/v2/labels.json', headers: JSON_HEADERS, body: JSON.stringify({ label: { category: 'Once', name: mode, links: { applications: [fixtures.get(mode)?.app] } } }) }),
    },
    {
      name: 'DELETE label',
      request: (mode) => ({ method: 'DELETE', path: `/v2/labels/OnceGone:${mode}.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'POST alert channel',
      translatedWrites: 2,
      request: (mode) => ({ method: 'POST', path: '/v2/alerts_channels.json', headers: JSON_HEADERS, body: JSON.stringify({ channel: { name: `once ${mode}`, type: 'email', configuration: { recipients: 'once@example.com' } } }) }),
    },
    {
      name: 'DELETE alert channel',
      request: (mode) => ({ method: 'DELETE', path: `/v2/alerts_channels/${channelFixtures.get(mode)?.doomed}.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'PUT policy channels',
      request: (mode) => {
        const f = channelFixtures.get(mode);
        return { method: 'PUT', path: `/v2/alerts_policy_channels.json?policy_id=${f?.bare}&channel_ids=${f?.linkable}`, headers: JSON_HEADERS, body: '' };
      },
    },
    {
      name: 'DELETE policy channel',
      request: (mode) => {
        const f = channelFixtures.get(mode);
        return { method: 'DELETE', path: `/v2/alerts_policy_channels.json?policy_id=${f?.policy}&channel_id=${f?.linked}`, headers: JSON_HEADERS, body: '' };
      },
    },
    {
      name: 'PUT acknowledge alert incident',
      request: (mode) => ({ method: 'PUT', path: `/v2/alerts_incidents/${incidents.get(mode)?.acknowledge}/acknowledge.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'PUT close alert incident',
      request: (mode) => ({ method: 'PUT', path: `/v2/alerts_incidents/${incidents.get(mode)?.close}/close.json`, headers: JSON_HEADERS, body: '' }),
    },
    // The alert routes below are passed through unless a specific rule names them (ALERT_RULES does).
    {
      name: 'POST NRQL condition',
      request: (mode) => ({
        method: 'POST',
        path: '/v2/alerts_nrql_conditions/policies/100001.json',
        headers: JSON_HEADERS,
        body: JSON.stringify({ nrql_condition: { name: `once ${mode}`, terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '1', time_function: 'all' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' } } }),
      }),
    },
    {
      name: 'PUT NRQL condition',
      request: (mode) => ({ method: 'PUT', path: `/v2/alerts_nrql_conditions/${conditions.get(mode)?.update}.json`, headers: JSON_HEADERS, body: JSON.stringify({ nrql_condition: { name: `once ${mode}` } }) }),
    },
    {
      name: 'DELETE NRQL condition',
      request: (mode) => ({ method: 'DELETE', path: `/v2/alerts_nrql_conditions/${conditions.get(mode)?.delete}.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'DELETE APM condition',
      request: (mode) => ({ method: 'DELETE', path: `/v2/alerts_conditions/${conditions.get(mode)?.apm}.json`, headers: JSON_HEADERS, body: '' }),
    },
    {
      name: 'POST alert policy',
      request: (mode) => ({ method: 'POST', path: '/v2/alerts_policies.json', headers: JSON_HEADERS, body: JSON.stringify({ policy: { name: `once ${mode}`, incident_preference: 'PER_POLICY' } }) }),
    },
    {
      name: 'PUT alert policy',
      request: (mode) => ({ method: 'PUT', path: `/v2/alerts_policies/${policyFixtures.get(mode)?.renamed}.json`, headers: JSON_HEADERS, body: JSON.stringify({ policy: { name: `renamed ${mode}` } }) }),
    },
    {
      // A condition family NerdGraph cannot serve: passed through in every mode, whatever the rules.
      name: 'POST external service condition',
      passthroughOnly: true,
      request: (mode) => ({
        method: 'POST',
        path: `/v2/alerts_external_service_conditions/policies/${policyFixtures.get(mode)?.renamed}.json`,
        headers: JSON_HEADERS,
        body: JSON.stringify({
          external_service_condition: {
            type: 'apm',
            name: `once ${mode}`,
            external_service_url: 'api.example.com',
            metric: 'throughput',
            terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '10', time_function: 'all' }],
          },
        }),
      }),
    },
    {
      name: 'DELETE alert policy',
      request: (mode) => ({ method: 'DELETE', path: `/v2/alerts_policies/${policyFixtures.get(mode)?.doomed}.json`, headers: JSON_HEADERS, body: '' }),
    },
  ];

  beforeAll(async () => {
    // The fixtures below are written behind the gateway's back (the legacy face) and read through
    // it at once: no ingest lag (the gateway remembers only its own writes; test/routes/writes/read-your-writes.test.ts).
    sandbox = createSandbox({ seed: 11, apmApps: 40, now: () => FIXED_NOW, apiKeys: new Map([[KEY, [PRIMARY_ACCOUNT]]]), behave: { ingestLagMs: 0 } });
    server = await sandbox.listen(0, '127.0.0.1');
    const apps = sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
    const reporting = apps.filter((app) => app.reporting);
    const silent = apps.filter((app) => !app.reporting);
    for (const [i, mode] of modes.entries()) {
      const app = reporting[i]?.id as number;
      // Set up through the legacy face directly, before any count is taken.
      const created = await fetch(`${server.url}/v2/applications/${app}/deployments.json`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ deployment: { revision: `fixture-${mode}` } }) });
      const { deployment } = (await created.json()) as { deployment: { id: number } };
      fixtures.set(mode, { app, silent: silent[i]?.id as number, deployment: deployment.id });
      // A label on the app alone, for DELETE label.
      const labelled = await fetch(`${server.url}/v2/labels.json`, { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify({ label: { category: 'OnceGone', name: mode, links: { applications: [app] } } }) });
      expect(labelled.status).toBe(200);
    }
    const store = notificationsOf(sandbox.data);
    const emails = store.channels.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.type === 'EMAIL');
    const bound = new Set(store.workflows.flatMap((w) => w.predicates.flatMap((p) => p.values.map(Number))));
    const bare = sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT && !bound.has(p.id));
    const owned = store.workflows.filter((w) => w.accountId === PRIMARY_ACCOUNT && w.predicates.length === 1 && w.predicates[0]?.attribute === 'labels.policyIds' && w.channelIds.length > 0);
    if (emails.length < 24 || bare.length < modes.length || owned.length < modes.length) throw new Error('the sandbox lacks channel fixtures');
    for (const [i, mode] of modes.entries()) {
      const workflow = owned[i];
      const policy = Number(workflow?.predicates[0]?.values[0]);
      // The gateway edits only the policy workflows it names itself; the sandbox names its seeded
      // ones its own way (an independent witness), so these are named as the gateway would.
      if (workflow) workflow.name = policyWorkflowName(policy);
      // Each side numbers channels its own way: the legacy API's ids where the write goes there.
      const legacySide = mode === 'passthrough' || mode === 'compare';
      const idOf = (channelId: string): number => (legacySide ? (legacyChannelId(sandbox.data, channelId) as number) : channelV2Id(channelId));
      channelFixtures.set(mode, {
        doomed: idOf(emails[10 + i]?.id ?? ''),
        bare: bare[i]?.id as number,
        linkable: idOf(emails[20 + i]?.id ?? ''),
        policy,
        linked: idOf(workflow?.channelIds[0] ?? ''),
      });
    }
    const usedByChannels = new Set([...channelFixtures.values()].flatMap((f) => [f.bare, f.policy]));
    const spare = sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT && !usedByChannels.has(p.id)).slice(-2 * modes.length);
    for (const [i, mode] of modes.entries()) policyFixtures.set(mode, { renamed: spare[2 * i]?.id as number, doomed: spare[2 * i + 1]?.id as number });
    const open = (await (await fetch(`${server.url}/v2/alerts_incidents.json?only_open=true`, { headers: JSON_HEADERS })).json()) as { incidents: Array<{ id: number }> };
    // The list gives the legacy API's incident ids; the translation's are derived from the same
    // NerdGraph incident (each side numbers alerts its own way).
    const incidentKeys = new Map(allIssuesOf(sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).flatMap((issue) => [issue.issueId, ...issue.incidents.map((incident) => incident.incidentId)].map((key) => [legacyAlertId(key), key] as const)));
    for (const [i, mode] of modes.entries()) {
      const legacySide = mode === 'passthrough' || mode === 'compare';
      const idOf = (legacyId: number | undefined): number => (legacySide ? (legacyId as number) : alertV2Id(incidentKeys.get(legacyId as number) ?? ''));
      incidents.set(mode, { acknowledge: idOf(open.incidents[i]?.id), close: idOf(open.incidents[modes.length + i]?.id) });
    }
    const nrql = sandbox.data.alerts.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_nrql_conditions' && c.fields.type === 'static');
    const apm = sandbox.data.alerts.conditions.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.family === 'alerts_conditions');
    for (const [i, mode] of modes.entries()) conditions.set(mode, { update: nrql[2 * i]?.id as number, delete: nrql[2 * i + 1]?.id as number, apm: apm[i]?.id as number });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const mode of modes) {
    it(`${mode}: one write per request, on the side the mode names, none added by shadow work`, async () => {
      const gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: `${server.url}/graphql`, legacyUrl: server.url, routeModes: `*=${mode};${ALERT_RULES(mode)}` });
      let shadowRecords = 0;
      for (const writeCase of cases) {
        const { method, path, headers, body } = writeCase.request(mode);
        const before = sandbox.writes();
        const response = await gateway.app.request(path, { method, headers, ...(body ? { body } : {}) });
        const text = await response.text();
        const legacySide = writeCase.passthroughOnly || mode === 'passthrough' || mode === 'compare';
        const refused = writeCase.untranslated === true && !legacySide;
        if (refused) expect(response.status, `${writeCase.name}: ${text}`).toBe(422);
        else expect(response.status, `${writeCase.name}: ${text}`).toBeLessThan(300);
        // Shadow work (dry runs) of the comparing modes, finished before counting again.
        if ((mode === 'compare' || mode === 'candidate') && !writeCase.passthroughOnly) {
          shadowRecords++;
          const records = await gateway.sink.waitForRecords(shadowRecords);
          // In compare mode the dry run comes after the legacy API's write: one that reads its
          // object first (a DELETE, or ids of the legacy face's own stores) plans nothing, and its
          // record says so with the translation's status, never as a silent empty dry run.
          const last = records.at(-1);
          expect(last?.outcome, writeCase.name).toBe('dry_run');
          if (writeCase.untranslated !== true && last?.dryRun?.calls.length === 0) {
            expect(mode, `${writeCase.name}: a dry run plans its write but in compare mode`).toBe('compare');
            expect(last, writeCase.name).toMatchObject({ status: { translated: 404 }, error: expect.stringContaining('planned no write') });
          }
        }
        const after = sandbox.writes();
        expect(after.total - before.total, writeCase.name).toBe(refused ? 0 : legacySide ? 1 : (writeCase.translatedWrites ?? 1));
        const legacyWrites = Object.values(after.legacy).reduce((n, v) => n + v, 0) - Object.values(before.legacy).reduce((n, v) => n + v, 0);
        expect(legacyWrites, `${writeCase.name}: executed by the ${legacySide ? 'legacy API' : 'translation'}`).toBe(legacySide && !refused ? 1 : 0);
      }
      expect(gateway.sink.drops).toEqual([]);
    });
  }
});
