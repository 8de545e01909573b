import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import showMapping from '../../mappings/applications.show.ts';
import listMapping from '../../mappings/applications.list.ts';
import type { KnownGap } from '../../src/routes/mapping.ts';
import type { SandboxApp, SandboxData } from '../../sandbox/model.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import { canonical, readAnswer, withoutGaps } from '../support/compare.ts';
import { TOPOLOGY_ID_PATHS, normaliseIds, worldSides, type SideIds } from '../support/derived-ids.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../support/harness.ts';

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
  gaps?: readonly KnownGap[];
}

let clock = FIXED_NOW;
const options = { seed: 11, apmApps: 40, now: () => clock };
const viaGateway = createSandbox(options);
const viaLegacy = createSandbox(options);
let gatewayServer: Awaited<ReturnType<typeof serveOnLoopback>>;
let upstream: Awaited<ReturnType<(typeof viaGateway)['listen']>>;
let legacy: Awaited<ReturnType<(typeof viaLegacy)['listen']>>;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await viaGateway.listen(0, '127.0.0.1');
  legacy = await viaLegacy.listen(0, '127.0.0.1');
  gateway = await createTestGateway({ nerdgraphUrl: `${upstream.url}/graphql`, now: () => clock });
  gatewayServer = await serveOnLoopback(gateway.app.fetch);
});
afterAll(async () => {
  await gatewayServer.close();
  await upstream.close();
  await legacy.close();
});

function steps(data: SandboxData): Step[] {
  const primary = data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  const reporting = primary.filter((a) => a.reporting);
  const stopped = primary.filter((a) => !a.reporting);
  const [first, second, third] = reporting as [SandboxApp, SandboxApp, SandboxApp];
  const [gone, gone2] = stopped as [SandboxApp, SandboxApp];
  const showGaps = showMapping.knownGaps;
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
  add({ name: 'rename', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ application: { name: 'Renamed Checkout', settings: { app_apdex_threshold: 0.75 } } }), contentType: json, gaps: showGaps });
  add({ name: 'browser monitoring off', method: 'PUT', path: `/v2/applications/${second.id}.xml`, body: '<application><settings><enable_real_user_monitoring>false</enable_real_user_monitoring></settings></application>', contentType: xml, gaps: showGaps });
  add({ name: 'browser monitoring on', method: 'PUT', path: `/v2/applications/${third.id}.json`, body: JSON.stringify({ application: { settings: { enable_real_user_monitoring: true, end_user_apdex_threshold: 3 } } }), contentType: json, gaps: showGaps });
  add({ name: 'PUT: invalid', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ application: { settings: { app_apdex_threshold: -1 } } }), contentType: json, gaps: showGaps });
  add({ name: 'PUT: no application', method: 'PUT', path: `/v2/applications/${first.id}.json`, body: JSON.stringify({ name: 'x' }), contentType: json, gaps: showGaps });
  add({ name: 'PUT: unknown app', method: 'PUT', path: '/v2/applications/123.json', body: JSON.stringify({ application: { name: 'x' } }), contentType: json, gaps: showGaps });
  add({ name: 'show after rename', method: 'GET', path: `/v2/applications/${first.id}.json`, gaps: showGaps });
  add({ name: 'list by the new name', method: 'GET', path: '/v2/applications.json?filter[name]=Renamed', gaps: listMapping.knownGaps });
  add({ name: 'DELETE: still reporting', method: 'DELETE', path: `/v2/applications/${first.id}.json`, gaps: showGaps });
  add({ name: 'DELETE: stopped', method: 'DELETE', path: `/v2/applications/${gone.id}.json`, gaps: showGaps });
  add({ name: 'DELETE: stopped (xml)', method: 'DELETE', path: `/v2/applications/${gone2.id}.xml`, gaps: showGaps });
  add({ name: 'DELETE: again', method: 'DELETE', path: `/v2/applications/${gone.id}.json`, gaps: showGaps });
  add({ name: 'show after delete', method: 'GET', path: `/v2/applications/${gone.id}.json`, gaps: showGaps });
  add({ name: 'list after delete', method: 'GET', path: `/v2/applications.json?filter[ids]=${gone.id},${gone2.id},${first.id}`, gaps: listMapping.knownGaps });
  add({ name: 'create mobile', method: 'POST', path: '/v2/mobile_applications.json', body: JSON.stringify({ mobile_application: { name: 'Shop iOS' } }), contentType: json });
  add({ name: 'create browser', method: 'POST', path: '/v2/browser_applications.json', body: JSON.stringify({ browser_application: { name: 'Shop Web' } }), contentType: json });
  add({ name: 'create browser (xml)', method: 'POST', path: '/v2/browser_applications.xml', body: '<browser_application><name>Shop Admin</name></browser_application>', contentType: xml });
  add({ name: 'create: blank name', method: 'POST', path: '/v2/browser_applications.json', body: JSON.stringify({ browser_application: { name: ' ' } }), contentType: json });
  return list;
}

