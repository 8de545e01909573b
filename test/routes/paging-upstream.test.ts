import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_DETAIL_OPERATIONS, accountsAnswer, apmEntity, emptyPageDetails, json, startFakeUpstream } from '../support/fake-upstream.ts';
import { createTestGateway } from '../support/harness.ts';

/**
 * Paging emulation against a scripted NerdGraph whose cursors and counts misbehave the ways
 * a real one might: no count, inconsistent counts, expired cursors, clients fetching in parallel.
 */
const ACCOUNT = 1000001;
const KEY = { 'X-Api-Key': 'NRAK-PAGING' };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

// Zero-padded names keep NerdGraph's name order equal to id order.
const app = (id: number) => apmEntity(ACCOUNT, id, { name: `App ${String(id).padStart(5, '0')}`, reporting: false });

/** 200 entities per page over `total` apps; cursors are `c<offset>`, and `expired` rejects some. */
function searchUpstream(total: number, options: { count?: (real: number) => number | null; expired?: Set<string> } = {}) {
  return startFakeUpstream((req, res) => {
    if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
    if (PAGE_DETAIL_OPERATIONS.has(req.operationName ?? '')) return json(res, 200, emptyPageDetails());
    const cursor = (req.variables.cursor as string | null) ?? 'c0';
    if (options.expired?.has(cursor)) return json(res, 200, { data: { actor: { entitySearch: null } }, errors: [{ message: 'Cursor has expired' }] });
    const offset = Number(cursor.slice(1));
    const entities = Array.from({ length: Math.max(0, Math.min(200, total - offset)) }, (_, i) => app(offset + i + 1));
    const nextCursor = offset + 200 < total ? `c${offset + 200}` : null;
    const count = options.count ? options.count(total) : total;
    return json(res, 200, { data: { actor: { entitySearch: { count, results: { nextCursor, entities } } } } });
  });
}

async function walk(gateway: Awaited<ReturnType<typeof createTestGateway>>) {
  const ids: number[] = [];
  let next: string | undefined = 'http://gw/v2/applications.json';
  let pages = 0;
  while (next && pages < 20) {
    const response = await gateway.app.request(next, { headers: KEY });
    expect(response.status).toBe(200);
    ids.push(...((await response.json()) as { applications: Array<{ id: number }> }).applications.map((a) => a.id));
    next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    pages++;
  }
  return { ids, pages };
}

describe('paging over cursors', () => {
  it('follows cursors when NerdGraph gives no count', async () => {
    const upstream = await searchUpstream(530, { count: () => null });
    closers.push(upstream.close);
    const { ids, pages } = await walk(await createTestGateway({ nerdgraphUrl: upstream.url }));
    expect(pages).toBe(3);
    expect(ids).toEqual(Array.from({ length: 530 }, (_, i) => i + 1));
  });

  it('trusts the cursor over a count that is too small', async () => {
    const upstream = await searchUpstream(450, { count: () => 10 });
    closers.push(upstream.close);
    const { ids } = await walk(await createTestGateway({ nerdgraphUrl: upstream.url }));
    expect(ids).toHaveLength(450);
  });

  it('walks again from page 1 when a remembered cursor has expired', async () => {
    const expired = new Set<string>();
    const upstream = await searchUpstream(650, { expired });
    closers.push(upstream.close);
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    expect((await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status).toBe(200);
    expired.add('c400');
    // The remembered cursor for page 3 now fails: the walk restarts from page 1, once.
    upstream.received.length = 0;
    const status = (await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status;
    const cursorsSent = upstream.received.filter((r) => r.operationName === 'ApplicationsSearch').map((r) => r.variables.cursor);
    expect(cursorsSent).toEqual(['c400', null, 'c200', 'c400']);
    expect(status).toBe(502); // still refused on the fresh walk: an honest upstream failure, not a loop
    expired.clear();
    expect((await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status).toBe(200);
  });

  it('costs one upstream request per page when a client fetches pages 2..N in parallel', async () => {
    const upstream = await searchUpstream(2000);
    closers.push(upstream.close);
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const first = await gateway.app.request('/v2/applications.json', { headers: KEY });
    const last = Number(/page=(\d+)>; rel="last"/.exec(first.headers.get('link') ?? '')?.[1]);
    expect(last).toBe(10);
    const pages = await Promise.all(
      Array.from({ length: last - 1 }, async (_, i) => {
        const response = await gateway.app.request(`/v2/applications.json?page=${i + 2}`, { headers: KEY });
        return (await response.json()) as { applications: Array<{ id: number }> };
      }),
    );
    const ids = pages.flatMap((p) => p.applications.map((a) => a.id));
    expect(new Set(ids).size).toBe(1800);
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(10);
  });

  it('answers a page past the end of a cold search from page 1 alone', async () => {
    const upstream = await searchUpstream(100);
    closers.push(upstream.close);
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const response = await gateway.app.request('/v2/applications.json?page=400', { headers: KEY });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ applications: [] });
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(1);
  });

  it('refuses a jump of more than 250 pages into a long search with a 422, after one request', async () => {
    const upstream = await searchUpstream(200 * 400);
    closers.push(upstream.close);
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    const response = await gateway.app.request('/v2/applications.json?page=300', { headers: KEY });
    expect(response.status).toBe(422);
    expect(await gateway.upstreamCount('ApplicationsSearch')).toBe(1);
  });

  it('does not restart the walk on a transient failure (429) of a remembered cursor', async () => {
    let limited = false;
    const upstream = await startFakeUpstream((req, res) => {
      if (req.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
      if (PAGE_DETAIL_OPERATIONS.has(req.operationName ?? '')) return json(res, 200, emptyPageDetails());
      const cursor = (req.variables.cursor as string | null) ?? 'c0';
      if (limited && cursor === 'c400') return json(res, 429, { errors: [{ message: 'Too many requests' }] });
      const offset = Number(cursor.slice(1));
      const entities = Array.from({ length: 200 }, (_, i) => app(offset + i + 1));
      return json(res, 200, { data: { actor: { entitySearch: { count: 2000, results: { nextCursor: `c${offset + 200}`, entities } } } } });
    });
    closers.push(upstream.close);
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url });
    expect((await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status).toBe(200);
    limited = true;
    const before = await gateway.upstreamCount('ApplicationsSearch');
    expect((await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status).toBe(429);
    expect((await gateway.upstreamCount('ApplicationsSearch')) - before).toBe(1);
    limited = false;
    expect((await gateway.app.request('/v2/applications.json?page=3', { headers: KEY })).status).toBe(200);
    expect((await gateway.upstreamCount('ApplicationsSearch')) - before).toBe(2);
  });
});
