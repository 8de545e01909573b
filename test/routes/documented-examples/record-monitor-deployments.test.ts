import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_NOW, PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { deploymentsOf } from '../../../sandbox/writes.ts';
import { NO_REVISION_VERSION } from '../../../mappings/deployments/deployment.ts';
import { FACES, startFaces, type Face } from './faces.ts';

/**
 * New Relic's documented deployment requests, docs-website
 * src/content/docs/apm/new-relic-apm/maintenance/record-monitor-deployments.mdx (#post-deployment,
 * #powershell, #get-list, #delete-deployment), sent as written to the gateway (translate, the
 * default) and to the sandbox's legacy face. The page's <var> placeholders are filled: an app
 * of the sandbox, and for `timestamp` a second just before now, since the page's own rules
 * (#deployment-limits: "Must be after the most recent deployment timestamp") make its sample
 * 2019 time a placeholder too.
 */
let faces: Awaited<ReturnType<typeof startFaces>>;
beforeAll(async () => {
  faces = await startFaces('');
});
afterAll(async () => {
  await faces.close();
});

const apps = () => faces.upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT && app.reporting);
const appFor = (face: Face, offset: number) => {
  const app = apps()[(face === 'gateway' ? 0 : 1) + offset * 2];
  if (!app) throw new Error('no app');
  return app;
};
const recent = (secondsAgo: number) => new Date(Math.floor(FIXED_NOW / 1000) * 1000 - secondsAgo * 1000).toISOString().replace('.000Z', 'Z');
const stored = (app: ReturnType<typeof appFor>) => deploymentsOf(faces.upstream.sandbox.data, app);

/** The page's #post-deployment body, its <var> values as written but the timestamp. */
const POSTED = (timestamp: string) =>
  `{
  "deployment": {
    "revision": "REVISION",
    "changelog": "Added: /v2/deployments.rb, Removed: None",
    "description": "Added a deployments resource to the v2 API",
    "user": "datanerd@example.com",
    "timestamp": "${timestamp}"
  }
}`;

describe('record-monitor-deployments.mdx', () => {
  it.each(FACES)('%s: #post-deployment records the deployment; #get-list lists it; #delete-deployment removes it (the legacy face) or is refused, saying why (the gateway)', async (face: Face) => {
    const app = appFor(face, 0);
    const timestamp = recent(30);
    const created = await faces.send(face, { method: 'POST', path: `/v2/applications/${app.id}/deployments.json`, body: POSTED(timestamp), contentType: 'json', keyHeader: 'Api-Key' });
    expect(created.status).toBe(201);
    const deployment = created.json?.deployment as { id: number };
    expect(created.json?.deployment).toMatchObject({
      revision: 'REVISION',
      changelog: 'Added: /v2/deployments.rb, Removed: None',
      description: 'Added a deployments resource to the v2 API',
      user: 'datanerd@example.com',
      links: { application: app.id },
    });
    // The documented effect: the deployment is recorded for the app, at the time sent.
    expect(stored(app).some((d) => d.revision === 'REVISION' && d.user === 'datanerd@example.com' && d.timestamp === Date.parse(timestamp))).toBe(true);

    const listed = await faces.send(face, { method: 'GET', path: `/v2/applications/${app.id}/deployments.json`, keyHeader: 'Api-Key' });
    expect(listed.status).toBe(200);
    const ids = ((listed.json?.deployments ?? []) as Array<{ id: number }>).map((d) => d.id);
    expect(ids).toContain(deployment.id);
    expect(listed.json?.links).toEqual({ 'deployment.agent': '/v2/applications/{application_id}' });

    const deleted = await faces.send(face, { method: 'DELETE', path: `/v2/applications/${app.id}/deployments/${deployment.id}.json`, keyHeader: 'Api-Key' });
    if (face === 'legacy') {
      expect(deleted.status).toBe(200);
      expect(stored(app).some((d) => d.revision === 'REVISION' && d.timestamp === Date.parse(timestamp))).toBe(false);
    } else {
      // #delete-deployment is refused by the gateway: NerdGraph has no delete of a change
      // tracking event (mappings/deployments/delete.ts); it says so and keeps it.
      expect(deleted.status).toBe(422);
      expect(JSON.parse(deleted.text)).toEqual({ error: { title: 'Deployments cannot be deleted: New Relic change tracking events are immutable' } });
      expect(stored(app).some((d) => d.revision === 'REVISION' && d.timestamp === Date.parse(timestamp))).toBe(true);
    }
  });

  it.each(FACES)('%s: #powershell, the same body as PowerShell sends it (its own indentation, application/json) is recorded', async (face: Face) => {
    const app = appFor(face, 1);
    const body = `{\n    "deployment": {\n    "revision": "REVISION",\n    "changelog": "Added: /v2/deployments.rb, Removed: None",\n    "description": "Added a deployments resource to the v2 API",\n    "user": "datanerd@example.com",\n    "timestamp": "${recent(20)}"\n}\n}`;
    const created = await faces.send(face, { method: 'POST', path: `/v2/applications/${app.id}/deployments.json`, body, contentType: 'json', keyHeader: 'Api-Key' });
    expect(created.status).toBe(201);
    expect(stored(app).some((d) => d.revision === 'REVISION')).toBe(true);
  });
});

