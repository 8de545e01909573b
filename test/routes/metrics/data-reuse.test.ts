import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/ops/metrics.ts';
import { createNerdGraphClient } from '../../../src/upstream/client.ts';
import type { OperationDocuments } from '../../../src/upstream/documents.ts';
import { entityGuid } from '../../../src/v2/ids.ts';
import { PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../../support/harness.ts';
import { accountsAnswer, json, startFakeUpstream } from '../../support/fake-upstream.ts';

/**
 * Identical upstream answers are parsed, filed and rendered once, yet every request still asks
 * NerdGraph and a changed answer is served at once.
 */
const APP = 4343;
const headers = { 'x-api-key': 'NRAK-REUSE-KEY' };
const path = `/v2/applications/${APP}/metrics/data.json?from=2026-11-22T11:00:00Z&to=2026-11-22T11:03:00Z&names[]=HttpDispatcher&values[]=call_count`;

let callCount = 12;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let gateway: TestGateway;

function answer(count: number) {
  const row = { beginTimeSeconds: Date.UTC(2026, 10, 22, 11, 1) / 1000, facet: 'HttpDispatcher', v0: count };
  const entity = { guid: entityGuid(PRIMARY_ACCOUNT, 'APM', 'APPLICATION', APP), accountId: PRIMARY_ACCOUNT };
  return { data: { actor: { entity, account: { data: { results: [row] }, known: { results: [{ names: ['HttpDispatcher'] }] } } } } };
}

beforeAll(async () => {
  upstream = await startFakeUpstream((request, res) =>
    request.operationName === 'AccessibleAccounts' ? json(res, 200, accountsAnswer([PRIMARY_ACCOUNT])) : json(res, 200, answer(callCount)),
  );
  gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
});
afterAll(() => upstream.close());

const dataCalls = (): number => upstream.received.filter((r) => r.operationName === 'ApplicationMetricData').length;

async function get(): Promise<{ etag: string | null; body: string }> {
  const response = await gateway.app.request(path, { headers });
  expect(response.status).toBe(200);
  return { etag: response.headers.get('etag'), body: await response.text() };
}

describe('metric data with identical upstream answers', () => {
  it('asks NerdGraph every time, answers the same bytes, and follows a changed answer', async () => {
    const first = await get();
    const second = await get();
    expect(dataCalls()).toBe(2);
    expect(second).toEqual(first);
    callCount = 13;
    const third = await get();
    expect(dataCalls()).toBe(3);
    expect(third.etag).not.toBe(first.etag);
    expect(JSON.parse(third.body).metric_data.metrics[0].timeslices[1].values.call_count).toBe(13);
    callCount = 12;
    expect(await get()).toEqual(first);
  });
});

describe('NerdGraph client reuseIdenticalAnswer', () => {
  it('returns the same object for the same bytes only when asked, and still sends every call', async () => {
    const documents: OperationDocuments = new Map([['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }]]);
    let id = 1;
    const fake = await startFakeUpstream((_req, res) => json(res, 200, { data: { actor: { user: { id } } } }));
    try {
      const client = createNerdGraphClient({ url: fake.url, documents, metrics: createMetrics(), timeoutMs: 3000, retries: 0 });
      const read = (reuseIdenticalAnswer: boolean) => client.call({ operation: 'ReadSomething', variables: {}, apiKey: 'NRAK-X', reuseIdenticalAnswer });
      const a = await read(true);
      expect(await read(true)).toBe(a);
      expect(await read(false)).not.toBe(a);
      id = 2;
      const changed = await read(true);
      expect(changed).not.toBe(a);
      expect(changed).toEqual({ actor: { user: { id: 2 } } });
      expect(fake.received).toHaveLength(4);
    } finally {
      await fake.close();
    }
  });
});
