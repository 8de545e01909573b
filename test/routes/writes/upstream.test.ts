import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { V2Error } from '../../../src/v2/errors.ts';
import { writeFailure } from '../../../src/routes/operations.ts';
import { classifyTransportError } from '../../../src/upstream/errors.ts';
import { entityGuid } from '../../../src/v2/ids.ts';
import { FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../support/harness.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream, type FakeRequest } from '../../support/fake-upstream.ts';
import { deploymentV2Id } from '../../../mappings/common/deployment-id.ts';
import { NO_REVISION_VERSION } from '../../../mappings/deployments/deployment.ts';

/**
 * Writes against a scripted NerdGraph: what is sent (exactly one mutation, after the reads the
 * rules need), and what the client is told when NerdGraph refuses, fails, or goes silent.
 * Retries are switched on here, to show that mutations are never retried anyway.
 */
const APP = 4242;
const GUID = entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP);
const json_ = { 'x-api-key': 'NRAK-TEST-KEY', 'content-type': 'application/json' };
type Script = (request: FakeRequest, res: ServerResponse) => void | Promise<void>;

let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;
let script: Record<string, Script> = {};

const sent = (operation: string): FakeRequest[] => upstream.received.filter((r) => r.operationName === operation);
const ok = (data: unknown): Script => (_request, res) => json(res, 200, { data });
const noDeployments = ok({ actor: { entity: { guid: GUID, accountId: PRIMARY_ACCOUNT }, account: { nrql: { results: [] } } } });
const latestAt = (timestamp: number): Script =>
  ok({ actor: { entity: { guid: GUID, accountId: PRIMARY_ACCOUNT }, account: { nrql: { results: [{ timestamp, changeTrackingId: 'old', version: 'v0' }] } } } });
const created = (changeTrackingId: string, timestamp: number): Script =>
  ok({ changeTrackingCreateEvent: { messages: [], changeTrackingEvent: { changeTrackingId, timestamp, entity: { guid: GUID } } } });

beforeAll(async () => {
  upstream = await startFakeUpstream(async (request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
    const handler = script[request.operationName ?? ''];
    if (!handler) return json(res, 500, { errors: [{ message: `unscripted ${request.operationName}` }] });
    await handler(request, res);
  });
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url, retries: 2, timeoutMs: 400 });
});
afterAll(() => upstream.close());
beforeEach(() => {
  script = {};
  upstream.received.length = 0;
});

