import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteLiteral } from '../../src/upstream/query-literal.ts';
import { decodeEntityGuid } from '../../src/v2/ids.ts';
import { startFakeUpstream, type FakeRequest, forwardTo } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * Upstream cost and what reaches NerdGraph for the key transaction and browser list routes:
 * a list page is 1 entity search + 1 details read (8 aliased entities() calls of at most 25
 * GUIDs, plus the KT summaries' NRQL); a KT show is 1 request. The sandbox's NerdGraph sits
 * behind a recording proxy so the GraphQL variables can be checked.
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let proxy: Awaited<ReturnType<typeof startFakeUpstream>>;
beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 450 });
  proxy = await startFakeUpstream((request, res) => forwardTo(sandbox.graphqlUrl, request, res));
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

const demo = { 'X-Api-Key': DEMO_KEY };

async function warmGateway(): Promise<TestGateway> {
  const gateway = await createTestGateway({ nerdgraphUrl: proxy.url });
  await gateway.app.request('/v2/applications/1.json', { headers: demo }); // warm the accounts cache
  return gateway;
}

/** Upstream requests `run` costs, by operation. */
async function cost(gateway: TestGateway, run: () => unknown): Promise<Record<string, number>> {
  const from = proxy.received.length;
  const before = await gateway.upstreamCount();
  await run();
  const sent = proxy.received.slice(from);
  expect(await gateway.upstreamCount()).toBe(before + sent.length);
  const byOperation: Record<string, number> = {};
  for (const request of sent) byOperation[request.operationName ?? '?'] = (byOperation[request.operationName ?? '?'] ?? 0) + 1;
  return byOperation;
}

const lastOf = (operation: string): FakeRequest => proxy.received.filter((r) => r.operationName === operation).at(-1)!;

function batchesOf(variables: Record<string, unknown>): string[][] {
  return Array.from({ length: 8 }, (_, call) => {
    const batch = variables[`b${call}`] as string[];
    expect(variables[`i${call}`]).toBe(batch.length > 0);
    expect(batch.length).toBeLessThanOrEqual(25);
    return batch;
  });
}

