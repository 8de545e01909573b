import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { costTable, sendsNothing, type RouteCost } from '../../src/routes/compat-costs.ts';
import type { Mapping } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { measureSandboxCosts } from '../../scripts/compat-costs.ts';

/**
 * the NerdGraph cost of every route, as docs/compatibility.md shows it, is
 * what the sandbox counts now (so the table cannot go stale), and no read page costs more than
 * 3 NerdGraph calls cold.
 */
const READ_KINDS: ReadonlySet<Mapping['kind']> = new Set(['entity-search-list', 'entity-by-id', 'metric-names', 'metric-data', 'read-plan']);
const MAX_COLD_READ_CALLS = 3;

/**
 * The read routes over the limit today, with their cold calls. The list can only shrink: a route
 * that costs anything else than its figure here fails, so a fix strikes its line.
 */
const OVER_LIMIT_TODAY: Record<string, number> = {
};

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const KEY = 'NRAK-SANDBOX-DEMO';

describe('the sandbox counts NerdGraph requests and the NRQL queries they ran (sandbox/read-counts.ts)', () => {
  let sandbox: Sandbox;
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    sandbox = createSandbox({ seed: 3, apmApps: 5, now: () => Date.UTC(2026, 10, 22, 12) });
    server = await sandbox.listen(0, '127.0.0.1');
  });
  afterAll(async () => server?.close());

  const post = (body: unknown, key = KEY): Promise<Response> =>
    fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify(body) });

  it('counts a request by its operation and each nrql field it executed: aliases each, skipped ones and the answer’s echo not', async () => {
    sandbox.resetReads();
    const query = `query TwoQueries($id: Int!) { actor { account(id: $id) {
      a: nrql(query: "SELECT count(*) FROM Transaction") { results nrql }
      b: nrql(query: "SELECT count(*) FROM Metric") { results }
      c: nrql(query: "SELECT count(*) FROM Metric") @skip(if: true) { results }
    } } }`;
    const answer = (await (await post({ query, variables: { id: 1000001 } })).json()) as { data?: unknown; errors?: unknown };
    expect(answer.errors).toBeUndefined();
    await (await post({ query: '{ actor { nrql(accounts: [1000001], query: "SELECT count(*) FROM Metric") { results } } }' })).text();
    await (await post({ query: '{ actor { user { id } } }' }, 'NRAK-NOT-A-KEY')).text();
    expect(sandbox.reads()).toEqual({
      calls: { '(anonymous)': 1, '(refused)': 1, TwoQueries: 1 },
      nrql: { '(anonymous)': 1, TwoQueries: 2 },
      totalCalls: 3,
      totalNrql: 3,
    });
    sandbox.resetReads();
    expect(sandbox.reads()).toEqual({ calls: {}, nrql: {}, totalCalls: 0, totalNrql: 0 });
  });
});

describe('the NerdGraph cost of every route (npm run compat)', () => {
  let costs: RouteCost[];
  let mappings: Mapping[];
  beforeAll(async () => {
    mappings = await loadMappings();
    costs = await measureSandboxCosts(mappings);
  }, 180_000);

  it('is the table docs/compatibility.md embeds (run npm run compat -- --costs)', () => {
    const embedded = /<!-- costs:start -->\n([\s\S]*?)\n<!-- costs:end -->/.exec(read('docs/compatibility.md'))?.[1];
    expect(embedded).toBe(costTable(costs));
  });

  it('measures every translated route from cold: the fresh gateway verifies the key once, the warm call and the walk’s gateway never again', () => {
    const translated = costs.filter((cost) => cost.kind !== 'passthrough' && cost.kind !== 'unsupported');
    expect(translated.length).toBe(mappings.filter((mapping) => !sendsNothing(mapping)).length);
    const unexpected = translated.filter((cost) => cost.keyVerifications.cold !== 1 || cost.keyVerifications.warm !== 0 || cost.keyVerifications.walk !== (cost.walk ? 1 : 0));
    expect(unexpected.map((cost) => `${cost.route}: ${JSON.stringify(cost.keyVerifications)}`)).toEqual([]);
    // A read's cold call sends something: a row of zeros would be a sample that measured nothing.
    expect(translated.filter((cost) => cost.cold.calls === 0).map((cost) => cost.route)).toEqual([]);
  });

  it(`lets no read page cost more than ${MAX_COLD_READ_CALLS} NerdGraph calls cold, beyond the routes named today`, () => {
    const over = Object.fromEntries(costs.filter((cost) => READ_KINDS.has(cost.kind) && cost.cold.calls > MAX_COLD_READ_CALLS).map((cost) => [cost.route, cost.cold.calls]));
    expect(over).toEqual(OVER_LIMIT_TODAY);
  });
});