const deploy = (body: unknown, headers: Record<string, string> = json_) =>
  gateway.app.request(`/v2/applications/${APP}/deployments.json`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('POST deployments: one mutation, sent once', () => {
  it('reads the latest marker, sends one changeTrackingCreateEvent, and answers 201 with the derived id', async () => {
    script = { ApplicationDeployments: latestAt(FIXED_NOW - 3_600_000), DeploymentCreate: created('ct-1', FIXED_NOW - 30_000) };
    const response = await deploy({ deployment: { revision: 'v1.2.3', changelog: 'fixes', description: 'Release', user: 'ci' } });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      deployment: {
        id: deploymentV2Id('ct-1'),
        revision: 'v1.2.3',
        changelog: 'fixes',
        description: 'Release',
        user: 'ci',
        timestamp: '2026-11-22T12:00:00+00:00',
        links: { application: APP },
      },
    });
    expect(sent('DeploymentCreate')).toHaveLength(1);
    expect(sent('DeploymentCreate')[0]?.variables.event).toEqual({
      entitySearch: { query: `id = '${GUID}'` },
      categoryAndTypeData: { kind: { category: 'Deployment', type: 'Basic' }, categoryFields: { deployment: { version: 'v1.2.3', changelog: 'fixes' } } },
      description: 'Release',
      user: 'ci',
      timestamp: Math.floor(FIXED_NOW / 1000) * 1000,
    });
  });

  const failures: ReadonlyArray<[string, Script, number]> = [
    ['a 500 after sending', (_r, res) => json(res, 500, { errors: [{ message: 'boom' }] }), 502],
    ['a reset connection', (_r, res) => void res.socket?.destroy(), 502],
    ['no answer before the deadline', () => new Promise<void>(() => undefined), 504],
    ['a 503', (_r, res) => json(res, 503, { errors: [{ message: 'unavailable' }] }), 503],
  ];
  it.each(failures)('%s: says the outcome is unknown, never retries', async (_label, failure, status) => {
    script = { ApplicationDeployments: noDeployments, DeploymentCreate: failure };
    const before = sent('DeploymentCreate').length;
    const response = await deploy({ deployment: { revision: 'r1' } });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({
      error: { title: 'The deployment may have been recorded, but New Relic did not confirm it: list the deployments before retrying' },
    });
    expect(sent('DeploymentCreate').length - before).toBe(1);
  });

  it('a refusal is a 4xx that says nothing was recorded', async () => {
    script = {
      ApplicationDeployments: noDeployments,
      DeploymentCreate: (_r, res) => json(res, 200, { data: { changeTrackingCreateEvent: null }, errors: [{ message: 'version is too odd', extensions: { errorClass: 'INVALID_INPUT' } }] }),
    };
    const refused = await deploy({ deployment: { revision: 'r1' } });
    expect([refused.status, await refused.json()]).toEqual([422, { error: { title: 'New Relic refused the change: version is too odd' } }]);
    script.DeploymentCreate = (_r, res) => json(res, 429, { errors: [{ message: 'slow down' }] });
    expect((await deploy({ deployment: { revision: 'r1' } })).status).toBe(429);
  });

  it('errors beside a created event are an unknown outcome, never a refusal (a retry would duplicate)', async () => {
    script = {
      ApplicationDeployments: noDeployments,
      DeploymentCreate: (_r, res) =>
        json(res, 200, {
          data: { changeTrackingCreateEvent: { messages: [], changeTrackingEvent: { changeTrackingId: 'ct-9', timestamp: FIXED_NOW } } },
          errors: [{ message: 'Entity not found', path: ['changeTrackingCreateEvent', 'changeTrackingEvent', 'entity'], extensions: { errorClass: 'NOT_FOUND' } }],
        }),
    };
    const response = await deploy({ deployment: { revision: 'r1' } });
    expect([response.status, await response.json()]).toEqual([
      502,
      { error: { title: 'The deployment may have been recorded, but New Relic did not confirm it: list the deployments before retrying' } },
    ]);
  });

  it('a connection never made is the one failure that says nothing was changed', () => {
    const failure = writeFailure(classifyTransportError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), false), { unconfirmedTitle: 'unknown' });
    expect(failure).toBeInstanceOf(V2Error);
    expect([(failure as V2Error).status, (failure as V2Error).title]).toEqual([503, 'NerdGraph is unavailable; nothing was changed']);
    const reset = writeFailure(classifyTransportError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), false), { unconfirmedTitle: 'unknown' });
    expect([(reset as V2Error).status, (reset as V2Error).title]).toEqual([502, 'unknown']);
  });

  it('a 404 from the read means no such app, and nothing is sent', async () => {
    script = { ApplicationDeployments: ok({ actor: { entity: null, account: { nrql: { results: [] } } } }) };
    const response = await deploy({ deployment: { revision: 'r1' } });
    expect([response.status, await response.json()]).toEqual([404, { error: { title: 'No Application found with the given ID' } }]);
    expect(sent('DeploymentCreate')).toHaveLength(0);
  });
});

