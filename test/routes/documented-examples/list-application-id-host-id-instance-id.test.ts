import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * docs-website src/content/docs/apis/rest-api-v2/get-started/list-application-id-host-id-instance-id.mdx:
 * #app-list-example and #host_id, sent as written (a GET with a form body; the Api-Key header) to
 * the gateway (translate) and the sandbox's legacy face; 1441 and $APP_ID are a sandbox app.
 */
const faces = useFaces('');
const apps = () => faces().upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
const idsOf = (body: Record<string, unknown> | null): number[] => ((body?.applications ?? []) as Array<{ id: number }>).map((app) => app.id);

describe('apis/rest-api-v2/get-started/list-application-id-host-id-instance-id.mdx', () => {
  it.each(FACES)("%s: #app-list-example, GET /v2/applications.json -d 'filter[ids]=1441' answers that one app", async (face: Face) => {
    const app = apps()[1];
    if (!app) throw new Error('no app');
    const answer = await faces().send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[ids]=${app.id}`, keyHeader: 'Api-Key' });
    expect(answer.status).toBe(200);
    expect(idsOf(answer.json)).toEqual([app.id]);
    const links = (answer.json?.applications as Array<{ links: Record<string, unknown> }>)[0]?.links;
    expect(links).toHaveProperty('application_instances');
    expect(links).toHaveProperty('application_hosts');
  });

  it.each(FACES)('%s: #host_id, GET /v2/applications/$APP_ID/hosts.json lists its hosts', async (face: Face) => {
    const app = apps().find((candidate) => candidate.reporting && candidate.hosts.length > 0);
    if (!app) throw new Error('no app with hosts');
    const answer = await faces().send(face, { method: 'GET', path: `/v2/applications/${app.id}/hosts.json`, keyHeader: 'Api-Key' });
    expect(answer.status).toBe(200);
    const hosts = (answer.json?.application_hosts ?? []) as Array<{ host: string; links: { application: number } }>;
    expect(hosts.map((host) => host.host).sort()).toEqual([...new Set(app.hosts.map((host) => host.name))].sort());
    expect(hosts.every((host) => host.links.application === app.id)).toBe(true);
  });
});
