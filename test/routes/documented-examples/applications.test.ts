import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, startFaces, type Face } from './faces.ts';

/**
 * New Relic's documented application requests (docs-website, src/content/docs/...), each sent
 * as its page's curl sends it to the gateway (translate, the default for applications) and to
 * the sandbox's legacy face. The page's placeholders ($APP_ID, TimberTime, 1441, the alias
 * name) are filled with an app of the sandbox's primary account.
 */
let faces: Awaited<ReturnType<typeof startFaces>>;
beforeAll(async () => {
  faces = await startFaces('');
});
afterAll(async () => {
  await faces.close();
});

const apps = () => faces.upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
const idsOf = (body: Record<string, unknown> | null): number[] => ((body?.applications ?? []) as Array<{ id: number }>).map((app) => app.id);

describe('alerts/scale-automate/rest-api/manage-entities-alerts-conditions.mdx, #example step 1', () => {
  it.each(FACES)('%s: GET /v2/applications.json lists the account\'s applications', async (face: Face) => {
    const answer = await faces.send(face, { method: 'GET', path: '/v2/applications.json', keyHeader: 'X-Api-Key' });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json).length).toBeGreaterThan(0);
    expect(idsOf(answer.json).every((id) => apps().some((app) => app.id === id))).toBe(true);
  });

  it.each(FACES)("%s: GET /v2/applications.json with the form body -d 'filter[name]=TimberTime' finds the app by name", async (face: Face) => {
    const app = apps()[3];
    if (!app) throw new Error('no app');
    // curl -X GET ... -d 'filter[name]=...': a GET carrying a form body (no -G).
    const answer = await faces.send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[name]=${encodeURIComponent(app.name)}` });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json)).toContain(app.id);
    expect(((answer.json?.applications ?? []) as Array<{ name: string }>).every((shown) => shown.name.includes(app.name))).toBe(true);
  });
});

describe('apis/rest-api-v2/get-started/list-application-id-host-id-instance-id.mdx', () => {
  it.each(FACES)("%s: #app-list-example, GET /v2/applications.json -d 'filter[ids]=1441' answers that one app", async (face: Face) => {
    const app = apps()[1];
    if (!app) throw new Error('no app');
    const answer = await faces.send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[ids]=${app.id}`, keyHeader: 'Api-Key' });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json)).toEqual([app.id]);
    const links = (answer.json?.applications as Array<{ links: Record<string, unknown> }>)[0]?.links;
    expect(links).toHaveProperty('application_instances');
    expect(links).toHaveProperty('application_hosts');
  });

  it.each(FACES)('%s: #host_id, GET /v2/applications/$APP_ID/hosts.json lists its hosts', async (face: Face) => {
    const app = apps().find((candidate) => candidate.reporting && candidate.hosts.length > 0);
    if (!app) throw new Error('no app with hosts');
    const answer = await faces.send(face, { method: 'GET', path: `/v2/applications/${app.id}/hosts.json`, keyHeader: 'Api-Key' });
    expect(answer.status).toBe(200);
    const hosts = (answer.json?.application_hosts ?? []) as Array<{ host: string; links: { application: number } }>;
    expect(hosts.map((host) => host.host).sort()).toEqual([...new Set(app.hosts.map((host) => host.name))].sort());
    expect(hosts.every((host) => host.links.application === app.id)).toBe(true);
  });
});

describe('apis/rest-api-v2/application-examples-v2/change-alias-your-application-v2.mdx, #set_app_alias', () => {
  it.each(FACES)('%s: PUT /v2/applications/${APP_ID}.json with name and the three settings renames the app', async (face: Face) => {
    const app = face === 'gateway' ? apps()[5] : apps()[6];
    if (!app) throw new Error('no app');
    const alias = `Alias via ${face}`;
    const body = JSON.stringify({ application: { name: alias, settings: { app_apdex_threshold: 0.5, end_user_apdex_threshold: 7, enable_real_user_monitoring: true } } });
    const answer = await faces.send(face, { method: 'PUT', path: `/v2/applications/${app.id}.json`, body, contentType: 'json', keyHeader: 'X-Api-Key' });
    expect(answer.status).toBe(200);
    expect((answer.json?.application as { name: string }).name).toBe(alias);
    // The documented effect: the name is the alias everywhere, the apdex target as sent.
    expect(app.name).toBe(alias);
    expect(app.apdexTarget).toBe(0.5);
  });
});

