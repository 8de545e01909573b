import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V2Titles } from '../../src/v2/errors.ts';
import { EntityTitles } from '../../mappings/common/entity-titles.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { deploymentsOf, recordDeployment } from '../../sandbox/writes.ts';
import { decodeRailsXml } from '../support/rails-xml.ts';

/**
 * The legacy face's writes against docs/write-rules.md: every rule with its status and title,
 * the three body encodings, and the reads that follow a write on the same face. Each test
 * takes a fresh sandbox, so writes never leak between tests.
 */
const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const DEMO = { 'x-api-key': 'NRAK-SANDBOX-DEMO' };
const JSON_TYPE = { 'content-type': 'application/json' };
const XML_TYPE = { 'content-type': 'application/xml' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PRIMARY = 1000001;
const SECONDARY = 1000002;

const fresh = (now = FIXED): Sandbox => createSandbox({ seed: 7, apmApps: 20, now: () => now });

type Body = string | Uint8Array | undefined;

function call(sandbox: Sandbox, method: string, path: string, body?: Body, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(sandbox.app.request(path, { method, headers: { ...DEMO, ...headers }, ...(body === undefined ? {} : { body }) }));
}

const json = (sandbox: Sandbox, method: string, path: string, value: unknown): Promise<Response> =>
  call(sandbox, method, path, JSON.stringify(value), JSON_TYPE);

async function expectError(response: Response | Promise<Response>, status: number, title: string): Promise<void> {
  const answer = await response;
  const text = await answer.text();
  expect(answer.status, text).toBe(status);
  expect((JSON.parse(text) as { error: { title: string } }).error.title).toBe(title);
}

async function expectXmlError(response: Response | Promise<Response>, status: number, title: string): Promise<void> {
  const answer = await response;
  const text = await answer.text();
  expect(answer.status, text).toBe(status);
  expect(answer.headers.get('content-type')).toContain('application/xml');
  expect(decodeRailsXml(text).value).toEqual({ error: { title } });
}

async function body<T = Record<string, unknown>>(response: Response | Promise<Response>, status = 200): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  expect(answer.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const primaryApps = (sandbox: Sandbox): SandboxApp[] => sandbox.data.apps.filter((app) => app.accountId === PRIMARY);
const pick = (sandbox: Sandbox, test: (app: SandboxApp) => boolean): SandboxApp => {
  const app = primaryApps(sandbox).find(test);
  if (!app) throw new Error('no app fits');
  return app;
};
const reportingApp = (s: Sandbox): SandboxApp => pick(s, (app) => app.reporting);
const idleApp = (s: Sandbox): SandboxApp => pick(s, (app) => !app.reporting);
const browserApp = (s: Sandbox): SandboxApp => pick(s, (app) => app.browser !== null);
// Browser monitoring not configured (browser-loader.ts): no loader, so no traffic either.
const noBrowserApp = (s: Sandbox): SandboxApp => pick(s, (app) => app.browser === null && app.browserLoader === 'NONE');
const withDeployments = (s: Sandbox): SandboxApp => pick(s, (app) => deploymentsOf(s.data, app).length >= 2);
const foreignApp = (s: Sandbox): SandboxApp => s.data.apps.find((app) => app.accountId === SECONDARY) as SandboxApp;

const v2Time = (epochMs: number): string => `${new Date(epochMs).toISOString().slice(0, 19)}+00:00`;
const appPath = (app: SandboxApp | number | string, format = 'json'): string => `/v2/applications/${typeof app === 'object' ? app.id : app}.${format}`;
const deploymentsPath = (app: SandboxApp | number | string, format = 'json'): string =>
  `/v2/applications/${typeof app === 'object' ? app.id : app}/deployments.${format}`;

interface Deployment {
  id: number;
  revision: string;
  changelog: string | null;
  description: string | null;
  user: string | null;
  timestamp: string;
  links: { application: number };
}

async function listDeployments(sandbox: Sandbox, app: SandboxApp, query = ''): Promise<Deployment[]> {
  return (await body<{ deployments: Deployment[] }>(call(sandbox, 'GET', `${deploymentsPath(app)}${query}`))).deployments;
}

const postDeployment = (sandbox: Sandbox, app: SandboxApp, deployment: unknown): Promise<Response> =>
  json(sandbox, 'POST', deploymentsPath(app), { deployment });

// ---------------------------------------------------------------------------------------------

describe('PUT /v2/applications/{id} (rules §2)', () => {
  it('applies name and settings and answers the application as GET shows it afterwards', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    const version = sandbox.data.writes.version;
    const answer = await body(
      json(sandbox, 'PUT', appPath(app), {
        application: {
          name: '  Renamed App  ',
          settings: { app_apdex_threshold: 0.7, end_user_apdex_threshold: 4.5, enable_real_user_monitoring: true, use_server_side_config: true },
          unknown_key: 'ignored',
        },
      }),
    );
    const shown = await body(call(sandbox, 'GET', appPath(app)));
    expect(answer).toEqual(shown);
    expect(shown).toMatchObject({
      application: {
        id: app.id,
        name: 'Renamed App',
        settings: { app_apdex_threshold: 0.7, end_user_apdex_threshold: 4.5, enable_real_user_monitoring: true, use_server_side_config: app.serverSideConfig },
      },
      links: { 'application.servers': '/v2/servers?ids={server_ids}' },
    });
    expect(app.name).toBe('Renamed App');
    expect(app.apdexTarget).toBe(0.7);
    expect(app.browser?.apdexTarget).toBe(4.5);
    expect(sandbox.data.writes.version).toBeGreaterThan(version);
    // The list shows the new name too.
    const list = await body<{ applications: Array<{ id: number; name: string }> }>(call(sandbox, 'GET', '/v2/applications.json'));
    expect(list.applications.find((a) => a.id === app.id)?.name).toBe('Renamed App');
  });

  it('takes every key as optional, numeric and boolean strings included', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    const before = app.name;
    await body(json(sandbox, 'PUT', appPath(app), { application: {} }));
    expect(app.name).toBe(before);
    await body(json(sandbox, 'PUT', appPath(app), { application: { settings: { app_apdex_threshold: ' 1.25 ', end_user_apdex_threshold: '100' } } }));
    expect(app.apdexTarget).toBe(1.25);
    expect(app.browser?.apdexTarget).toBe(100);
    await body(json(sandbox, 'PUT', appPath(app), { application: { name: null, settings: { app_apdex_threshold: null, enable_real_user_monitoring: 'FALSE' } } }));
    expect(app.name).toBe(before);
    expect(app.apdexTarget).toBe(1.25);
    expect(app.browser).toBeNull();
  });

  it('turns browser monitoring off and on; the end-user target is ignored while it is off', async () => {
    const sandbox = fresh();
    const app = noBrowserApp(sandbox);
    let shown = await body<{ application: { settings: Record<string, unknown> } }>(
      json(sandbox, 'PUT', appPath(app), { application: { settings: { end_user_apdex_threshold: 3 } } }),
    );
    expect(app.browser).toBeNull();
    expect(shown.application.settings).toMatchObject({ end_user_apdex_threshold: 7, enable_real_user_monitoring: false });
    shown = await body(json(sandbox, 'PUT', appPath(app), { application: { settings: { enable_real_user_monitoring: 'true', end_user_apdex_threshold: 3 } } }));
    expect(shown.application.settings).toMatchObject({ end_user_apdex_threshold: 3, enable_real_user_monitoring: true });
    shown = await body(json(sandbox, 'PUT', appPath(app), { application: { settings: { enable_real_user_monitoring: false } } }));
    expect(shown.application.settings).toMatchObject({ enable_real_user_monitoring: false, end_user_apdex_threshold: 7 });
    expect(app.browser).toBeNull();
  });

  it('reads XML and form bodies, and answers in the format of the path', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    const xml = await call(
      sandbox,
      'PUT',
      appPath(app, 'xml'),
      '<?xml version="1.0"?><application><name>XML &amp; Co &#x41;</name><settings><app-apdex-threshold>0.9</app-apdex-threshold><enable_real_user_monitoring>true</enable_real_user_monitoring></settings></application>',
      XML_TYPE,
    );
    const text = await xml.text();
    expect(xml.status, text).toBe(200);
    expect(xml.headers.get('content-type')).toContain('application/xml');
    const decoded = decodeRailsXml(text);
    expect(decoded.root).toBe('response');
    expect(decoded.value).toMatchObject({ application: { name: 'XML & Co A', settings: { app_apdex_threshold: 0.9 } } });
    await body(call(sandbox, 'PUT', appPath(app), 'application[name]=Form+Name%21&application[settings][app_apdex_threshold]=0.3', FORM));
    expect(app.name).toBe('Form Name!');
    expect(app.apdexTarget).toBe(0.3);
    // No content type, a body starting with `{`: JSON.
    await body(call(sandbox, 'PUT', appPath(app), new TextEncoder().encode('  {"application": {"name": "Untyped"}}')));
    expect(app.name).toBe('Untyped');
  });

  it('accepts a name of 255 characters and an apdex target of exactly 100', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    await body(json(sandbox, 'PUT', appPath(app), { application: { name: `${'n'.repeat(255)}  `, settings: { app_apdex_threshold: 100 } } }));
    expect(app.name).toBe('n'.repeat(255));
    expect(app.apdexTarget).toBe(100);
  });

  const TITLE = 'Validation error occurred when updating the application';
  const cases: Array<[string, unknown, string[]]> = [
    ['no application object', {}, ['application must be an object']],
    ['application not an object', { application: 'x' }, ['application must be an object']],
    ['application a list', { application: [{ name: 'x' }] }, ['application must be an object']],
    ['blank name', { application: { name: '   ' } }, ["name can't be blank"]],
    ['long name', { application: { name: 'x'.repeat(256) } }, ['name is too long (maximum is 255 characters)']],
    ['name a number', { application: { name: 42 } }, ['name must be a string']],
    ['settings a string', { application: { settings: 'x' } }, ['settings must be an object']],
    ['apdex zero', { application: { settings: { app_apdex_threshold: 0 } } }, ['settings.app_apdex_threshold must be a number greater than 0']],
    ['apdex negative', { application: { settings: { app_apdex_threshold: '-1' } } }, ['settings.app_apdex_threshold must be a number greater than 0']],
    ['apdex text', { application: { settings: { app_apdex_threshold: 'fast' } } }, ['settings.app_apdex_threshold must be a number greater than 0']],
    ['apdex boolean', { application: { settings: { app_apdex_threshold: true } } }, ['settings.app_apdex_threshold must be a number greater than 0']],
    ['apdex above 100', { application: { settings: { app_apdex_threshold: 100.5 } } }, ['settings.app_apdex_threshold must be a number less than or equal to 100']],
    ['end-user apdex zero', { application: { settings: { end_user_apdex_threshold: 0 } } }, ['settings.end_user_apdex_threshold must be a number greater than 0']],
    ['end-user apdex above 100', { application: { settings: { end_user_apdex_threshold: '1e3' } } }, ['settings.end_user_apdex_threshold must be a number less than or equal to 100']],
    ['rum not boolean', { application: { settings: { enable_real_user_monitoring: 'yes' } } }, ['settings.enable_real_user_monitoring must be true or false']],
    [
      'several at once',
      { application: { name: '', settings: { app_apdex_threshold: 0, enable_real_user_monitoring: 1 } } },
      ["name can't be blank", 'settings.app_apdex_threshold must be a number greater than 0', 'settings.enable_real_user_monitoring must be true or false'],
    ],
  ];
  for (const [name, payload, messages] of cases) {
    it(`answers 422 with messages naming the field: ${name}`, async () => {
      const sandbox = fresh();
      const app = browserApp(sandbox);
      const before = JSON.stringify(app);
      const version = sandbox.data.writes.version;
      const answer = await body(json(sandbox, 'PUT', appPath(app), payload), 422);
      expect(answer).toEqual({ error: { title: TITLE, messages } });
      expect(JSON.stringify(app)).toBe(before);
      expect(sandbox.data.writes.version).toBe(version);
    });
  }

  it('changes nothing when one rule of several is broken', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    const name = app.name;
    await body(json(sandbox, 'PUT', appPath(app), { application: { name: 'Would be new', settings: { app_apdex_threshold: 500 } } }), 422);
    expect(app.name).toBe(name);
  });

  it('answers 404 for unknown, malformed and foreign ids', async () => {
    const sandbox = fresh();
    for (const id of ['999999999', 'abc', '0', '-5', String(foreignApp(sandbox).id)]) {
      await expectError(json(sandbox, 'PUT', appPath(id), { application: { name: 'x' } }), 404, EntityTitles.applicationNotFound);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('DELETE /v2/applications/{id} (rules §3)', () => {
  it('refuses a reporting application with 409', async () => {
    const sandbox = fresh();
    const app = reportingApp(sandbox);
    await expectError(call(sandbox, 'DELETE', appPath(app)), 409, 'Cannot delete an application that is still reporting data.');
    expect(sandbox.data.apps).toContain(app);
  });

  it('removes a stopped application and answers it as it was', async () => {
    const sandbox = fresh();
    const app = idleApp(sandbox);
    const before = await body(call(sandbox, 'GET', appPath(app)));
    const answer = await body(call(sandbox, 'DELETE', appPath(app)));
    expect(answer).toEqual(before);
    expect(sandbox.data.apps).not.toContain(app);
    await expectError(call(sandbox, 'GET', appPath(app)), 404, EntityTitles.applicationNotFound);
    const list = await body<{ applications: Array<{ id: number }> }>(call(sandbox, 'GET', '/v2/applications.json'));
    expect(list.applications.map((a) => a.id)).not.toContain(app.id);
    await expectError(call(sandbox, 'GET', deploymentsPath(app)), 404, EntityTitles.applicationNotFound);
    await expectError(call(sandbox, 'DELETE', appPath(app)), 404, EntityTitles.applicationNotFound);
  });

  it('answers XML for .xml and 404 for a foreign application', async () => {
    const sandbox = fresh();
    const app = idleApp(sandbox);
    const answer = await call(sandbox, 'DELETE', appPath(app, 'xml'));
    expect(answer.status).toBe(200);
    expect(decodeRailsXml(await answer.text()).value).toMatchObject({ application: { id: app.id, reporting: false } });
    await expectError(call(sandbox, 'DELETE', appPath(foreignApp(sandbox))), 404, EntityTitles.applicationNotFound);
    await expectXmlError(call(sandbox, 'DELETE', appPath(reportingApp(sandbox), 'xml')), 409, 'Cannot delete an application that is still reporting data.');
  });
});

// ---------------------------------------------------------------------------------------------

describe('GET /v2/applications/{id}/deployments (rules §4)', () => {
  it('lists the deployments newest first in the v2 shape', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const response = await call(sandbox, 'GET', deploymentsPath(app));
    const answer = await body<{ deployments: Deployment[]; links: Record<string, string> }>(response);
    expect(response.headers.get('link')).toBeNull();
    expect(answer.links).toEqual({ 'deployment.agent': '/v2/applications/{application_id}' });
    expect(answer.deployments).toEqual(
      deploymentsOf(sandbox.data, app).map((d) => ({
        id: d.id,
        revision: d.revision,
        changelog: d.changelog,
        description: d.description,
        user: d.user,
        timestamp: v2Time(d.timestamp),
        links: { application: app.id },
      })),
    );
    const times = answer.deployments.map((d) => Date.parse(d.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('shows only the last 13 months, nothing in the future, and an empty list for an app without any', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const fields = { revision: 'r', changelog: null, description: null, user: null };
    const old = recordDeployment(sandbox.data, app, { ...fields, timestamp: Date.UTC(2025, 9, 22, 11, 0, 0) }, 'Deployment');
    const edge = recordDeployment(sandbox.data, app, { ...fields, timestamp: Date.UTC(2025, 9, 22, 12, 0, 30) }, 'Deployment');
    const ahead = recordDeployment(sandbox.data, app, { ...fields, timestamp: FIXED + 3_600_000 }, 'ChangeTrackingEvent');
    const ids = (await listDeployments(sandbox, app)).map((d) => d.id);
    expect(ids).toContain(edge.id);
    expect(ids).not.toContain(old.id);
    expect(ids).not.toContain(ahead.id);
    const empty = pick(sandbox, (a) => deploymentsOf(sandbox.data, a).length === 0);
    expect(await listDeployments(sandbox, empty)).toEqual([]);
  });

  it('pages 200 at a time with the Link header', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const existing = deploymentsOf(sandbox.data, app).length;
    for (let i = 0; i < 405 - existing; i++) {
      recordDeployment(sandbox.data, app, { revision: `r${i}`, changelog: null, description: null, user: null, timestamp: FIXED - (i + 1) * 60_000 }, 'Deployment');
    }
    const first = await call(sandbox, 'GET', deploymentsPath(app));
    expect(((await first.json()) as { deployments: unknown[] }).deployments).toHaveLength(200);
    const base = `http://localhost${deploymentsPath(app)}`;
    expect(first.headers.get('link')).toBe(`<${base}?page=2>; rel="next", <${base}?page=3>; rel="last"`);
    const third = await call(sandbox, 'GET', `${deploymentsPath(app)}?page=3`);
    expect(((await third.json()) as { deployments: unknown[] }).deployments).toHaveLength(5);
    expect(third.headers.get('link')).toBe(`<${base}?page=1>; rel="first", <${base}?page=2>; rel="prev"`);
    const all = [...(await listDeployments(sandbox, app)), ...(await listDeployments(sandbox, app, '?page=2')), ...(await listDeployments(sandbox, app, '?page=3'))];
    expect(new Set(all.map((d) => d.id)).size).toBe(405);
    await expectError(call(sandbox, 'GET', `${deploymentsPath(app)}?page=0`), 422, 'Invalid parameter page: expected a whole number from 1 to 1000000');
  });

  it('answers XML and 404 for a foreign app', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const answer = await call(sandbox, 'GET', deploymentsPath(app, 'xml'));
    expect(answer.status).toBe(200);
    const decoded = decodeRailsXml(await answer.text()).value as unknown as { deployments: Deployment[] };
    expect(decoded.deployments.map((d) => d.id)).toEqual(deploymentsOf(sandbox.data, app).map((d) => d.id));
    await expectError(call(sandbox, 'GET', deploymentsPath(foreignApp(sandbox))), 404, EntityTitles.applicationNotFound);
  });
});

describe('POST /v2/applications/{id}/deployments (rules §4)', () => {
  it('records a deployment (201) that the listing then shows with the same id, revision and timestamp', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const version = sandbox.data.writes.version;
    const created = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'v9.9.9' }), 201)).deployment;
    expect(created).toEqual({
      id: expect.any(Number) as number,
      revision: 'v9.9.9',
      changelog: null,
      description: null,
      user: null,
      timestamp: '2026-11-22T12:00:30+00:00',
      links: { application: app.id },
    });
    expect(Number.isSafeInteger(created.id) && created.id > 0).toBe(true);
    const [newest] = await listDeployments(sandbox, app);
    expect(newest).toEqual(created);
    const stored = deploymentsOf(sandbox.data, app)[0];
    expect(stored).toMatchObject({ id: created.id, eventType: 'Deployment', appId: app.id, accountId: PRIMARY, entityGuid: app.guid, timestamp: FIXED });
    expect(sandbox.data.writes.version).toBeGreaterThan(version);
  });

  it('keeps every field, and an explicit timestamp in any accepted spelling', async () => {
    const sandbox = fresh();
    const app = pick(sandbox, (a) => deploymentsOf(sandbox.data, a).length === 0);
    const fields = { revision: '  abc123 ', changelog: 'Fixed the bugs', description: 'Second try', user: 'datanerd@example.com', timestamp: '2026-11-22 09:00' };
    const created = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, fields), 201)).deployment;
    expect(created).toMatchObject({ ...fields, timestamp: '2026-11-22T09:00:00+00:00' });
    const later = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 2, timestamp: '2026-11-22T06:00:01-04:00' }), 201)).deployment;
    expect(later).toMatchObject({ revision: '2', timestamp: '2026-11-22T10:00:01+00:00' });
    const dated = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'z', timestamp: '2026-11-22t11:30:00.987z' }), 201)).deployment;
    expect(dated.timestamp).toBe('2026-11-22T11:30:00+00:00');
    expect((await listDeployments(sandbox, app)).map((d) => d.revision)).toEqual(['z', '2', '  abc123 ']);
  });

  it('defaults the timestamp to the time of the request in whole seconds, even twice in one second', async () => {
    const sandbox = fresh(FIXED + 789);
    const app = pick(sandbox, (a) => deploymentsOf(sandbox.data, a).length === 0);
    const one = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'a' }), 201)).deployment;
    const two = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'b', timestamp: '' }), 201)).deployment;
    expect(one.timestamp).toBe('2026-11-22T12:00:30+00:00');
    expect(two.timestamp).toBe(one.timestamp);
    expect(one.id).not.toBe(two.id);
    expect(deploymentsOf(sandbox.data, app).map((d) => d.timestamp)).toEqual([FIXED, FIXED]);
  });

  it('reads XML and form bodies', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const xml = await call(
      sandbox,
      'POST',
      deploymentsPath(app, 'xml'),
      '<deployment><revision><![CDATA[rel<1>]]></revision><changelog>a &lt; b</changelog><user nil="true"/><description></description></deployment>',
      { 'content-type': 'text/xml; charset=utf-8' },
    );
    const text = await xml.text();
    expect(xml.status, text).toBe(201);
    expect(decodeRailsXml(text).value).toMatchObject({ deployment: { revision: 'rel<1>', changelog: 'a < b', user: null, description: '' } });
    const form = (await body<{ deployment: Deployment }>(call(sandbox, 'POST', deploymentsPath(app), 'deployment%5Brevision%5D=form+rev&deployment[user]=me%20too', FORM), 201)).deployment;
    expect(form).toMatchObject({ revision: 'form rev', user: 'me too', changelog: null });
    expect((await listDeployments(sandbox, app)).slice(0, 2).map((d) => d.revision)).toEqual(['rel<1>', 'form rev']);
  });

  const emoji = '\u{1F680}';
  const rules: Array<[string, unknown, number, string]> = [
    ['no body', undefined, 400, 'missing parameter: deployment'],
    ['no wrapper', { revision: 'x' }, 400, 'missing parameter: deployment'],
    ['wrapper a string', 'x', 400, 'missing parameter: deployment'],
    ['wrapper a list', [{ revision: 'x' }], 400, 'missing parameter: deployment'],
    ['no revision', {}, 400, 'Revision parameter required'],
    ['empty revision', { revision: '' }, 400, 'Revision parameter required'],
    ['blank revision', { revision: ' \t ' }, 400, 'Revision parameter required'],
    ['null revision', { revision: null }, 400, 'Revision parameter required'],
    ['boolean revision', { revision: true }, 400, 'Revision parameter required'],
    ['object revision', { revision: { a: 1 } }, 400, 'Revision parameter required'],
    ['revision too long', { revision: 'r'.repeat(128) }, 422, 'Invalid deployment: revision is longer than 127 characters'],
    ['revision too long with spaces', { revision: `${' '.repeat(120)}12345678` }, 422, 'Invalid deployment: revision is longer than 127 characters'],
    ['changelog too long', { revision: 'r', changelog: 'c'.repeat(65_536) }, 422, 'Invalid deployment: changelog is longer than 65535 characters'],
    ['description too long', { revision: 'r', description: 'd'.repeat(65_536) }, 422, 'Invalid deployment: description is longer than 65535 characters'],
    ['user too long', { revision: 'r', user: 'u'.repeat(32) }, 422, 'Invalid deployment: user is longer than 31 characters'],
    ['changelog not text', { revision: 'r', changelog: ['a'] }, 422, 'Invalid deployment: changelog must be text'],
    ['revision length before user length', { revision: 'r'.repeat(128), user: 'u'.repeat(32) }, 422, 'Invalid deployment: revision is longer than 127 characters'],
    ['lengths before 4-byte characters', { revision: emoji, user: 'u'.repeat(32) }, 422, 'Invalid deployment: user is longer than 31 characters'],
    ['4-byte revision', { revision: `v1 ${emoji}` }, 422, 'Invalid deployment: revision contains a 4-byte UTF-8 character'],
    ['4-byte changelog first', { revision: 'r', changelog: emoji, user: emoji }, 422, 'Invalid deployment: changelog contains a 4-byte UTF-8 character'],
    ['4-byte description', { revision: 'r', description: `x${emoji}` }, 422, 'Invalid deployment: description contains a 4-byte UTF-8 character'],
    ['4-byte user', { revision: 'r', user: emoji }, 422, 'Invalid deployment: user contains a 4-byte UTF-8 character'],
    ['127 characters outside the BMP are 127 characters', { revision: emoji.repeat(127) }, 422, 'Invalid deployment: revision contains a 4-byte UTF-8 character'],
    ['4-byte before timestamp', { revision: emoji, timestamp: 'soon' }, 422, 'Invalid deployment: revision contains a 4-byte UTF-8 character'],
    ['timestamp not a time', { revision: 'r', timestamp: 'yesterday' }, 422, 'Invalid deployment: timestamp must be an ISO 8601 time'],
    ['timestamp out of range', { revision: 'r', timestamp: '2026-02-30T10:00:00Z' }, 422, 'Invalid deployment: timestamp must be an ISO 8601 time'],
    ['timestamp a number', { revision: 'r', timestamp: 1_790_000_000 }, 422, 'Invalid deployment: timestamp must be an ISO 8601 time'],
    ['timestamp in the future', { revision: 'r', timestamp: '2026-11-22T12:00:31Z' }, 422, 'Invalid deployment: timestamp must not be in the future'],
    ['timestamp in the future by offset', { revision: 'r', timestamp: '2026-11-22T12:00:00-01:00' }, 422, 'Invalid deployment: timestamp must not be in the future'],
  ];
  for (const [name, deployment, status, title] of rules) {
    it(`answers ${status} ${title}: ${name}`, async () => {
      const sandbox = fresh();
      const app = withDeployments(sandbox);
      const count = deploymentsOf(sandbox.data, app).length;
      const payload = deployment === undefined ? undefined : name.startsWith('no wrapper') || name.startsWith('wrapper') ? deployment : { deployment };
      await expectError(call(sandbox, 'POST', deploymentsPath(app), payload === undefined ? undefined : JSON.stringify(payload), JSON_TYPE), status, title);
      expect(deploymentsOf(sandbox.data, app)).toHaveLength(count);
    });
  }

  it('accepts the longest values and a timestamp equal to now', async () => {
    const sandbox = fresh();
    const app = pick(sandbox, (a) => deploymentsOf(sandbox.data, a).length === 0);
    const fields = { revision: 'r'.repeat(127), changelog: 'c'.repeat(65_535), description: '\u00e9'.repeat(65_535), user: '\uffff'.repeat(31), timestamp: '2026-11-22T12:00:30+00:00' };
    const created = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, fields), 201)).deployment;
    expect(created).toMatchObject(fields);
  });

  it('requires an explicit timestamp strictly later than the most recent deployment', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const newest = deploymentsOf(sandbox.data, app)[0]?.timestamp as number;
    const stale = 'Invalid deployment: timestamp must be later than the most recent deployment';
    await expectError(postDeployment(sandbox, app, { revision: 'r', timestamp: v2Time(newest) }), 422, stale);
    await expectError(postDeployment(sandbox, app, { revision: 'r', timestamp: v2Time(newest - 1000) }), 422, stale);
    await expectError(postDeployment(sandbox, app, { revision: 'r', timestamp: '1970-01-01T00:00:00Z' }), 422, stale);
    const created = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'r', timestamp: v2Time(newest + 1000) }), 201)).deployment;
    expect(created.timestamp).toBe(v2Time(newest + 1000));
    // A newer event, even one outside the listing (ahead of now), is the most recent deployment.
    recordDeployment(sandbox.data, app, { revision: 'ahead', changelog: null, description: null, user: null, timestamp: FIXED + 60_000 }, 'ChangeTrackingEvent');
    await expectError(postDeployment(sandbox, app, { revision: 'r', timestamp: v2Time(FIXED) }), 422, stale);
    // The default timestamp is not held to that rule.
    await body(postDeployment(sandbox, app, { revision: 'default' }), 201);
  });

  it('answers 404 for an unknown or foreign app', async () => {
    const sandbox = fresh();
    await expectError(postDeployment(sandbox, foreignApp(sandbox), { revision: 'r' }), 404, EntityTitles.applicationNotFound);
    await expectError(postDeployment(sandbox, { id: 12 } as SandboxApp, { revision: 'r' }), 404, EntityTitles.applicationNotFound);
  });
});

