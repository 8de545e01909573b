import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * docs-website src/content/docs/apis/rest-api-v2/application-examples-v2/change-alias-your-application-v2.mdx,
 * #set_app_alias, sent as written to the gateway (translate) and the sandbox's legacy face, its
 * placeholders (APP_APDEX_THRESHOLD, BROWSER_APDEX_THRESHOLD, BOOLEAN) filled.
 */
const faces = useFaces('');
const apps = () => faces().upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);

describe('apis/rest-api-v2/application-examples-v2/change-alias-your-application-v2.mdx, #set_app_alias', () => {
  it.each(FACES)('%s: PUT /v2/applications/${APP_ID}.json with name and the three settings renames the app', async (face: Face) => {
    const app = face === 'gateway' ? apps()[5] : apps()[6];
    if (!app) throw new Error('no app');
    const alias = `Alias via ${face}`;
    const body = JSON.stringify({ application: { name: alias, settings: { app_apdex_threshold: 0.5, end_user_apdex_threshold: 7, enable_real_user_monitoring: true } } });
    const answer = await faces().send(face, { method: 'PUT', path: `/v2/applications/${app.id}.json`, body, contentType: 'json', keyHeader: 'X-Api-Key' });
    expect(answer.status).toBe(200);
    expect((answer.json?.application as { name: string }).name).toBe(alias);
    // The documented effect: the name is the alias everywhere, the apdex target as sent.
    expect(app.name).toBe(alias);
    expect(app.apdexTarget).toBe(0.5);
  });
});