/** v0 answers are XML of their own: compared as text, whitespace between elements aside. */
const compactXml = (text: string): string => text.replace(/>\s+</g, '><').trim();

describe('differential writes: gateway == legacy face, answer for answer and state for state', () => {
  it('answers every step alike', async () => {
    const mismatches: string[] = [];
    const statuses: string[] = [];
    // Deployment (and host) ids are each side's own (support/derived-ids.ts).
    const sides = worldSides(viaGateway.data, viaLegacy.data, () => clock);
    const v0Ids = (text: string, side: SideIds): string =>
      text.replace(/<id type="integer">(\d+)<\/id>/g, (_all, id: string) => `<id>deployment:${side.keyOf('deployment', Number(id)) ?? `unknown ${id}`}</id>`);
    for (const step of steps(viaLegacy.data)) {
      clock += 1_000; // each request a second later, on both sides
      const request = {
        method: step.method,
        headers: { 'X-Api-Key': DEMO_KEY, ...(step.contentType ? { 'content-type': step.contentType } : {}) },
        ...(step.body === undefined ? {} : { body: step.body }),
      };
      const [left, right] = await Promise.all([httpSend(`${gatewayServer.url}${step.path}`, request), httpSend(`${legacy.url}${step.path}`, request)]);
      statuses.push(`${step.name}: ${right.status}`);
      if (step.path.startsWith('/deployments.') && left.status < 300) {
        const [l, r] = [v0Ids(compactXml(await left.text()), sides.gateway), v0Ids(compactXml(await right.text()), sides.legacy)];
        if (left.status !== right.status || l !== r) mismatches.push(`${step.name}\n  gateway: ${left.status} ${l}\n  legacy:  ${right.status} ${r}`);
        continue;
      }
      const a = await readAnswer(left, gatewayServer.url);
      const b = await readAnswer(right, legacy.url);
      const gaps = step.gaps ?? [];
      const l = JSON.stringify({ ...a, body: canonical(withoutGaps(normaliseIds(a.body, TOPOLOGY_ID_PATHS, sides.gateway), gaps)) });
      const r = JSON.stringify({ ...b, body: canonical(withoutGaps(normaliseIds(b.body, TOPOLOGY_ID_PATHS, sides.legacy), gaps)) });
      if (l !== r) mismatches.push(`${step.name} ${step.method} ${step.path}\n  gateway: ${l.slice(0, 700)}\n  legacy:  ${r.slice(0, 700)}`);
    }
    expect(mismatches).toEqual([]);
    // The sequence really exercises successes and every kind of refusal.
    const seen = new Set(statuses.map((line) => Number(line.slice(line.lastIndexOf(' ') + 1))));
    expect([...seen].sort()).toEqual([200, 201, 400, 404, 409, 422]);
    expect(statuses).toContain('deploy (JSON): 201');
    expect(statuses).toContain('v0 by name: 201');
    expect(statuses).toContain('DELETE: stopped: 200');
    expect(statuses).toContain('deploy with an explicit timestamp: 201');
  });

  it('leaves both worlds in the same state', () => {
    const appState = (data: SandboxData) =>
      data.apps.map((app) => ({ id: app.id, name: app.name, apdex: app.apdexTarget, browser: app.browser === null ? null : app.browser.apdexTarget }));
    expect(appState(viaGateway.data)).toEqual(appState(viaLegacy.data));
    const deploymentState = (data: SandboxData) =>
      // When each was ingested (real time, sandbox/ingest.ts) is no part of the state.
      data.apps.flatMap((app) => deploymentsOf(data, app).map(({ eventType: _written, ingestedAt: _ingested, ...deployment }) => deployment));
    expect(deploymentState(viaGateway.data)).toEqual(deploymentState(viaLegacy.data));
    const created = (data: SandboxData) => data.writes.createdApps.map(({ applicationToken: _token, ...app }) => app);
    expect(created(viaGateway.data)).toEqual(created(viaLegacy.data));
    expect(viaGateway.data.writes.createdApps.length).toBe(3);
  });
});
