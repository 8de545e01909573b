import fc from 'fast-check';
import { expect, it, describe } from 'vitest';
import { accountUsers, sandboxUsers, USERS_PAGE_SIZE, type SandboxUser } from '../../sandbox/users.ts';
import { reshapeUser, UserTitles, userV2Id } from './users.ts';
import { describeDifferential, type DifferentialCase } from '../../test/support/differential.ts';
import { DEMO_KEY, MULTI_KEY, PRIMARY_ACCOUNT, SECONDARY_ACCOUNT, SECONDARY_KEY } from '../../test/support/harness.ts';

/**
 * Users (list, show): the gateway through the sandbox's NerdGraph user management equals the
 * sandbox's legacy /v2 face, request for request (status, content type, Link, body; only the
 * mapping's gap paths removed: `role`). The two faces order users differently (the legacy face
 * by id; the gateway domain after domain, as NerdGraph lists them, so that a page reads only as
 * far as it needs: users.list assumptions; v2 documented no order), so list pages are compared
 * by status, type, Link and size, and their users as one set over the pages of one listing (a
 * walk from page 1 to past the end), or over the page alone when it is the whole list.
 */

const demo = { 'X-Api-Key': DEMO_KEY };
const secondaryKey = { 'X-Api-Key': SECONDARY_KEY };

function listCases(primary: readonly SandboxUser[], secondary: readonly SandboxUser[]): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo, method?: string, listing?: string): void =>
    void cases.push({ route: 'users.list', name, path, headers, listKey: 'users', ...(method && { method }), ...(listing && { listing }) });
  const sample = primary.filter((_, i) => i % 45 === 0).slice(0, 6).map((u) => u.id);
  const mixedCase = primary.find((u) => /[A-Z]/.test(u.email));
  for (const format of ['json', 'xml']) {
    const path = `/v2/users.${format}`;
    for (const [keyName, headers] of [
      ['demo', demo],
      ['demo via Api-Key', { 'Api-Key': DEMO_KEY }],
      ['secondary', secondaryKey],
    ] as const) {
      for (const page of ['', '?page=2', '?page=3', '?page=4']) add(`${keyName} ${page}`, `${path}${page}`, headers, undefined, `${keyName} ${format}`);
      for (const page of ['?page=1', '?page=2', '?page=3']) add(`${keyName} ${page}`, `${path}${page}`, headers, undefined, `${keyName} ${format} from ?page=1`);
    }
    for (const email of ['ada', 'ADA', 'lovelace', '.', `@${PRIMARY_ACCOUNT}.example.com`, 'vandijk', mixedCase!.email.toLowerCase(), 'no-such-user', '%', '\\', "o'brien", 'ada.lovelace']) {
      const filter = `filter[email]=${encodeURIComponent(email)}`;
      const listing = `email ${email} ${format}`;
      add(`email ${email}`, `${path}?${filter}`, demo, undefined, listing);
      // The filters that match every user span three pages: walk them.
      if (email === '.' || email.startsWith('@')) for (const page of [2, 3, 4]) add(`email ${email} page ${page}`, `${path}?${filter}&page=${page}`, demo, undefined, listing);
    }
    add('ids raw commas', `${path}?filter[ids]=${sample.join(',')}`);
    add('ids encoded', `${path}?filter%5Bids%5D=${sample.join('%2C')}`);
    add('ids[] spelling', `${path}?${sample.map((id) => `filter[ids][]=${id}`).join('&')}`);
    add('ids of another account', `${path}?filter[ids]=${[secondary[0]!.id, sample[0]].join(',')}`);
    add('ids of another account, their key', `${path}?filter[ids]=${[secondary[0]!.id, sample[0]].join(',')}`, secondaryKey);
    add('ids unknown', `${path}?filter[ids]=1,2,3`);
    add('ids empty', `${path}?filter[ids]=`);
    add('ids with email', `${path}?filter[ids]=${sample.join(',')}&filter[email]=${encodeURIComponent(primary.find((u) => u.id === sample[1])!.email.slice(0, 4))}`);
    add('bad ids', `${path}?filter[ids]=1,abc`);
    add('bad page', `${path}?page=0`);
    add('bad page text', `${path}?page=two`);
    add('far page', `${path}?page=40`);
    add('control characters in email', `${path}?filter[email]=%01`);
    add('api_key parameter never echoed', `${path}?api_key=${DEMO_KEY}&page=2`);
    add('missing key', path, {});
    add('bad key', path, { 'X-Api-Key': 'NRAK-NOT-A-KEY' });
    add('account not allowed', path, { 'X-Api-Key': DEMO_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) });
    add('multi pinned to its home account', `${path}?page=2`, { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(PRIMARY_ACCOUNT) });
    add('PUT is 405 with Allow', path, demo, 'PUT');
  }
  return cases;
}