describe('DELETE /v2/applications/{id}/deployments/{deployment_id}', () => {
  it('deletes a deployment, answers it, and the listing no longer shows it', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const created = (await body<{ deployment: Deployment }>(postDeployment(sandbox, app, { revision: 'gone soon' }), 201)).deployment;
    const answer = await body<{ deployment: Deployment }>(call(sandbox, 'DELETE', `/v2/applications/${app.id}/deployments/${created.id}.json`));
    expect(answer).toEqual({ deployment: created });
    expect((await listDeployments(sandbox, app)).map((d) => d.id)).not.toContain(created.id);
    const seeded = deploymentsOf(sandbox.data, app)[0] as { id: number };
    const xml = await call(sandbox, 'DELETE', `/v2/applications/${app.id}/deployments/${seeded.id}.xml`);
    expect(xml.status).toBe(200);
    expect(decodeRailsXml(await xml.text()).value).toMatchObject({ deployment: { id: seeded.id } });
    expect(deploymentsOf(sandbox.data, app).map((d) => d.id)).not.toContain(seeded.id);
  });

  it('answers 404 for an unknown deployment, a malformed id, or another app', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const other = pick(sandbox, (a) => a !== app && deploymentsOf(sandbox.data, a).length > 0);
    const theirs = deploymentsOf(sandbox.data, other)[0]?.id as number;
    for (const id of [String(theirs), 'abc', '0', '1.5', '99999999999999999999']) {
      await expectError(call(sandbox, 'DELETE', `/v2/applications/${app.id}/deployments/${id}.json`), 404, 'No Deployment found with the given ID');
    }
    await expectError(call(sandbox, 'DELETE', `/v2/applications/${foreignApp(sandbox).id}/deployments/1.json`), 404, EntityTitles.applicationNotFound);
    expect(deploymentsOf(sandbox.data, other)[0]?.id).toBe(theirs);
  });
});

