import { expect, it } from 'vitest';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import { NO_REVISION_VERSION } from '../../mappings/deployments/deployment.ts';
import type { AnswerPair } from '../support/compare.ts';
import { TOPOLOGY_ID_PATHS, type SideIds } from '../support/derived-ids.ts';
import { describeDifferential, type DifferentialCase } from '../support/differential.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT } from '../support/harness.ts';

/**
 * Writes, differentially: two identical sandboxes on one clock. The same sequence of writes
 * and reads goes to the gateway (over the first sandbox's NerdGraph face) and to the second
 * sandbox's legacy /v2 face. Every answer must match (bar the fields the mappings declare as
 * gaps), and afterwards both worlds must hold the same state.
 */
interface Step {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: string;
  contentType?: string;
  /** The mapping whose known gaps are left out (none otherwise). */
  route?: string;
}

function steps(data: SandboxData): Step[] {
  const primary = data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const reporting = primary.filter((a) => a.reporting);
  const stopped = primary.filter((a) => !a.reporting);
  const [first, second, third] = reporting as [SandboxApp, SandboxApp, SandboxApp];
  const [gone, gone2] = stopped as [SandboxApp, SandboxApp];
  const json = 'application/json';
  const xml = 'application/xml';
  const form = 'application/x-www-form-urlencoded';
  const deployments = (app: SandboxApp, format = 'json') => `/v2/applications/${app.id}/deployments.${format}`;
  const list: Step[] = [];
  const add = (step: Step) => list.push(step);

  for (const app of [first, second, gone]) add({ name: `seeded deployments of ${app.id}`, method: 'GET', path: deployments(app) });
  add({ name: 'deploy (JSON)', method: 'POST', path: deployments(first), body: JSON.stringify({ deployment: { revision: 'v2.0.0', changelog: 'Fixed the bugs', description: 'Release', user: 'Data Nerd' } }), contentType: json });
  add({ name: 'deploy (XML)', method: 'POST', path: deployments(first, 'xml'), body: '<deployment><revision>v2.0.1</revision><user>ops</user></deployment>', contentType: xml });
  add({ name: 'deploy (XML with entities, nil and padding)', method: 'POST', path: deployments(second), body: '<?xml version="1.0"?>\n<deployment>\n  <revision>a &amp; b &#233;</revision>\n  <changelog nil="true"/>\n  <user> ops </user>\n</deployment>', contentType: xml });
  add({ name: 'deploy (form)', method: 'POST', path: deployments(second), body: 'deployment[revision]=9f2c1ab&deployment[description]=hotfix+%231', contentType: form });
  add({ name: 'deploy with an explicit timestamp', method: 'POST', path: deployments(third), body: JSON.stringify({ deployment: { revision: 'ts', timestamp: new Date(FIXED_NOW - 30_000).toISOString() } }), contentType: json });
  add({ name: 'deploy: no wrapper', method: 'POST', path: deployments(first), body: JSON.stringify({ revision: 'x' }), contentType: json });
  add({ name: 'deploy: no revision', method: 'POST', path: deployments(first), body: JSON.stringify({ deployment: { user: 'x' } }), contentType: json });
  add({ name: 'deploy: long user', method: 'POST', path: deployments(first), body: JSON.stringify({ deployment: { revision: 'x', user: 'u'.repeat(32) } }), contentType: json });
  add({ name: 'deploy: emoji', method: 'POST', path: deployments(first), body: JSON.stringify({ deployment: { revision: 'x', description: '🚀' } }), contentType: json });
  add({ name: 'deploy: future', method: 'POST', path: deployments(first), body: JSON.stringify({ deployment: { revision: 'x', timestamp: '2030-01-01T00:00:00Z' } }), contentType: json });
  add({ name: 'deploy: not after the latest', method: 'POST', path: deployments(second), body: JSON.stringify({ deployment: { revision: 'x', timestamp: new Date(FIXED_NOW).toISOString() } }), contentType: json });
  add({ name: 'deploy: broken JSON', method: 'POST', path: deployments(first), body: '{"deployment":', contentType: json });
  add({ name: 'deploy: unknown app', method: 'POST', path: '/v2/applications/123/deployments.json', body: JSON.stringify({ deployment: { revision: 'x' } }), contentType: json });
  add({ name: 'deployments after writes', method: 'GET', path: deployments(first) });
  add({ name: 'deployments after writes (xml)', method: 'GET', path: deployments(second, 'xml') });
  add({ name: 'v0 by id', method: 'POST', path: '/deployments.xml', body: `deployment[application_id]=${third.id}&deployment[revision]=v0-1&deployment[user]=cap`, contentType: form });
  add({ name: 'v0 by name', method: 'POST', path: '/deployments.xml', body: `deployment[app_name]=${encodeURIComponent(third.name)}&deployment[revision]=v0-2`, contentType: form });
  add({ name: 'v0 without app', method: 'POST', path: '/deployments.xml', body: 'deployment[revision]=v0-3', contentType: form });
  add({ name: 'v0 unknown name', method: 'POST', path: '/deployments.xml', body: 'deployment[app_name]=No+Such+App&deployment[revision]=v0-4', contentType: form });
  add({ name: 'deployments after v0', method: 'GET', path: deployments(third) });
  // New Relic's v0 example sends no revision (setting-deployment-notifications#api): listed
  // after, with no revision on both faces (the gateway reads its fixed version back as none).
  add({ name: 'v0 as documented, no revision', method: 'POST', path: '/deployments.xml', body: `deployment[app_name]=${encodeURIComponent(third.name)}&deployment[description]=This+is+an+app+id+deployment`, contentType: form });
  add({ name: 'deployments after a v0 deployment without a revision', method: 'GET', path: deployments(third) });
  add({ name: 'deployments after a v0 deployment without a revision (xml)', method: 'GET', path: deployments(third, 'xml') });
  add({ name: 'rename', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ application: { name: 'Renamed Checkout', settings: { app_apdex_threshold: 0.75 } } }), contentType: json, route: 'applications.show' });
  add({ name: 'browser monitoring off', method: 'PUT', path: `/v2/applications/${second.id}.xml`, body: '<application><settings><enable_real_user_monitoring>false</enable_real_user_monitoring></settings></application>', contentType: xml, route: 'applications.show' });
  add({ name: 'browser monitoring on', method: 'PUT', path: `/v2/applications/${third.id}.json`, body: JSON.stringify({ application: { settings: { enable_real_user_monitoring: true, end_user_apdex_threshold: 3 } } }), contentType: json, route: 'applications.show' });
  add({ name: 'PUT: invalid', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ application: { settings: { app_apdex_threshold: -1 } } }), contentType: json, route: 'applications.show' });
  add({ name: 'PUT: no application', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ name: 'x' }), contentType: json, route: 'applications.show' });
  add({ name: 'PUT: unknown app', method: 'PUT', path: '/v2/applications/123.json', body: JSON.stringify({ application: { name: 'x' } }), contentType: json, route: 'applications.show' });
  add({ name: 'show after rename', method: 'GET', path: `/v2/applications/${first.id}.json`, route: 'applications.show' });
  add({ name: 'list by the new name', method: 'GET', path: '/v2/applications.json?filter[name]=Renamed', route: 'applications.list' });
  add({ name: 'DELETE: still reporting', method: 'DELETE', path: `/v2/applications/${first.id}.json`, route: 'applications.show' });
  add({ name: 'DELETE: stopped', method: 'DELETE', path: `/v2/applications/${gone.id}.json`, route: 'applications.show' });
  add({ name: 'DELETE: stopped (xml)', method: 'DELETE', path: `/v2/applications/${gone2.id}.xml`, route: 'applications.show' });
  add({ name: 'DELETE: again', method: 'DELETE', path: `/v2/applications/${gone.id}.json`, route: 'applications.show' });
  add({ name: 'show after delete', method: 'GET', path: `/v2/applications/${gone.id}.json`, route: 'applications.show' });
  add({ name: 'list after delete', method: 'GET', path: `/v2/applications.json?filter[ids]=${gone.id},${gone2.id},${first.id}`, route: 'applications.list' });
  add({ name: 'create mobile', method: 'POST', path: '/v2/mobile_applications.json', body: JSON.stringify({ mobile_application: { name: 'Shop iOS' } }), contentType: json });
  add({ name: 'create browser', method: 'POST', path: '/v2/browser_applications.json', body: JSON.stringify({ browser_application: { name: 'Shop Web' } }), contentType: json });
  add({ name: 'create browser (xml)', method: 'POST', path: '/v2/browser_applications.xml', body: '<browser_application><name>Shop Admin</name></browser_application>', contentType: xml });
  add({ name: 'create: blank name', method: 'POST', path: '/v2/browser_applications.json', body: JSON.stringify({ browser_application: { name: ' ' } }), contentType: json });
  return list;
}