/**
 * The Deployments v0 form, as New Relic documented it on the pages record-monitor-deployments.mdx
 * now stands for (its redirects list /docs/apm/new-relic-apm/maintenance/setting-deployment-notifications
 * and .../deployment-notifications). Their #api / #examples request, as quoted by clients written
 * from them (e.g. a Heroku webhook's deploy notifier and a newrelic-deploy-notify README):
 *   curl -H "x-api-key:..." -d "deployment[app_name]=..." -d "deployment[description]=This is an app id deployment" https://api.newrelic.com/deployments.xml
 * It sends no revision, and is recorded without one (docs/write-rules.md §5); the v2 JSON route
 * keeps requiring it.
 */
describe('the v0 deployments.xml form (setting-deployment-notifications#api, deployment-notifications#examples)', () => {
  const DESCRIPTION = 'This is an app id deployment';
  const v0Body = (name: string) => `deployment[app_name]=${encodeURIComponent(name)}&deployment[description]=${encodeURIComponent(DESCRIPTION)}`;
  /** What each face's store holds for a deployment sent without a revision. */
  const noRevision = (face: Face) => (face === 'gateway' ? NO_REVISION_VERSION : '');

  it.each(FACES)('%s: the example as written (no deployment[revision]) is 201 in v0 XML with a nil revision, recorded once', async (face: Face) => {
    const app = appFor(face, 2);
    const before = stored(app).length;
    const created = await faces.send(face, { method: 'POST', path: '/deployments.xml', body: v0Body(app.name), keyHeader: 'X-Api-Key' });
    expect(created.status, created.text).toBe(201);
    expect(created.text).toContain(`<description>${DESCRIPTION}</description>`);
    expect(created.text).toContain('<revision nil="true"/>');
    expect(created.text).toContain(`<agent-id type="integer">${app.id}</agent-id>`);
    // The documented effect: one deployment for the app, with the description sent.
    expect(stored(app)).toHaveLength(before + 1);
    expect(stored(app).filter((d) => d.description === DESCRIPTION && d.revision === noRevision(face))).toHaveLength(1);
  });

  it.each(FACES)('%s: the example sent twice in a row is two deployments; a blank revision is none too; with a revision, as before', async (face: Face) => {
    const app = appFor(face, 3);
    const before = stored(app).length;
    for (const body of [v0Body(app.name), v0Body(app.name), `${v0Body(app.name)}&deployment[revision]=+`]) {
      const created = await faces.send(face, { method: 'POST', path: '/deployments.xml', body, keyHeader: 'X-Api-Key' });
      expect(created.status, created.text).toBe(201);
      expect(created.text).toContain('<revision nil="true"/>');
    }
    expect(stored(app).filter((d) => d.description === DESCRIPTION && d.revision === noRevision(face))).toHaveLength(3);
    const recorded = await faces.send(face, { method: 'POST', path: '/deployments.xml', body: `${v0Body(app.name)}&deployment[revision]=v1`, keyHeader: 'X-Api-Key' });
    expect(recorded.status).toBe(201);
    expect(recorded.text).toContain('<revision>v1</revision>');
    expect(stored(app)).toHaveLength(before + 4);
  });

  it.each(FACES)('%s: the v2 JSON create still requires a revision (400 "Revision parameter required", nothing recorded)', async (face: Face) => {
    const app = appFor(face, 4);
    const before = stored(app).length;
    const refused = await faces.send(face, { method: 'POST', path: `/v2/applications/${app.id}/deployments.json`, body: JSON.stringify({ deployment: { description: DESCRIPTION } }), contentType: 'json', keyHeader: 'Api-Key' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual({ error: { title: 'Revision parameter required' } });
    expect(stored(app)).toHaveLength(before);
  });
});