// ---------------------------------------------------------------------------------------------

describe('POST /deployments.xml (v0, rules §5)', () => {
  const v0 = (sandbox: Sandbox, form: string, query = ''): Promise<Response> => call(sandbox, 'POST', `/deployments.xml${query}`, form, FORM);

  it('records by application_id and answers the Rails-style document (201)', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const response = await v0(sandbox, `deployment[application_id]=${app.id}&deployment[revision]=1.2.3&deployment[changelog]=a+%26+b&deployment[user]=ci`);
    const text = await response.text();
    expect(response.status, text).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/xml');
    const stored = deploymentsOf(sandbox.data, app)[0] as { id: number };
    expect(text).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<deployment>',
        `  <account-id type="integer">${PRIMARY}</account-id>`,
        `  <agent-id type="integer">${app.id}</agent-id>`,
        '  <changelog>a &amp; b</changelog>',
        '  <description nil="true"/>',
        `  <id type="integer">${stored.id}</id>`,
        '  <revision>1.2.3</revision>',
        '  <timestamp type="datetime">2026-11-22T12:00:30+00:00</timestamp>',
        '  <user>ci</user>',
        '</deployment>',
        '',
      ].join('\n'),
    );
    const [listed] = await listDeployments(sandbox, app);
    expect(listed).toMatchObject({ id: stored.id, revision: '1.2.3', changelog: 'a & b', user: 'ci', description: null });
  });

  it('records by exact, case-sensitive app name within the account', async () => {
    const sandbox = fresh();
    const app = pick(sandbox, (a) => /['\\]/.test(a.name));
    const response = await v0(sandbox, `deployment[app_name]=${encodeURIComponent(app.name)}&deployment[revision]=by-name`);
    expect(response.status, await response.text()).toBe(201);
    expect(deploymentsOf(sandbox.data, app)[0]?.revision).toBe('by-name');
    await expectXmlError(v0(sandbox, `deployment[app_name]=${encodeURIComponent(app.name.toUpperCase())}&deployment[revision]=x`), 404, 'No Application found with the given name');
    await expectXmlError(v0(sandbox, `deployment[app_name]=${encodeURIComponent(foreignApp(sandbox).name)}&deployment[revision]=x`), 404, 'No Application found with the given name');
  });

  it('prefers application_id over app_name', async () => {
    const sandbox = fresh();
    const [first, second] = primaryApps(sandbox) as [SandboxApp, SandboxApp];
    expect((await v0(sandbox, `deployment[app_name]=${encodeURIComponent(second.name)}&deployment[application_id]=${first.id}&deployment[revision]=both`)).status).toBe(201);
    expect(deploymentsOf(sandbox.data, first)[0]?.revision).toBe('both');
    expect(deploymentsOf(sandbox.data, second)[0]?.revision).not.toBe('both');
    await expectXmlError(v0(sandbox, `deployment[application_id]=999&deployment[app_name]=${encodeURIComponent(second.name)}&deployment[revision]=x`), 404, EntityTitles.applicationNotFound);
    await expectXmlError(v0(sandbox, `deployment[application_id]=${foreignApp(sandbox).id}&deployment[revision]=x`), 404, EntityTitles.applicationNotFound);
    await expectXmlError(v0(sandbox, `deployment[application_id]=abc&deployment[revision]=x`), 404, EntityTitles.applicationNotFound);
  });

  it('takes its fields from the query string too, and from XML or JSON bodies', async () => {
    const sandbox = fresh();
    const app = pick(sandbox, (a) => deploymentsOf(sandbox.data, a).length === 0);
    expect((await call(sandbox, 'POST', `/deployments.xml?deployment[application_id]=${app.id}&deployment[revision]=q1&deployment[timestamp]=2026-11-22T10:00:00Z`)).status).toBe(201);
    expect((await v0(sandbox, 'deployment[revision]=q2', `?deployment[application_id]=${app.id}`)).status).toBe(201);
    const xml = await call(sandbox, 'POST', '/deployments.xml', `<deployment><application-id>${app.id}</application-id><revision>q3</revision></deployment>`, XML_TYPE);
    expect(xml.status).toBe(201);
    const fromJson = await call(sandbox, 'POST', '/deployments.xml', JSON.stringify({ deployment: { application_id: app.id, revision: 'q4' } }), JSON_TYPE);
    expect(fromJson.status).toBe(201);
    expect(deploymentsOf(sandbox.data, app).map((d) => [d.revision, d.timestamp])).toEqual([
      ['q2', FIXED],
      ['q3', FIXED],
      ['q4', FIXED],
      ['q1', Date.UTC(2026, 10, 22, 10)],
    ]);
  });

  it('records a deployment without a revision (v0 documented none): nil in the answer and in the v2 listing', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const before = deploymentsOf(sandbox.data, app).length;
    const response = await v0(sandbox, `deployment[application_id]=${app.id}&deployment[description]=no+rev`);
    const text = await response.text();
    expect(response.status, text).toBe(201);
    expect(text).toContain('  <revision nil="true"/>');
    expect(deploymentsOf(sandbox.data, app)).toHaveLength(before + 1);
    const [listed] = await listDeployments(sandbox, app);
    expect(listed).toMatchObject({ revision: null, description: 'no rev' });
    const asJson = await call(sandbox, 'POST', '/deployments.json', JSON.stringify({ deployment: { application_id: app.id, revision: null } }), JSON_TYPE);
    expect(((await asJson.json()) as { deployment: { revision: unknown } }).deployment.revision).toBeNull();
    // The v2 route still requires one.
    await expectError(postDeployment(sandbox, app, {}), 400, 'Revision parameter required');
  });

  it('applies the rules of §4 and answers errors as v2 XML', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    await expectXmlError(v0(sandbox, 'deployment[revision]=x'), 422, 'Validation error: an application_id or app_name is required');
    await expectXmlError(v0(sandbox, 'deployment[revision]=x&deployment[application_id]=&deployment[app_name]=+'), 422, 'Validation error: an application_id or app_name is required');
    await expectXmlError(v0(sandbox, 'revision=x'), 400, 'missing parameter: deployment');
    await expectXmlError(call(sandbox, 'POST', '/deployments.xml'), 400, 'missing parameter: deployment');
    await expectXmlError(call(sandbox, 'POST', '/deployments.xml', JSON.stringify({ deployment: { application_id: app.id, revision: true } }), JSON_TYPE), 400, 'Revision parameter required');
    await expectXmlError(v0(sandbox, `deployment[application_id]=${app.id}&deployment[revision]=${'r'.repeat(128)}`), 422, 'Invalid deployment: revision is longer than 127 characters');
    await expectXmlError(v0(sandbox, `deployment[application_id]=${app.id}&deployment[revision]=r&deployment[user]=%F0%9F%9A%80`), 422, 'Invalid deployment: user contains a 4-byte UTF-8 character');
    await expectXmlError(v0(sandbox, `deployment[application_id]=${app.id}&deployment[revision]=r&deployment[timestamp]=2030-01-01`), 422, 'Invalid deployment: timestamp must not be in the future');
    await expectXmlError(v0(sandbox, `deployment[application_id]=${app.id}&deployment[revision]=r&deployment[timestamp]=2000-01-01`), 422, 'Invalid deployment: timestamp must be later than the most recent deployment');
    await expectXmlError(v0(sandbox, 'deployment[revision]=x%zz'), 400, 'The request body is not valid form data');
    await expectXmlError(call(sandbox, 'POST', '/deployments.xml', 'deployment[revision]=x', { 'x-api-key': '' }), 401, V2Titles.apiKeyRequired);
  });

  it('allows only POST', async () => {
    const sandbox = fresh();
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      const response = await call(sandbox, method, '/deployments.xml');
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('POST /v2/mobile_applications and /v2/browser_applications (rules §6)', () => {
  it('creates a mobile application (201) in the caller’s account', async () => {
    const sandbox = fresh();
    const answer = await body<{ application: { id: number } }>(json(sandbox, 'POST', '/v2/mobile_applications.json', { mobile_application: { name: '  My Phone App ' } }), 201);
    expect(answer).toEqual({ application: { id: expect.any(Number) as number, name: 'My Phone App', health_status: 'unknown', reporting: false } });
    const created = sandbox.data.writes.createdApps.at(-1);
    expect(created).toMatchObject({ kind: 'MOBILE', id: answer.application.id, name: 'My Phone App', accountId: PRIMARY });
    const alias = await body<{ application: { name: string } }>(json(sandbox, 'POST', '/v2/mobile_applications.json', { application: { name: 'Alias' } }), 201);
    expect(alias.application.name).toBe('Alias');
    const multi = await call(sandbox, 'POST', '/v2/mobile_applications.xml', '<mobile_application><name>Second</name></mobile_application>', {
      ...XML_TYPE,
      'x-api-key': 'NRAK-SANDBOX-MULTI',
      'x-account-id': String(SECONDARY),
    });
    expect(multi.status).toBe(201);
    expect(decodeRailsXml(await multi.text()).value).toMatchObject({ application: { name: 'Second', health_status: 'unknown', reporting: false } });
    expect(sandbox.data.writes.createdApps.at(-1)).toMatchObject({ name: 'Second', accountId: SECONDARY });
  });

  it('creates a browser application (201) with its key and Lite loader', async () => {
    const sandbox = fresh();
    const answer = await body<{ browser_application: { id: number; browser_monitoring_key: string; loader_script: string } }>(
      call(sandbox, 'POST', '/v2/browser_applications.json', 'browser_application[name]=Storefront+Web', FORM),
      201,
    );
    const app = answer.browser_application;
    expect(Object.keys(app)).toEqual(['id', 'name', 'browser_monitoring_key', 'loader_script']);
    expect(app).toMatchObject({ name: 'Storefront Web' });
    expect(app.loader_script).toMatch(/^<script type="text\/javascript">/);
    expect(app.loader_script).toContain(`licenseKey:"${app.browser_monitoring_key}"`);
    expect(sandbox.data.writes.createdApps.at(-1)).toMatchObject({ kind: 'BROWSER', id: app.id, accountId: PRIMARY, browserMonitoringKey: app.browser_monitoring_key });
  });

  const nameRules: Array<[string, string, unknown, string]> = [
    ['mobile without a wrapper', '/v2/mobile_applications.json', {}, "Validation error: name can't be blank"],
    ['mobile without a name', '/v2/mobile_applications.json', { mobile_application: {} }, "Validation error: name can't be blank"],
    ['mobile blank name', '/v2/mobile_applications.json', { mobile_application: { name: '  ' } }, "Validation error: name can't be blank"],
    ['mobile name a number', '/v2/mobile_applications.json', { mobile_application: { name: 5 } }, "Validation error: name can't be blank"],
    ['mobile long name', '/v2/mobile_applications.json', { mobile_application: { name: 'm'.repeat(256) } }, 'Validation error: name is too long (maximum is 255 characters)'],
    ['browser under the mobile wrapper', '/v2/browser_applications.json', { application: { name: 'x' } }, "Validation error: name can't be blank"],
    ['browser empty name', '/v2/browser_applications.json', { browser_application: { name: '' } }, "Validation error: name can't be blank"],
    ['browser long name', '/v2/browser_applications.json', { browser_application: { name: 'b'.repeat(256) } }, 'Validation error: name is too long (maximum is 255 characters)'],
  ];
  for (const [name, path, payload, title] of nameRules) {
    it(`answers 422 ${title}: ${name}`, async () => {
      const sandbox = fresh();
      await expectError(json(sandbox, 'POST', path, payload), 422, title);
      expect(sandbox.data.writes.createdApps).toHaveLength(0);
    });
  }

  it('accepts a name of 255 characters after trimming', async () => {
    const sandbox = fresh();
    await body(json(sandbox, 'POST', '/v2/browser_applications.json', { browser_application: { name: ` ${'b'.repeat(255)} ` } }), 201);
  });
});

// ---------------------------------------------------------------------------------------------

describe('methods and malformed requests', () => {
  it('answers 405 with the methods each route allows', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const cases: Array<[string, string, string]> = [
      ['PATCH', appPath(app), 'GET, PUT, DELETE'],
      ['POST', appPath(app), 'GET, PUT, DELETE'],
      ['PUT', deploymentsPath(app), 'GET, POST'],
      ['DELETE', deploymentsPath(app), 'GET, POST'],
      ['GET', `/v2/applications/${app.id}/deployments/1.json`, 'DELETE'],
      ['HEAD', `/v2/applications/${app.id}/deployments/1.json`, 'DELETE'],
      ['PUT', '/v2/mobile_applications.json', 'POST, GET'],
      ['PUT', '/v2/browser_applications.xml', 'POST, GET'],
      ['POST', '/v2/applications.json', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      // A POST with a JSON body: a form or bodiless POST to a route without one is served as its GET.
      const response = method === 'POST' ? await call(sandbox, method, path, '{}', JSON_TYPE) : await call(sandbox, method, path);
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
    }
    expect((await call(sandbox, 'HEAD', deploymentsPath(app))).status).toBe(200);
  });

  it('asks for a key before writing', async () => {
    const sandbox = fresh();
    const app = idleApp(sandbox);
    await expectError(call(sandbox, 'DELETE', appPath(app), undefined, { 'x-api-key': '' }), 401, V2Titles.apiKeyRequired);
    await expectError(call(sandbox, 'DELETE', appPath(app), undefined, { 'x-api-key': 'NRAK-NOPE' }), 401, V2Titles.invalidApiKey);
    expect(sandbox.data.apps).toContain(app);
  });

  const encoder = new TextEncoder();
  const malformed: Array<[string, Body, Record<string, string>, string]> = [
    ['truncated JSON', '{"deployment": {"revision": "x"', JSON_TYPE, 'The request body is not valid JSON'],
    ['single-quoted JSON', "{'deployment': {'revision': 'x'}}", JSON_TYPE, 'The request body is not valid JSON'],
    ['untyped broken JSON', encoder.encode('{deployment'), {}, 'The request body is not valid JSON'],
    ['JSON with invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), JSON_TYPE, 'The request body is not valid JSON'],
    ['unclosed XML', '<deployment><revision>x</revision>', XML_TYPE, 'The request body is not valid XML'],
    ['two XML roots', '<deployment/><deployment/>', XML_TYPE, 'The request body is not valid XML'],
    ['XML text after the root', '<deployment><revision>x</revision></deployment>tail', XML_TYPE, 'The request body is not valid XML'],
    ['not XML at all', 'revision=x', XML_TYPE, 'The request body is not valid XML'],
    ['XML with a DOCTYPE', '<!DOCTYPE deployment><deployment><revision>x</revision></deployment>', XML_TYPE, 'The request body is not valid XML'],
    [
      'XML entity expansion',
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><deployment><revision>&c;</revision></deployment>',
      XML_TYPE,
      'The request body is not valid XML',
    ],
    ['XML external entity', '<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><deployment><revision>&x;</revision></deployment>', XML_TYPE, 'The request body is not valid XML'],
    ['undeclared XML entity', '<deployment><revision>&nbsp;</revision></deployment>', XML_TYPE, 'The request body is not valid XML'],
    ['XML character reference to NUL', '<deployment><revision>&#0;</revision></deployment>', XML_TYPE, 'The request body is not valid XML'],
    ['deeply nested XML', `${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}`, XML_TYPE, 'The request body is not valid XML'],
    ['broken percent escape', 'deployment[revision]=%zz', FORM, 'The request body is not valid form data'],
    ['form with invalid UTF-8', 'deployment[revision]=%ff', FORM, 'The request body is not valid form data'],
    ['form key both value and hash', 'deployment=x&deployment[revision]=y', FORM, 'The request body is not valid form data'],
    ['form nested too deep', `deployment${'[a]'.repeat(40)}=x`, FORM, 'The request body is not valid form data'],
  ];
  for (const [name, payload, headers, title] of malformed) {
    it(`answers 400 for ${name}`, async () => {
      const sandbox = fresh();
      const app = withDeployments(sandbox);
      const count = deploymentsOf(sandbox.data, app).length;
      await expectError(call(sandbox, 'POST', deploymentsPath(app), payload, headers), 400, title);
      expect(deploymentsOf(sandbox.data, app)).toHaveLength(count);
    });
  }

  it('answers 400 for a malformed PUT body, not 422', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    await expectError(call(sandbox, 'PUT', appPath(app), '{"application":', JSON_TYPE), 400, 'The request body is not valid JSON');
    await expectError(call(sandbox, 'PUT', appPath(app), '<application>', XML_TYPE), 400, 'The request body is not valid XML');
    await expectError(call(sandbox, 'POST', '/v2/browser_applications.json', 'browser_application[name]=%E0%A4', FORM), 400, 'The request body is not valid form data');
  });

  it('ignores bodies of other types and blank bodies, and decodes XML character references', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    await expectError(call(sandbox, 'POST', deploymentsPath(app), JSON.stringify({ deployment: { revision: 'x' } }), { 'content-type': 'text/plain' }), 400, 'missing parameter: deployment');
    await expectError(call(sandbox, 'POST', deploymentsPath(app), '   ', JSON_TYPE), 400, 'missing parameter: deployment');
    await expectError(call(sandbox, 'POST', deploymentsPath(app), '<deployment><revision>&#x1F680;</revision></deployment>', XML_TYPE), 422, 'Invalid deployment: revision contains a 4-byte UTF-8 character');
    const repeated = await call(sandbox, 'POST', deploymentsPath(app), '<deployment><revision>a</revision><revision>b</revision></deployment>', XML_TYPE);
    await expectError(repeated, 400, 'Revision parameter required');
    const created = (await body<{ deployment: Deployment }>(call(sandbox, 'POST', deploymentsPath(app), '<deployment><revision>&#65;&#x42;&quot;&apos;</revision></deployment>', XML_TYPE), 201)).deployment;
    expect(created.revision).toBe('AB"\'');
  });

  it('refuses bodies over 1 MiB with 413 and takes odd JSON without a 5xx', async () => {
    const sandbox = fresh();
    const app = withDeployments(sandbox);
    const huge = JSON.stringify({ deployment: { revision: 'r', changelog: 'c'.repeat(1024 * 1024) } });
    const response = await call(sandbox, 'POST', deploymentsPath(app), huge, JSON_TYPE);
    expect(response.status).toBe(413);
    const nested = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await expectError(call(sandbox, 'POST', deploymentsPath(app), nested, JSON_TYPE), 400, 'missing parameter: deployment');
    const deepRevision = `{"deployment":{"revision":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}}`;
    await expectError(call(sandbox, 'POST', deploymentsPath(app), deepRevision, JSON_TYPE), 400, 'Revision parameter required');
    const proto = '{"deployment":{"__proto__":{"revision":"x"},"constructor":{"revision":"y"}}}';
    await expectError(call(sandbox, 'POST', deploymentsPath(app), proto, JSON_TYPE), 400, 'Revision parameter required');
    await expectError(call(sandbox, 'POST', deploymentsPath(app), 'deployment[__proto__][revision]=x', FORM), 400, 'Revision parameter required');
    expect(({} as Record<string, unknown>).revision).toBeUndefined();
  });

  it('never answers 5xx, whatever the body', async () => {
    const sandbox = fresh();
    const app = browserApp(sandbox);
    const idle = idleApp(sandbox);
    const routes: Array<[string, string]> = [
      ['PUT', appPath(app)],
      ['POST', deploymentsPath(app)],
      ['POST', '/deployments.xml'],
      ['POST', '/v2/mobile_applications.json'],
      ['POST', '/v2/browser_applications.xml'],
      ['DELETE', `/v2/applications/${app.id}/deployments/123.json`],
    ];
    const types = ['application/json', 'application/xml', 'application/x-www-form-urlencoded', 'text/plain'];
    const bodyText = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json(),
      fc.jsonValue().map((value) => JSON.stringify({ deployment: value, application: value, browser_application: value })),
      fc.dictionary(fc.constantFrom('revision', 'changelog', 'user', 'timestamp', 'name', 'settings', 'app_name'), fc.jsonValue()).map((d) => JSON.stringify({ deployment: d, application: d })),
      fc.array(fc.tuple(fc.constantFrom('deployment[revision]', 'deployment[timestamp]', 'application[settings][app_apdex_threshold]', 'a[]', '[', 'x[y]'), fc.string()), { maxLength: 5 }).map((pairs) =>
        pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'),
      ),
      fc.string().map((s) => `<deployment><revision>${s}</revision><application_id>${idle.id}</application_id></deployment>`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.constantFrom(...types), bodyText, async ([method, path], type, text) => {
        const response = await call(sandbox, method, path, text, { 'content-type': type });
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
  });
});