/** v0 answers are XML of their own: compared as text, whitespace between elements aside, deployment ids put back to their records. */
function v0Judge(sides: { gateway: SideIds; legacy: SideIds }) {
  const compactXml = (text: string): string => text.replace(/>\s+</g, '><').trim();
  const v0Ids = (text: string, side: SideIds): string =>
    compactXml(text).replace(/<id type="integer">(\d+)<\/id>/g, (_all, id: string) => `<id>deployment:${side.keyOf('deployment', Number(id)) ?? `unknown ${id}`}</id>`);
  return ({ gateway, legacy }: AnswerPair, standard: () => string | undefined): string | undefined => {
    if (gateway.status >= 300) return standard();
    const [l, r] = [v0Ids(gateway.text, sides.gateway), v0Ids(legacy.text, sides.legacy)];
    return gateway.status === legacy.status && l === r ? undefined : `v0\n  gateway: ${gateway.status} ${l}\n  legacy:  ${legacy.status} ${r}`;
  };
}

/** Each request a second later, on both sides; deployment (and host) ids are each side's own (support/derived-ids.ts). */
const options = { seed: 11, apmApps: 40, twin: true, tickMs: 1_000, ids: TOPOLOGY_ID_PATHS };

describeDifferential('differential writes: gateway == legacy face, answer for answer and state for state', options, (faces) => {
  it('answers every step alike', async () => {
    const judge = v0Judge(faces.sides);
    const cases = steps(faces.legacy.data).map(({ contentType, ...step }): DifferentialCase => ({
      ...step,
      headers: { 'X-Api-Key': DEMO_KEY, ...(contentType ? { 'content-type': contentType } : {}) },
      ...(step.path.startsWith('/deployments.') && { judge }),
    }));
    const report = await faces.expectAlike(cases);
    // The sequence really exercises successes and every kind of refusal.
    expect(report.statuses()).toEqual([200, 201, 400, 404, 409, 422]);
    expect(report.lines).toContain('deploy (JSON): 201');
    expect(report.lines).toContain('v0 by name: 201');
    expect(report.lines).toContain('v0 as documented, no revision: 201');
    expect(report.lines).toContain('DELETE: stopped: 200');
    expect(report.lines).toContain('deploy with an explicit timestamp: 201');
  });

  it('leaves both worlds in the same state', () => {
    const [viaGateway, viaLegacy] = [faces.upstream, faces.legacy];
    const appState = (data: SandboxData) =>
      data.apps.map((app) => ({ id: app.id, name: app.name, apdex: app.apdexTarget, browser: app.browser === null ? null : app.browser.apdexTarget }));
    expect(appState(viaGateway.data)).toEqual(appState(viaLegacy.data));
    const deploymentState = (data: SandboxData) =>
      // When each was ingested (real time, sandbox/ingest.ts) is no part of the state.
      data.apps.flatMap((app) =>
        deploymentsOf(data, app).map(({ eventType: _written, ingestedAt: _ingested, ...deployment }) =>
          // A v0 deployment without a revision: none on the legacy face (''), the gateway's fixed version in change tracking.
          deployment.revision === NO_REVISION_VERSION ? { ...deployment, revision: '' } : deployment,
        ),
      );
    expect(deploymentState(viaGateway.data)).toEqual(deploymentState(viaLegacy.data));
    const created = (data: SandboxData) => data.writes.createdApps.map(({ applicationToken: _token, ...app }) => app);
    expect(created(viaGateway.data)).toEqual(created(viaLegacy.data));
    expect(viaGateway.data.writes.createdApps.length).toBe(3);
  });
});
