import { describe, expect, it } from 'vitest';
import { PRIMARY_ACCOUNT } from '../../support/harness.ts';
import { FACES, useFaces, type Face } from './faces.ts';

/**
 * The API Explorer's pages, which New Relic's application pages link to (../shared/reference/v2-definitions-2016.json,
 * New Relic's v2 swagger): DELETE /v2/applications/{id} ("Only applications that have stopped
 * reporting can be deleted"; 409 "Cannot delete an application that is still reporting data")
 * and the list's filter[host] and filter[language], sent to the gateway (translate) and the
 * sandbox's legacy face, the filters as a form body as the pages' curl examples send filters.
 */
const faces = useFaces('');
const apps = () => faces().upstream.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT);
const idsOf = (body: Record<string, unknown> | null): number[] => ((body?.applications ?? []) as Array<{ id: number }>).map((app) => app.id);

describe('API Explorer (v2-definitions-2016.json): applications delete and the list filters', () => {
  it.each(FACES)('%s: DELETE /v2/applications/{id}.json deletes an app that stopped reporting; a reporting one is refused and kept', async (face: Face) => {
    const stopped = apps().filter((app) => !app.reporting)[face === 'gateway' ? 0 : 1];
    const reporting = apps().filter((app) => app.reporting)[face === 'gateway' ? 10 : 11];
    if (!stopped || !reporting) throw new Error('the sandbox lacks the apps this test needs');
    const deleted = await faces().send(face, { method: 'DELETE', path: `/v2/applications/${stopped.id}.json` });
    expect(deleted.status).toBe(200);
    expect((deleted.json?.application as { id: number }).id).toBe(stopped.id);
    expect(apps().some((app) => app.id === stopped.id)).toBe(false);
    const refused = await faces().send(face, { method: 'DELETE', path: `/v2/applications/${reporting.id}.json` });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(apps().some((app) => app.id === reporting.id)).toBe(true);
  });

  it.each(FACES)('%s: filter[language] and filter[host] as a form body narrow the list', async (face: Face) => {
    const app = apps().find((candidate) => candidate.reporting && candidate.hosts.length > 0);
    const host = app?.hosts[0]?.name;
    if (!app || host === undefined) throw new Error('no app with hosts');
    const byLanguage = await faces().send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[language]=${app.language}` });
    expect(byLanguage.status).toBe(200);
    expect(idsOf(byLanguage.json)).toContain(app.id);
    expect(((byLanguage.json?.applications ?? []) as Array<{ language: string }>).every((shown) => shown.language === app.language)).toBe(true);
    const byHost = await faces().send(face, { method: 'GET', path: '/v2/applications.json', body: `filter[host]=${encodeURIComponent(host)}` });
    expect(byHost.status).toBe(200);
    expect(idsOf(byHost.json)).toContain(app.id);
  });
});