function showCases(primary: readonly SandboxUser[], secondary: readonly SandboxUser[]): DifferentialCase[] {
  const cases: DifferentialCase[] = [];
  const add = (name: string, path: string, headers: Record<string, string> = demo, method?: string): void => void cases.push({ route: 'users.show', name, path, headers, ...(method && { method }) });
  const sample = primary.filter((_, i) => i % 45 === 0).slice(0, 10);
  for (const format of ['json', 'xml']) {
    for (const user of sample) add(`show ${user.id}`, `/v2/users/${user.id}.${format}`);
    for (const user of secondary.slice(0, 2)) add(`show secondary ${user.id}`, `/v2/users/${user.id}.${format}`, secondaryKey);
    add('show of another account', `/v2/users/${secondary[0]!.id}.${format}`);
    add('show unknown', `/v2/users/123.${format}`);
    add('show non-numeric', `/v2/users/abc.${format}`);
    add('show zero', `/v2/users/0.${format}`);
    add('show huge', `/v2/users/99999999999999999999.${format}`);
    add('show bad key', `/v2/users/${sample[0]!.id}.${format}`, { 'X-Api-Key': 'nope' });
    add('show missing key', `/v2/users/${sample[0]!.id}.${format}`, {});
    add('DELETE is 405 with Allow', `/v2/users/${sample[0]!.id}.${format}`, demo, 'DELETE');
  }
  return cases;
}