describe('apis/rest-api-v2/application-examples-v2/summary-data-examples-v2.mdx, #Application summary examples', () => {
  it.each(FACES)("%s: a specific application, -d 'filter[name]=My+Web+Page' (spaces as +), finds it with its summary", async (face: Face) => {
    const app = apps().find((candidate) => candidate.name.includes(' ') && candidate.reporting) ?? apps()[0];
    if (!app) throw new Error('no app');
    const answer = await faces.send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[name]=${app.name.split(' ').map(encodeURIComponent).join('+')}` });
    expect(answer.status).toBe(200);
    const shown = ((answer.json?.applications ?? []) as Array<{ id: number; application_summary?: unknown }>).find((candidate) => candidate.id === app.id);
    expect(shown).toBeDefined();
    expect(shown).toHaveProperty('application_summary');
  });

  it.each(FACES)('%s: by app ID, GET /v2/applications/${APPID}.json shows it', async (face: Face) => {
    const app = apps()[2];
    if (!app) throw new Error('no app');
    const answer = await faces.send(face, { method: 'GET', path: `/v2/applications/${app.id}.json` });
    expect(answer.status).toBe(200);
    expect(answer.json?.application).toMatchObject({ id: app.id, name: app.name, language: app.language, reporting: app.reporting });
  });
});

/**
 * The API Explorer's pages, which the pages above link to (../shared/reference/v2-definitions-2016.json,
 * New Relic's v2 swagger): DELETE /v2/applications/{id} ("Only applications that have stopped
 * reporting can be deleted"; 409 "Cannot delete an application that is still reporting data")
 * and the list's filter[host] and filter[language].
 */
describe('API Explorer (v2-definitions-2016.json): applications delete and the list filters', () => {
  it.each(FACES)('%s: DELETE /v2/applications/{id}.json deletes an app that stopped reporting; a reporting one is refused and kept', async (face: Face) => {
    const stopped = apps().filter((app) => !app.reporting)[face === 'gateway' ? 0 : 1];
    const reporting = apps().filter((app) => app.reporting)[face === 'gateway' ? 10 : 11];
    if (!stopped || !reporting) throw new Error('the sandbox lacks the apps this test needs');
    const deleted = await faces.send(face, { method: 'DELETE', path: `/v2/applications/${stopped.id}.json` });
    expect(deleted.status).toBe(200);
    expect((deleted.json?.application as { id: number }).id).toBe(stopped.id);
    expect(apps().some((app) => app.id === stopped.id)).toBe(false);
    const refused = await faces.send(face, { method: 'DELETE', path: `/v2/applications/${reporting.id}.json` });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(apps().some((app) => app.id === reporting.id)).toBe(true);
  });

  it.each(FACES)('%s: filter[language] and filter[host] as a form body narrow the list', async (face: Face) => {
    const app = apps().find((candidate) => candidate.reporting && candidate.hosts.length > 0);
    const host = app?.hosts[0]?.name;
    if (!app || host === undefined) throw new Error('no app with hosts');
    const byLanguage = await faces.send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[language]=${app.language}` });
    expect(byLanguage.status).toBe(200);
    expect(idsOf(byLanguage.json)).toContain(app.id);
    expect(((byLanguage.json?.applications ?? []) as Array<{ language: string }>).every((shown) => shown.language === app.language)).toBe(true);
    const byHost = await faces.send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[host]=${encodeURIComponent(host)}` });
    expect(byHost.status).toBe(200);
    expect(idsOf(byHost.json)).toContain(app.id);
  });
});
