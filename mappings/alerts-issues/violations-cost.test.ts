import { describe, expect, it } from 'vitest';
import { FIXED_NOW } from '../../test/support/harness.ts';
import { getWithRels as get, meteredSandbox, walkNext as walk, type Got } from '../../test/support/metered-walk.ts';

/**
 * What alerts_violations costs in NerdGraph calls, counted by a relay in front
 * of the sandbox: a cold page (a fresh gateway, its first request, the caller's account look-up
 * included) at most 3 calls, policy and NRQL condition names included; the later pages of a walk
 * reuse what the first page read, so the whole walk costs what its first page did, with answers
 * equal to a cold read of the same page; other dates read again; a close made through the
 * gateway forgets what was kept.
 */
const MAX_CALLS_PER_PAGE = 3;
const HOUR = 3_600_000;

const { freshGateway, callsOf } = meteredSandbox();

type Violation = { id: number; policy_name: string | null; condition_name: string | null };
const violationsOf = (got: Got): Violation[] => got.body.violations as Violation[];

describe('alerts_violations: NerdGraph calls per page', () => {
  it(`a cold first page costs at most ${MAX_CALLS_PER_PAGE} NerdGraph calls, the caller's account look-up and every name included`, async () => {
    const gateway = await freshGateway();
    let first: Got | undefined;
    const calls = await callsOf(async () => (first = await get(gateway, '/v2/alerts_violations.json')));
    expect(first!.status).toBe(200);
    expect(violationsOf(first!)).toHaveLength(200);
    expect(violationsOf(first!).every((violation) => violation.policy_name !== null && violation.condition_name !== null)).toBe(true);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
  });

  it("walking every page costs what the first page cost; each page equals the same page read cold, which costs no more than a first one", async () => {
    const gateway = await freshGateway();
    let pages: Got[] = [];
    const firstCost = await callsOf(async () => (pages = [await get(gateway, '/v2/alerts_violations.json')]));
    const restCost = await callsOf(async () => (pages = await walk(gateway, '/v2/alerts_violations.json?page=2').then((rest) => [pages[0]!, ...rest])));
    expect(firstCost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(restCost).toBe(0);
    expect(pages.length).toBeGreaterThanOrEqual(5);
    expect(pages.every((page) => page.status === 200 && page.rels.last === undefined)).toBe(true);
    const ids = pages.flatMap((page) => violationsOf(page).map((violation) => violation.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const [index, page] of pages.entries()) {
      const path = `/v2/alerts_violations.json?page=${index + 1}`;
      const coldGateway = await freshGateway();
      let cold: Got | undefined;
      expect(await callsOf(async () => (cold = await get(coldGateway, path))), path).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
      expect(page, path).toEqual(cold);
    }
  });

  it('a walk over other dates or only_open reads on its own; its later pages reuse its own read', async () => {
    const gateway = await freshGateway();
    await get(gateway, '/v2/alerts_violations.json');
    const dates = `start_date=${new Date(FIXED_NOW - 120 * HOUR).toISOString()}&end_date=${new Date(FIXED_NOW - 12 * HOUR).toISOString()}`;
    let kept: Got | undefined;
    // Page 2 of other dates is not served from the default window's read.
    const otherDates = await callsOf(async () => (kept = await get(gateway, `/v2/alerts_violations.json?${dates}&page=2`)));
    expect(otherDates).toBeGreaterThan(0);
    expect(otherDates).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(kept).toEqual(await get(await freshGateway(), `/v2/alerts_violations.json?${dates}&page=2`));
    expect(await callsOf(() => get(gateway, `/v2/alerts_violations.json?${dates}&page=3`))).toBe(0);
    await get(gateway, '/v2/alerts_violations.json?only_open=true');
    expect(await callsOf(() => get(gateway, '/v2/alerts_violations.json?only_open=true&page=2'))).toBe(0);
  });

  it('a close made through the gateway forgets the kept read: the next page reads again, agrees with a cold read and shows the close', async () => {
    const gateway = await freshGateway();
    const before = await walk(gateway, '/v2/alerts_violations.json');
    expect(before.length).toBeGreaterThanOrEqual(2);
    const open = (await get(gateway, '/v2/alerts_incidents.json?only_open=true')).body.incidents as Array<{ id: number; links: { violations: number[] } }>;
    const closing = open.find((incident) => incident.links.violations.length > 0)!;
    expect((await get(gateway, `/v2/alerts_incidents/${closing.id}/close.json`, 'PUT')).status).toBe(200);
    let after: Got | undefined;
    const cost = await callsOf(async () => (after = await get(gateway, '/v2/alerts_violations.json?page=2')));
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(after).toEqual(await get(await freshGateway(), '/v2/alerts_violations.json?page=2'));
    // Every violation of the closed incident now has a closed_at.
    const closedIds = new Set(closing.links.violations);
    const listed = (await walk(gateway, '/v2/alerts_violations.json')).flatMap((page) => page.body.violations as Array<{ id: number; closed_at?: number }>);
    const ofClosed = listed.filter((violation) => closedIds.has(violation.id));
    expect(ofClosed.length).toBeGreaterThan(0);
    expect(ofClosed.every((violation) => typeof violation.closed_at === 'number')).toBe(true);
  });
});
