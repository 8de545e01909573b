import { describe, expect, it } from 'vitest';
import { getWithRels as get, meteredSandbox, type Got } from '../../test/support/metered-walk.ts';

/**
 * What alerts_events and alerts_incidents cost in NerdGraph calls, counted by a relay in front
 * of the sandbox: a cold first page (a fresh gateway, its first request, the caller's account
 * look-up included) at most 3 calls; the later pages of a walk reuse what the first page read,
 * so the whole walk costs what its first page did, with answers equal to a cold read of the
 * same page; a close made through the gateway forgets what was kept.
 */
const MAX_CALLS_PER_PAGE = 3;

const { freshGateway, callsOf } = meteredSandbox();

describe('alerts_incidents: NerdGraph calls per page', () => {
  it(`a cold first page costs at most ${MAX_CALLS_PER_PAGE} NerdGraph calls; the walk's later pages reuse its read and equal cold reads`, async () => {
    const gateway = await freshGateway();
    const pages: Got[] = [];
    const firstCost = await callsOf(async () => pages.push(await get(gateway, '/v2/alerts_incidents.json')));
    const restCost = await callsOf(async () => {
      for (let next = pages[0]!.rels.next; next !== undefined && pages.length < 100; next = pages.at(-1)!.rels.next) pages.push(await get(gateway, next));
    });
    expect(firstCost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(restCost).toBe(0);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]!.rels.last).toBe(`/v2/alerts_incidents.json?page=${pages.length}`);
    for (const [index, page] of pages.entries()) {
      const path = `/v2/alerts_incidents.json?page=${index + 1}`;
      const coldGateway = await freshGateway();
      let cold: Got | undefined;
      expect(await callsOf(async () => (cold = await get(coldGateway, path))), path).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
      expect(page, path).toEqual(cold);
    }
  });
});

describe('alerts_events: NerdGraph calls per page', () => {
  it(`a cold first page costs at most ${MAX_CALLS_PER_PAGE} NerdGraph calls, the caller's account look-up included`, async () => {
    const gateway = await freshGateway();
    let first: Got | undefined;
    const calls = await callsOf(async () => (first = await get(gateway, '/v2/alerts_events.json')));
    expect(first!.status).toBe(200);
    expect((first!.body.recent_events as unknown[]).length).toBe(200);
    expect(calls).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(calls).toBeGreaterThan(0);
  });

  it('walking every page costs what the first page cost: the later pages reuse its read', async () => {
    const gateway = await freshGateway();
    const pages: Got[] = [];
    const firstCost = await callsOf(async () => pages.push(await get(gateway, '/v2/alerts_events.json')));
    const restCost = await callsOf(async () => {
      for (let next = pages[0]!.rels.next; next !== undefined && pages.length < 100; next = pages.at(-1)!.rels.next) pages.push(await get(gateway, next));
    });
    expect(pages.length).toBeGreaterThanOrEqual(10);
    expect(pages.every((page) => page.status === 200)).toBe(true);
    expect(pages.at(-1)!.rels.last).toBeUndefined();
    expect(pages[0]!.rels.last).toBe(`/v2/alerts_events.json?page=${pages.length}`);
    expect(firstCost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(restCost).toBe(0);
  });

  it('a page served from the kept read equals the same page read cold, and a cold later page costs no more than a first one', async () => {
    const walker = await freshGateway();
    const first = await get(walker, '/v2/alerts_events.json');
    const last = Number(/page=(\d+)/.exec(first.rels.last!)![1]);
    for (const path of ['/v2/alerts_events.json?page=2', '/v2/alerts_events.json?page=7', `/v2/alerts_events.json?page=${last}`, '/v2/alerts_events.json?filter[event_type]=VIOLATION_CLOSE&page=3']) {
      let kept: Got | undefined;
      let cold: Got | undefined;
      const coldGateway = await freshGateway();
      const coldCost = await callsOf(async () => (cold = await get(coldGateway, path)));
      if (!path.includes('filter')) expect(await callsOf(async () => (kept = await get(walker, path))), path).toBe(0);
      else kept = await get(walker, path);
      expect(cold!.status, path).toBe(200);
      expect(coldCost, path).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
      expect(kept, path).toEqual(cold);
    }
  });

  it('each set of sources the filters need is read and kept on its own: deployments alone cost one call', async () => {
    const gateway = await freshGateway();
    await get(gateway, '/v2/alerts_events.json');
    const deployments = await callsOf(() => get(gateway, '/v2/alerts_events.json?filter[event_type]=DEPLOYMENT'));
    expect(deployments).toBe(1);
    const violations = await callsOf(() => get(gateway, '/v2/alerts_events.json?filter[event_type]=VIOLATION'));
    expect(violations).toBeGreaterThan(0);
    expect(violations).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(await callsOf(() => get(gateway, '/v2/alerts_events.json?filter[event_type]=VIOLATION&page=2'))).toBe(0);
  });

  it('a close made through the gateway forgets the kept read: the next page reads again and shows the close', async () => {
    const gateway = await freshGateway();
    const before = await get(gateway, '/v2/alerts_events.json?filter[event_type]=VIOLATION_CLOSE');
    const open = (await get(gateway, '/v2/alerts_incidents.json?only_open=true')).body.incidents as Array<{ id: number }>;
    expect(open.length).toBeGreaterThan(0);
    const closed = await get(gateway, `/v2/alerts_incidents/${open[0]!.id}/close.json`, 'PUT');
    expect(closed.status).toBe(200);
    let after: Got | undefined;
    const cost = await callsOf(async () => (after = await get(gateway, '/v2/alerts_events.json?filter[event_type]=VIOLATION_CLOSE&page=2')));
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    // The close is the newest VIOLATION_CLOSE: page 1 now starts with it, and page 2 (read again) agrees with a cold read.
    const cold = await get(await freshGateway(), '/v2/alerts_events.json?filter[event_type]=VIOLATION_CLOSE&page=2');
    expect(after).toEqual(cold);
    const firstAfter = await get(gateway, '/v2/alerts_events.json?filter[event_type]=VIOLATION_CLOSE');
    expect((firstAfter.body.recent_events as Array<{ incident_id: number }>)[0]!.incident_id).toBe(open[0]!.id);
    expect(firstAfter.body).not.toEqual(before.body);
    // alerts_incidents' kept read is forgotten too: its page 2 reads again.
    await get(gateway, '/v2/alerts_incidents.json');
    const second = open[1]!.id;
    expect((await get(gateway, `/v2/alerts_incidents/${second}/close.json`, 'PUT')).status).toBe(200);
    expect(await callsOf(() => get(gateway, '/v2/alerts_incidents.json?page=2'))).toBeGreaterThan(0);
  });
});
