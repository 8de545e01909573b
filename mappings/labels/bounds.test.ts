import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import createMapping from './create.ts';
import deleteMapping from './delete.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { LabelTitles, MAX_LABEL_APPLICATIONS } from './label-rules.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * One bound for both label writes (one sequential tagging mutation per application must fit the
 * request's deadline): a PUT naming more than MAX_LABEL_APPLICATIONS applications, and a DELETE
 * of a whole label on more than that many, answer a 422 that says how to proceed, with nothing
 * sent; naming the applications in batches works. The mappings document it as a gap.
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let apps: SandboxApp[];

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 120 });
  apps = sandbox.sandbox.data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
});
afterAll(async () => {
  await sandbox.close();
});

async function send(method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; title?: string; applications?: number[] }> {
  const response = await gateway.app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as { error?: { title: string }; label?: { links: { applications: number[] } } };
  return { status: response.status, ...(answer.error ? { title: answer.error.title } : {}), ...(answer.label ? { applications: answer.label.links.applications } : {}) };
}

const writes = (): number => sandbox.sandbox.writes().total;
const carrying = (name: string): number[] => apps.filter((app) => app.userTags?.Bound?.includes(name)).map((app) => app.id);
const label = (name: string, ids: readonly number[]) => ({ label: { category: 'Bound', name, links: { applications: ids } } });

describe(`labels: at most ${MAX_LABEL_APPLICATIONS} applications per write`, () => {
  it('has enough applications to go past the bound', () => {
    expect(apps.length).toBeGreaterThan(MAX_LABEL_APPLICATIONS + 1);
  });

  it(`a PUT naming ${MAX_LABEL_APPLICATIONS + 1} applications: 422 saying to send batches, nothing sent`, async () => {
    const before = writes();
    const answer = await send('PUT', '/v2/labels.json', label('many', apps.slice(0, MAX_LABEL_APPLICATIONS + 1).map((app) => app.id)));
    expect(answer).toEqual({ status: 422, title: LabelTitles.tooManyApplications });
    expect(answer.title).toMatch(/further requests of up to 25/);
    expect(writes()).toBe(before);
    expect(carrying('many')).toEqual([]);
  });

  it('in batches it goes on; a DELETE of the whole label past the bound is a 422 naming the way out, nothing sent', async () => {
    const ids = apps.slice(0, MAX_LABEL_APPLICATIONS + 2).map((app) => app.id);
    expect((await send('PUT', '/v2/labels.json', label('many', ids.slice(0, MAX_LABEL_APPLICATIONS)))).status).toBe(200);
    expect((await send('PUT', '/v2/labels.json', label('many', ids.slice(MAX_LABEL_APPLICATIONS)))).status).toBe(200);
    expect(carrying('many').sort((x, y) => x - y)).toEqual([...ids].sort((x, y) => x - y));

    const before = writes();
    const whole = await send('DELETE', '/v2/labels/Bound:many.json');
    expect(whole).toEqual({ status: 422, title: LabelTitles.tooManyCarrying(ids.length) });
    expect(whole.title).toContain('name the applications in the body');
    expect(writes()).toBe(before);
    expect(carrying('many')).toHaveLength(ids.length);

    // Named in a batch of the bound: allowed; then the rest goes with a whole-label DELETE.
    const batch = await send('DELETE', '/v2/labels/Bound:many.json', { label: { links: { applications: ids.slice(0, MAX_LABEL_APPLICATIONS) } } });
    expect(batch.status).toBe(200);
    expect(batch.applications).toEqual(ids.slice(MAX_LABEL_APPLICATIONS).sort((x, y) => x - y));
    expect(writes() - before).toBe(MAX_LABEL_APPLICATIONS);
    const rest = await send('DELETE', '/v2/labels/Bound:many.json');
    expect(rest).toEqual({ status: 200, applications: [] });
    expect(carrying('many')).toEqual([]);
  });

  it('documents the bound as a gap of both mappings', () => {
    for (const mapping of [createMapping, deleteMapping]) {
      expect(mapping.knownGaps.some((gap) => gap.description.includes(`At most ${MAX_LABEL_APPLICATIONS} applications per request`)), mapping.id).toBe(true);
    }
    expect(deleteMapping.knownGaps.some((gap) => gap.description.includes(`more than ${MAX_LABEL_APPLICATIONS} applications is not removed (422`))).toBe(true);
  });
});