describe('deployment validation (docs/write-rules.md §4): v2 status and title, nothing sent', () => {
  const at = (iso: string) => ({ deployment: { revision: 'r', timestamp: iso } });
  it.each([
    ['no wrapper', { revision: 'r' }, 400, 'missing parameter: deployment'],
    ['no revision', { deployment: { user: 'me' } }, 400, 'Revision parameter required'],
    ['blank revision', { deployment: { revision: '   ' } }, 400, 'Revision parameter required'],
    ['revision of 128', { deployment: { revision: 'r'.repeat(128) } }, 422, 'Invalid deployment: revision is longer than 127 characters'],
    ['changelog of 65536', { deployment: { revision: 'r', changelog: 'c'.repeat(65_536) } }, 422, 'Invalid deployment: changelog is longer than 65535 characters'],
    ['description of 65536', { deployment: { revision: 'r', description: 'd'.repeat(65_536) } }, 422, 'Invalid deployment: description is longer than 65535 characters'],
    ['user of 32', { deployment: { revision: 'r', user: 'u'.repeat(32) } }, 422, 'Invalid deployment: user is longer than 31 characters'],
    ['an emoji', { deployment: { revision: 'r', changelog: 'ship it 🚀' } }, 422, 'Invalid deployment: changelog contains a 4-byte UTF-8 character'],
    ['a bad timestamp', at('yesterday'), 422, 'Invalid deployment: timestamp must be an ISO 8601 time'],
    ['a future timestamp', at('2026-11-22T12:05:00Z'), 422, 'Invalid deployment: timestamp must not be in the future'],
    ['an object as changelog', { deployment: { revision: 'r', changelog: { a: 1 } } }, 422, 'Invalid deployment: changelog must be text'],
  ])('%s', async (_label, body, status, title) => {
    const response = await deploy(body);
    expect([response.status, await response.json()]).toEqual([status, { error: { title } }]);
    expect(upstream.received.filter((r) => r.operationName !== 'AccessibleAccounts')).toHaveLength(0);
  });

  it('reads before refusing a timestamp not after the latest deployment, or more than 24 hours back', async () => {
    script = { ApplicationDeployments: latestAt(Date.UTC(2026, 10, 22, 11, 0)), DeploymentCreate: created('ct-default', FIXED_NOW) };
    const early = await deploy(at('2026-11-22T11:00:00Z'));
    // A defaulted timestamp (the arrival time) need not follow the newest deployment.
    expect((await deploy({ deployment: { revision: 'r' } })).status).toBe(201);
    expect([early.status, await early.json()]).toEqual([422, { error: { title: 'Invalid deployment: timestamp must be later than the most recent deployment' } }]);
    script = { ApplicationDeployments: noDeployments };
    // A gateway that recorded nothing: this one remembers the deployment it just recorded
    // (read-your-writes, src/state/recent-writes.ts), which the scripted NRQL never shows.
    const fresh = await createTestGateway({ nerdgraphUrl: upstream.url, retries: 2, timeoutMs: 400 });
    const old = await fresh.app.request(`/v2/applications/${APP}/deployments.json`, { method: 'POST', headers: json_, body: JSON.stringify(at('2026-11-20T11:00:00Z')) });
    expect([old.status, await old.json()]).toEqual([422, { error: { title: 'Invalid deployment: timestamp can not be more than 24 hours in the past (New Relic change tracking)' } }]);
    expect(sent('DeploymentCreate')).toHaveLength(1);
  });

  it.each([
    ['broken JSON', '{"deployment":', json_, 400, 'The request body is not valid JSON'],
    ['a JSON array', '[1]', json_, 400, 'The request body is not valid JSON'],
    ['broken XML', '<deployment><revision>r</deployment>', { ...json_, 'content-type': 'application/xml' }, 400, 'The request body is not valid XML'],
    ['an XML entity bomb', '<!DOCTYPE d [<!ENTITY a "aaaa">]><deployment><revision>&a;</revision></deployment>', { ...json_, 'content-type': 'text/xml' }, 400, 'The request body is not valid XML'],
    ['a form key with a stray bracket', 'deployment[revision=1', { ...json_, 'content-type': 'application/x-www-form-urlencoded' }, 400, 'The request body is not valid form data'],
  ])('%s is a 400, never a 500', async (_label, body, headers, status, title) => {
    const response = await deploy(body, headers);
    expect([response.status, await response.json()]).toEqual([status, { error: { title } }]);
  });

  it('reads XML and form bodies like JSON', async () => {
    script = { ApplicationDeployments: noDeployments, DeploymentCreate: created('ct-x', FIXED_NOW) };
    const xml = await deploy('<?xml version="1.0"?><deployment><revision>7</revision><user>ops</user></deployment>', { ...json_, 'content-type': 'application/xml' });
    expect(xml.status).toBe(201);
    const form = await deploy('deployment[revision]=8&deployment[changelog]=a+b', { ...json_, 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(201);
    const events = sent('DeploymentCreate').map((r) => (r.variables.event as { categoryAndTypeData: { categoryFields: unknown } }).categoryAndTypeData.categoryFields);
    expect(events).toEqual([{ deployment: { version: '7' } }, { deployment: { version: '8', changelog: 'a b' } }]);
  });
});

describe('PUT and DELETE an application', () => {
  const put = (body: unknown) => gateway.app.request(`/v2/applications/${APP}.json`, { method: 'PUT', headers: json_, body: JSON.stringify(body) });
  const entity = (overrides: Record<string, unknown> = {}) => ok({ actor: { entity: apmEntity(PRIMARY_ACCOUNT, APP, overrides) } });

  it('sends one settings update and answers the application read back', async () => {
    script = { ApplicationSettingsUpdate: ok({ agentApplicationSettingsUpdate: { guid: GUID, errors: [] } }), ApplicationByGuid: entity({ name: 'Renamed' }) };
    // The app has no browser side (loader NONE), so turning browser monitoring on picks SPA.
    const response = await put({ application: { name: ' Renamed ', settings: { app_apdex_threshold: '0.7', enable_real_user_monitoring: true, use_server_side_config: true } } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { application: { name: string } }).application.name).toBe('Renamed');
    expect(sent('ApplicationSettingsUpdate')[0]?.variables).toEqual({ guid: GUID, settings: { alias: 'Renamed', apmConfig: { apdexTarget: 0.7 }, browserMonitoring: { loader: 'SPA' } } });
  });

  it('a confirmed update whose read-back fails is an unknown outcome, not a 404', async () => {
    script = { ApplicationSettingsUpdate: ok({ agentApplicationSettingsUpdate: { guid: GUID, errors: [] } }), ApplicationByGuid: ok({ actor: { entity: null } }) };
    const response = await put({ application: { name: 'Renamed' } });
    expect([response.status, await response.json()]).toEqual([
      502,
      { error: { title: 'The change may have been applied, but New Relic did not confirm it: read the application before retrying' } },
    ]);
  });

  it('lists every invalid field under messages, sending nothing', async () => {
    const response = await put({ application: { name: '', settings: { app_apdex_threshold: -1, end_user_apdex_threshold: 'x', enable_real_user_monitoring: 'maybe' } } });
    expect([response.status, await response.json()]).toEqual([
      422,
      {
        error: {
          title: 'Validation error occurred when updating the application',
          messages: [
            "name can't be blank",
            'settings.app_apdex_threshold must be a number greater than 0',
            'settings.end_user_apdex_threshold must be a number greater than 0',
            'settings.enable_real_user_monitoring must be true or false',
          ],
        },
      },
    ]);
    expect((await put({ settings: {} })).status).toBe(422);
    expect(sent('ApplicationSettingsUpdate')).toHaveLength(0);
  });

  it.each([
    ['NOT_FOUND', 404],
    ['ACCESS_DENIED', 403],
    ['INVALID_INPUT', 422],
  ])('maps a payload error %s to %i', async (errorClass, status) => {
    script = { ApplicationSettingsUpdate: ok({ agentApplicationSettingsUpdate: { guid: GUID, errors: [{ errorClass, field: 'alias', description: 'no' }] } }) };
    expect((await put({ application: { name: 'x' } })).status).toBe(status);
  });

  it('refuses to delete a reporting application with 409, sending no mutation; deletes a stopped one', async () => {
    const del = () => gateway.app.request(`/v2/applications/${APP}.json`, { method: 'DELETE', headers: json_ });
    script = { ApplicationByGuid: entity({ reporting: true }) };
    const reporting = await del();
    expect([reporting.status, await reporting.json()]).toEqual([409, { error: { title: 'Cannot delete an application that is still reporting data.' } }]);
    expect(sent('ApplicationDelete')).toHaveLength(0);
    script = { ApplicationByGuid: entity({ reporting: false }), ApplicationDelete: ok({ agentApplicationDelete: { success: true } }) };
    const stopped = await del();
    expect(stopped.status).toBe(200);
    expect(((await stopped.json()) as { application: { id: number } }).application.id).toBe(APP);
    expect(sent('ApplicationDelete')).toHaveLength(1);
  });

  it('answers DELETE of a deployment with a clear 422, sending nothing', async () => {
    const response = await gateway.app.request(`/v2/applications/${APP}/deployments/123.json`, { method: 'DELETE', headers: json_ });
    expect([response.status, await response.json()]).toEqual([422, { error: { title: 'Deployments cannot be deleted: New Relic change tracking events are immutable' } }]);
    expect(upstream.received.filter((r) => r.operationName !== 'AccessibleAccounts')).toHaveLength(0);
  });
});

describe('v0 deployments and app creation: validation titles, nothing sent', () => {
  const form = { 'x-api-key': 'NRAK-TEST-KEY', 'content-type': 'application/x-www-form-urlencoded' };
  it.each([
    ['v0 without an app', '/deployments.xml', 'deployment[revision]=1', form, 422, 'Validation error: an application_id or app_name is required'],
    ['v0 with a malformed id', '/deployments.xml', 'deployment[application_id]=abc&deployment[revision]=1', form, 404, 'No Application found with the given ID'],
    ['v0 with a revision that is not text', '/deployments.xml', JSON.stringify({ deployment: { application_id: APP, revision: true } }), json_, 400, 'Revision parameter required'],
    ['v0 with a control character in the name', '/deployments.xml', 'deployment[app_name]=a%0Ab&deployment[revision]=1', form, 404, 'No Application found with the given name'],
    ['mobile without a name', '/v2/mobile_applications.json', '{"mobile_application":{}}', json_, 422, "Validation error: name can't be blank"],
    ['browser with a long name', '/v2/browser_applications.json', JSON.stringify({ browser_application: { name: 'n'.repeat(256) } }), json_, 422, 'Validation error: name is too long (maximum is 255 characters)'],
  ])('%s', async (_label, path, body, headers, status, title) => {
    const response = await gateway.app.request(path, { method: 'POST', headers, body });
    expect(response.status).toBe(status);
    expect(await response.text()).toContain(title.replace(/'/g, path.endsWith('.xml') ? '&apos;' : "'"));
    expect(upstream.received.filter((r) => r.operationName !== 'AccessibleAccounts')).toHaveLength(0);
  });

  it('v0 without a revision (its documented example): one mutation with the fixed version, answered with a nil revision', async () => {
    script = { ApplicationDeployments: noDeployments, DeploymentCreate: created('ct-v0', FIXED_NOW) };
    for (const body of [`deployment[application_id]=${APP}`, `deployment[application_id]=${APP}&deployment[revision]=%20`]) {
      const response = await gateway.app.request('/deployments.xml', { method: 'POST', headers: form, body });
      const text = await response.text();
      expect(response.status, text).toBe(201);
      expect(text).toContain('<revision nil="true"/>');
    }
    const versions = sent('DeploymentCreate').map((r) => (r.variables.event as { categoryAndTypeData: { categoryFields: unknown } }).categoryAndTypeData.categoryFields);
    expect(versions).toEqual([{ deployment: { version: NO_REVISION_VERSION } }, { deployment: { version: NO_REVISION_VERSION } }]);
    const asJson = await gateway.app.request('/deployments.json', { method: 'POST', headers: form, body: `deployment[application_id]=${APP}` });
    expect(((await asJson.json()) as { deployment: { revision: unknown } }).deployment.revision).toBeNull();
  });

  it('v0 without a revision whose answer is lost: sent once (retries on), answered "may have been recorded"', async () => {
    script = { ApplicationDeployments: noDeployments, DeploymentCreate: (_r, res) => json(res, 500, { errors: [{ message: 'boom' }] }) };
    const response = await gateway.app.request('/deployments.xml', { method: 'POST', headers: form, body: `deployment[application_id]=${APP}` });
    expect(response.status).toBe(502);
    expect(await response.text()).toContain('may have been recorded');
    expect(sent('DeploymentCreate')).toHaveLength(1);
  });

  it('creates a browser app with the Lite loader and reads the key out of the loader script', async () => {
    const guid = entityGuid(PRIMARY_ACCOUNT, 'BROWSER', 'APPLICATION', 777);
    script = {
      BrowserApplicationCreate: ok({ agentApplicationCreateBrowser: { guid, name: 'Web', settings: { loaderType: 'LITE', loaderScript: '<script>NREUM.info={licenseKey:"NRJS-abc123"}</script>' } } }),
    };
    const response = await gateway.app.request('/v2/browser_applications.json', { method: 'POST', headers: json_, body: JSON.stringify({ browser_application: { name: ' Web ' } }) });
    expect([response.status, await response.json()]).toEqual([
      201,
      { browser_application: { id: 777, name: 'Web', browser_monitoring_key: 'NRJS-abc123', loader_script: '<script>NREUM.info={licenseKey:"NRJS-abc123"}</script>' } },
    ]);
    expect(sent('BrowserApplicationCreate')[0]?.variables).toEqual({ accountId: PRIMARY_ACCOUNT, name: 'Web', settings: { loaderType: 'LITE' } });
  });
});
