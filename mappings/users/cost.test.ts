import { describe, expect, it } from 'vitest';
import { DEMO_KEY, FIXED_NOW, type TestGateway } from '../../test/support/harness.ts';
import { meteredSandbox } from '../../test/support/metered-walk.ts';

/**
 * What GET /v2/users costs in NerdGraph calls, counted by a relay in front of
 * the sandbox (450 users: a default domain of 360, 4 NerdGraph pages of 100, and an SSO one of
 * 90): a cold first page at most 3 calls, the caller's account look-up included; the later pages
 * of a walk carry on from what it read, so the whole walk reads each NerdGraph page once, and
 * every page equals the same page read cold; what was kept is forgotten after 30 s.
 */
const MAX_CALLS_PER_PAGE = 3;
/** NerdGraph requests that read every user of the sandbox's first organization: one per domain page, the first pages together. */
const USERS_PAGES_OF_THE_ORGANIZATION = 4;

const metered = meteredSandbox({ apmApps: 20 });

interface Got {
  status: number;
  ids: number[];
  link: string | null;
  next: string | undefined;
}

async function get(gateway: TestGateway, path: string): Promise<Got> {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  const link = response.headers.get('link');
  const next = /<([^>]*)>; rel="next"/.exec(link ?? '')?.[1];
  const body = (await response.json()) as { users?: Array<{ id: number }> };
  return { status: response.status, ids: (body.users ?? []).map((user) => user.id), link, next: next === undefined ? undefined : new URL(next).pathname + new URL(next).search };
}

/** The NerdGraph calls `run` makes, all operations (the account look-up too). */
const callsOf = metered.callsOf;

describe('users: NerdGraph calls per page', () => {
  it(`a cold first page costs at most ${MAX_CALLS_PER_PAGE} NerdGraph calls, the account look-up included; the walk reads each NerdGraph page once`, async () => {
    const gateway = await metered.freshGateway();
    const pages: Got[] = [];
    const firstCost = await callsOf(async () => pages.push(await get(gateway, '/v2/users.json')));
    const firstUsersCalls = metered.meter.calls('Users');
    const restCost = await callsOf(async () => {
      for (let next = pages[0]!.next; next !== undefined && pages.length < 20; next = pages.at(-1)!.next) pages.push(await get(gateway, next));
    });
    expect(firstCost).toBeLessThanOrEqual(MAX_CALLS_PER_PAGE);
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200]);
    expect(pages.map((page) => page.ids.length)).toEqual([200, 200, 50]);
    // Every user once over the walk.
    expect(new Set(pages.flatMap((page) => page.ids)).size).toBe(450);
    // The walk read each NerdGraph page once: page 1's reads and the rest together are the organization's pages.
    expect(firstUsersCalls + restCost).toBe(USERS_PAGES_OF_THE_ORGANIZATION);
    expect(metered.meter.calls('AccessibleAccounts')).toBe(0);

    // Each page of the walk equals the same page read cold (a fresh gateway, nothing kept).
    for (const [index, page] of pages.entries()) {
      const cold = await get(await metered.freshGateway(), `/v2/users.json?page=${index + 1}`);
      expect(page, `page ${index + 1}`).toEqual(cold);
    }
  });

  it('page 1 always reads anew; a page past the end costs nothing more than the first read', async () => {
    const gateway = await metered.freshGateway();
    await get(gateway, '/v2/users.json?page=3');
    // Page 1 starts a walk: it does not take what an earlier walk kept.
    expect(await callsOf(() => get(gateway, '/v2/users.json'))).toBe(2);
    const cold = await metered.freshGateway();
    let far: Got | undefined;
    // NerdGraph's totalCount (450) says page 40 holds nothing: the first read, and the account look-up.
    expect(await callsOf(async () => (far = await get(cold, '/v2/users.json?page=40')))).toBe(2);
    expect(far).toMatchObject({ status: 200, ids: [] });
    // It points back at the last page, which the count gives.
    expect(far!.link).toContain('/v2/users.json?page=3>; rel="prev"');
  });

  it('forgets what a walk read after 30 s: the next page reads from the start again', async () => {
    let clock = FIXED_NOW;
    const gateway = await metered.freshGateway({ now: () => clock });
    const first = await get(gateway, '/v2/users.json');
    expect(await callsOf(() => get(gateway, '/v2/users.json?page=2'))).toBe(2);
    clock += 31_000;
    // Cold: the first read, then the default domain's pages 2 to 4.
    let again: Got | undefined;
    expect(await callsOf(async () => (again = await get(gateway, '/v2/users.json?page=2')))).toBe(USERS_PAGES_OF_THE_ORGANIZATION);
    expect(again!.ids).not.toEqual(first.ids);
    expect(again!.ids).toHaveLength(200);
  });
});