describe.each([
  ['browser applications', '/v2/browser_applications.json', 'BrowserApplicationsSearch', 'BrowserApplicationDetails', 'browser_applications', 'BROWSER'],
  ['key transactions', '/v2/key_transactions.json', 'KeyTransactionsSearch', 'KeyTransactionDetails', 'key_transactions', 'APM'],
])('%s list upstream cost', (_name, path, search, details, wrapper, domain) => {
  it('a full page of 200 is 1 search + 1 details read carrying 8 batches of 25 GUIDs of the account', async () => {
    const gateway = await warmGateway();
    expect(await cost(gateway, () => gateway.app.request(path, { headers: demo }))).toEqual({ [search]: 1, [details]: 1 });
    const batches = batchesOf(lastOf(details).variables);
    expect(batches.map((batch) => batch.length)).toEqual([25, 25, 25, 25, 25, 25, 25, 25]);
    for (const guid of batches.flat()) expect(decodeEntityGuid(guid)).toMatchObject({ accountId: PRIMARY_ACCOUNT, domain });
  });

  it('a small page sends only the batches it needs (the others are skipped)', async () => {
    const gateway = await warmGateway();
    const ids = sandbox.sandbox.data[wrapper === 'key_transactions' ? 'keyTransactions' : 'browserApps']
      .filter((item) => item.accountId === PRIMARY_ACCOUNT)
      .slice(0, 3)
      .map((item) => item.id);
    let body: Record<string, unknown[]> = {};
    expect(
      await cost(gateway, async () => {
        body = (await (await gateway.app.request(`${path}?filter[ids]=${ids.join(',')}`, { headers: demo })).json()) as Record<string, unknown[]>;
      }),
    ).toEqual({ [search]: 1, [details]: 1 });
    expect(body[wrapper]).toHaveLength(3);
    expect(batchesOf(lastOf(details).variables).map((batch) => batch.length)).toEqual([3, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('page 3 walks 3 searches and reads details once; asked again it costs 1 + 1 (warm cursor cache)', async () => {
    const gateway = await warmGateway();
    expect(await cost(gateway, () => gateway.app.request(`${path}?page=3`, { headers: demo }))).toEqual({ [search]: 3, [details]: 1 });
    expect(await cost(gateway, () => gateway.app.request(`${path}?page=3`, { headers: demo }))).toEqual({ [search]: 1, [details]: 1 });
  });

  it('concurrent identical requests share the search and the details read', async () => {
    const gateway = await warmGateway();
    const answers: Response[] = [];
    expect(
      await cost(gateway, async () => {
        answers.push(...(await Promise.all(Array.from({ length: 5 }, () => gateway.app.request(`${path}?page=1`, { headers: demo })))));
      }),
    ).toEqual({ [search]: 1, [details]: 1 });
    const texts = await Promise.all(answers.map((answer) => answer.text()));
    expect(new Set(texts).size).toBe(1);
  });

  it('an empty filter[ids] answers an empty list without NerdGraph', async () => {
    const gateway = await warmGateway();
    expect(await cost(gateway, () => gateway.app.request(`${path}?filter[ids]=`, { headers: demo }))).toEqual({});
  });

  it('a hostile filter[name] reaches the entity search only as a quoted literal, and the details never', async () => {
    const gateway = await warmGateway();
    const hostile = "x' OR name LIKE '%";
    const response = await gateway.app.request(`${path}?filter[name]=${encodeURIComponent(hostile)}`, { headers: demo });
    expect(response.status).toBe(200);
    expect(lastOf(search).variables.query).toContain(`name LIKE ${quoteLiteral(hostile)}`);
    expect(((await response.json()) as Record<string, unknown[]>)[wrapper]).toEqual([]);
  });
});

describe('key transaction summaries', () => {
  it('the details read carries one NRQL query over the page GUIDs, faceted by entity.guid, over the last 10 whole minutes', async () => {
    const gateway = await warmGateway();
    await gateway.app.request('/v2/key_transactions.json', { headers: demo });
    const { variables } = lastOf('KeyTransactionDetails');
    const nrql = String(variables.summary);
    expect(variables.accountId).toBe(PRIMARY_ACCOUNT);
    expect(nrql).toContain('FACET entity.guid LIMIT MAX');
    for (const guid of batchesOf(variables).flat()) expect(nrql).toContain(quoteLiteral(guid));
    // FIXED_NOW is 12:00:30: the window is 11:50 to 12:00.
    expect(nrql).toContain(`SINCE ${Date.UTC(2026, 10, 22, 11, 50)} UNTIL ${Date.UTC(2026, 10, 22, 12, 0)}`);
  });
});

describe('key transaction show upstream cost', () => {
  const kts = () => sandbox.sandbox.data.keyTransactions;

  it('is one request: the entity and its summary in the same document', async () => {
    const gateway = await warmGateway();
    const kt = kts().find((k) => k.accountId === PRIMARY_ACCOUNT && k.reporting)!;
    let body: { key_transaction?: { id: number; application_summary?: unknown } } = {};
    expect(
      await cost(gateway, async () => {
        body = (await (await gateway.app.request(`/v2/key_transactions/${kt.id}.json`, { headers: demo })).json()) as typeof body;
      }),
    ).toEqual({ KeyTransactionByGuid: 1 });
    expect(body.key_transaction?.id).toBe(kt.id);
    expect(body.key_transaction?.application_summary).toBeDefined();
    expect(String(lastOf('KeyTransactionByGuid').variables.summary)).toContain(`entity.guid IN (${quoteLiteral(kt.guid)})`);
  });

  it('an unknown id and an id of another account are the same 404, one request each; a malformed id costs none', async () => {
    const gateway = await warmGateway();
    const foreign = kts().find((k) => k.accountId === SECONDARY_ACCOUNT)!;
    const texts: string[] = [];
    expect(
      await cost(gateway, async () => {
        for (const id of [foreign.id, 123]) {
          const response = await gateway.app.request(`/v2/key_transactions/${id}.json`, { headers: demo });
          expect(response.status).toBe(404);
          texts.push(await response.text());
        }
      }),
    ).toEqual({ KeyTransactionByGuid: 2 });
    expect(
      await cost(gateway, async () => {
        const response = await gateway.app.request('/v2/key_transactions/abc.json', { headers: demo });
        expect(response.status).toBe(404);
        texts.push(await response.text());
      }),
    ).toEqual({});
    expect(new Set(texts)).toEqual(new Set(['{"error":{"title":"No key transaction found with the given ID"}}']));
  });
});
