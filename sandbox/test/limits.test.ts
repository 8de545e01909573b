import { describe, expect, it } from 'vitest';
import { LIMITS } from '../graphql.ts';
import { createSandbox } from '../server.ts';

/** One hostile request must not crash, stall or bypass the sandbox (it may run inside the gateway). */
const sandbox = createSandbox({ seed: 5, apmApps: 50, now: () => 0 });

async function post(body: string, headers: Record<string, string> = {}) {
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': 'NRAK-SANDBOX-DEMO', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as { errors?: Array<{ message: string }>; data?: unknown } };
}

describe('sandbox limits', () => {
  it('answers a pathologically nested document with errors, not a crash', async () => {
    const deep = `{ actor ${'{ a '.repeat(20_000)}${'}'.repeat(20_000)} }`;
    const answer = await post(JSON.stringify({ query: deep }));
    expect(answer.status).toBeLessThan(500);
    expect(answer.body.errors?.length).toBeGreaterThan(0);
  });

  it(`refuses documents nested deeper than ${LIMITS.depth} levels`, async () => {
    const query = `{ actor { entity(guid: "x") { ${'... on ApmApplicationEntity { '.repeat(LIMITS.depth)} guid ${'} '.repeat(LIMITS.depth)} } } }`;
    const answer = await post(JSON.stringify({ query }));
    expect(answer.body.errors?.[0]?.message).toMatch(/nested deeper|Maximum/);
  });

  it(`refuses more than ${LIMITS.entitySearches} entity searches in one request`, async () => {
    const query = `{ actor { ${Array.from({ length: 50 }, (_, i) => `s${i}: entitySearch(query: "domain = 'APM'") { count }`).join(' ')} } }`;
    const answer = await post(JSON.stringify({ query }));
    expect(answer.body.errors?.some((e) => /entitySearch fields/.test(e.message))).toBe(true);
    expect(answer.body.data).toBeUndefined();
  });

  it('refuses bodies over the size limit with 413', async () => {
    const answer = await post(JSON.stringify({ query: `{ actor { user { id } } } #${'x'.repeat(LIMITS.bodyBytes)}` }));
    expect(answer.status).toBe(413);
  });

  it('checks scalar inputs as NerdGraph does (a GUID is a string)', async () => {
    const query = 'query Q($guid: EntityGuid!) { actor { entity(guid: $guid) { guid } } }';
    const bad = await post(JSON.stringify({ query, variables: { guid: { not: 'a string' } } }));
    expect(bad.body.errors?.[0]?.message).toMatch(/EntityGuid cannot represent/);
    const literal = await post(JSON.stringify({ query: '{ actor { entity(guid: 12) { guid } } }' }));
    expect(literal.body.errors?.[0]?.message).toMatch(/EntityGuid cannot represent/);
  });

  it('requires a search query, as NerdGraph requires query or queryBuilder', async () => {
    const answer = await post(JSON.stringify({ query: '{ actor { entitySearch { count } } }' }));
    expect(answer.body.errors?.[0]?.message).toMatch(/supply query or queryBuilder/);
  });
});
