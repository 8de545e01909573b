import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * docs-website src/content/docs/apis/rest-api-v2/application-examples-v2/summary-data-examples-v2.mdx,
 * #Application summary examples, sent as written (the name filter as a form body, spaces as +)
 * to the gateway (translate) and the sandbox's legacy face.
 */
const faces = useFaces('');
const apps = () => faces().upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);

describe('apis/rest-api-v2/application-examples-v2/summary-data-examples-v2.mdx, #Application summary examples', () => {
  it.each(FACES)("%s: a specific application, -d 'filter[name]=My+Web+Page' (spaces as +), finds it with its summary", async (face: Face) => {
    const app = apps().find((candidate) => candidate.name.includes(' ') && candidate.reporting) ?? apps()[0];
    if (!app) throw new Error('no app');
    const answer = await faces().send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[name]=${app.name.split(' ').map(encodeURIComponent).join('+')}` });
    expect(answer.status).toBe(200);
    const shown = ((answer.json?.applications ?? []) as Array<{ id: number; application_summary?: unknown }>).find((candidate) => candidate.id === app.id);
    expect(shown).toBeDefined();
    expect(shown).toHaveProperty('application_summary');
  });

  it.each(FACES)('%s: by app ID, GET /v2/applications/${APPID}.json shows it', async (face: Face) => {
    const app = apps()[2];
    if (!app) throw new Error('no app');
    const answer = await faces().send(face, { method: 'GET', path: `/v2/applications/${app.id}.json` });
    expect(answer.status).toBe(200);
    expect(answer.json?.application).toMatchObject({ id: app.id, name: app.name, language: app.language, reporting: app.reporting });
  });
});