describeDifferential('differential: users, gateway == legacy /v2', { apmApps: 40 }, (faces) => {
  const corpus = (): DifferentialCase[] => {
    const [primary, secondary] = [accountUsers(faces.legacy.data, PRIMARY_ACCOUNT), accountUsers(faces.legacy.data, SECONDARY_ACCOUNT)];
    return [...listCases(primary, secondary), ...showCases(primary, secondary)];
  };

  it('has at least 30 requests per route, over more than two pages of users in two authentication domains', () => {
    for (const route of ['users.list', 'users.show']) {
      const count = corpus().filter((c) => c.route === route).length;
      expect(count, route).toBeGreaterThanOrEqual(30);
      console.info(`differential corpus ${route}: ${count} requests`);
    }
    const data = faces.legacy.data;
    const primary = accountUsers(data, PRIMARY_ACCOUNT);
    expect(primary.length).toBeGreaterThan(2 * 200);
    expect(primary.length).toBeGreaterThan(2 * USERS_PAGE_SIZE);
    expect(new Set(primary.map((u) => u.domainId)).size).toBe(2);
    expect(sandboxUsers(data).users.some((u) => u.lastName.includes(' '))).toBe(true);
  });

  it.each(['users.list', 'users.show'])('%s answers every request of the corpus exactly as v2 would, but for the documented gaps', async (route) => {
    const report = await faces.expectAlike(corpus().filter((c) => c.route === route));
    expect(report.statuses()).toEqual(expect.arrayContaining(route === 'users.show' ? [200, 401, 404, 405] : [200, 401, 403, 405, 422]));
  }, 120_000);

  it('differs only at the role: the gateway sends null where v2 had the role', async () => {
    const primary = accountUsers(faces.legacy.data, PRIMARY_ACCOUNT);
    const owner = primary[0]!;
    const viaGateway = (await (await faces.gateway.app.request(`/v2/users/${owner.id}.json`, { headers: demo })).json()) as { user: Record<string, unknown> };
    const viaLegacy = (await (await fetch(`${faces.legacyUrl}/v2/users/${owner.id}.json`, { headers: demo })).json()) as { user: Record<string, unknown> };
    expect(viaLegacy.user.role).toBe('owner');
    expect(viaGateway.user).toEqual({ ...viaLegacy.user, role: null });
    expect(Object.keys(viaGateway.user)).toEqual(['id', 'first_name', 'last_name', 'email', 'role']);
  });

  it("lists the key's organization, not a pinned account's users (documented gap)", async () => {
    const response = await faces.gateway.app.request('/v2/users.json?page=3', { headers: { 'X-Api-Key': MULTI_KEY, 'X-Account-Id': String(SECONDARY_ACCOUNT) } });
    expect(response.status).toBe(200);
    const { users } = (await response.json()) as { users: Array<{ id: number }> };
    const primaryIds = new Set(accountUsers(faces.legacy.data, PRIMARY_ACCOUNT).map((u) => Number(u.id)));
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((u) => primaryIds.has(u.id))).toBe(true);
    expect(faces.gapsOf('users.list').some((g) => g.description.includes("key's organization"))).toBe(true);
  });

  it('reads only as far as a page needs, each NerdGraph page once over a walk, and none for an empty filter[ids]', async () => {
    const walk = async (page: number): Promise<number> => {
      const before = await faces.gateway.upstreamCount('Users');
      const response = await faces.gateway.app.request(`/v2/users.json?page=${page}`, { headers: demo });
      expect(response.status).toBe(200);
      return (await faces.gateway.upstreamCount('Users')) - before;
    };
    // 450 users: the default domain's 360 (4 NerdGraph pages of 100), then the SSO one's 90 (1 page).
    // Page 1: the first read (both domains' first pages), then the default domain's second page.
    expect(await walk(1)).toBe(2);
    // Page 2 carries on from what page 1 read: the default domain's third and fourth pages.
    expect(await walk(2)).toBe(2);
    // Page 3 is the default domain's last 0 users and the SSO domain's, read already; page 4 is past the end.
    expect(await walk(3)).toBe(0);
    expect(await walk(4)).toBe(0);
    const before = await faces.gateway.upstreamCount('Users');
    const empty = await faces.gateway.app.request('/v2/users.json?filter[ids]=', { headers: demo });
    expect(await empty.json()).toEqual({ users: [] });
    expect((await faces.gateway.upstreamCount('Users')) - before).toBe(0);
    const unknown = await faces.gateway.app.request('/v2/users/77.xml', { headers: demo });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain(UserTitles.notFound);
  });
});

describe('users: reshaping NerdGraph users', () => {
  it('splits the name at its first space and keeps numeric ids', () => {
    expect(reshapeUser({ id: '1000000042', name: 'Ada van Dijk', email: 'a@x', type: null })).toEqual({ id: 1000000042, first_name: 'Ada', last_name: 'van Dijk', email: 'a@x', role: null });
    expect(reshapeUser({ id: '7', name: 'Cher', email: null, type: null })).toMatchObject({ first_name: 'Cher', last_name: '' });
    expect(reshapeUser({ id: '7', name: null, email: null, type: null })).toMatchObject({ first_name: null, last_name: null });
  });

  it('loses nothing of a name but surrounding blanks: first_name, a space and last_name give it back (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (name) => {
        const shaped = reshapeUser({ id: '1', name, email: null, type: null });
        const trimmed = name.trim();
        expect(String(shaped.first_name).includes(' ')).toBe(false);
        expect(shaped.last_name === '' ? shaped.first_name : `${String(shaped.first_name)} ${String(shaped.last_name)}`).toBe(trimmed);
      }),
    );
  });

  it('derives a stable positive id below 2^53 for non-numeric user ids', () => {
    const id = userV2Id('b1f0c2d3-aaaa-bbbb-cccc-000000000001');
    expect(Number.isSafeInteger(id) && id > 0).toBe(true);
    expect(userV2Id('b1f0c2d3-aaaa-bbbb-cccc-000000000001')).toBe(id);
    expect(userV2Id('00123')).not.toBe(123);
    expect(userV2Id('99999999999999999999')).toBeLessThan(2 ** 53);
  });
});
