import { afterEach, describe, expect, it } from 'vitest';
import { MAX_USER_READS, UserTitles, userV2Id } from './users.ts';
import { accountsAnswer, json, startFakeUpstream, type FakeRequest } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, createTestGateway } from '../../test/support/harness.ts';

/**
 * Users over answers the sandbox never gives: no organization for the key, a surprising
 * shape, non-numeric ids, and an organization too large to read for one v2 answer.
 */
const ACCOUNT = 1000001;
const demo = { 'X-Api-Key': DEMO_KEY };

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function gatewayOver(users: (request: FakeRequest) => unknown) {
  const upstream = await startFakeUpstream((request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
    json(res, 200, { data: users(request) });
  });
  close = upstream.close;
  return { gateway: await createTestGateway({ nerdgraphUrl: upstream.url }), received: upstream.received };
}

const organization = (domains: unknown[]) => ({ actor: { organization: { userManagement: { authenticationDomains: { nextCursor: null, authenticationDomains: domains } } } } });
const user = (id: string, name: string | null) => ({ id, name, email: `${id}@example.com`, type: { id: '0', displayName: 'Basic' } });

describe('users over NerdGraph user management', () => {
  it('answers 403 with a clear title when the key cannot read its organization', async () => {
    const { gateway } = await gatewayOver(() => ({ actor: { organization: null } }));
    const response = await gateway.app.request('/v2/users.json', { headers: demo });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: { title: UserTitles.noOrganization } });
  });

  it('answers 502 (never 500) for a surprising answer', async () => {
    const { gateway } = await gatewayOver(() => organization([{ id: 'd', users: { nextCursor: null, users: [{ id: 5 }] } }]));
    const response = await gateway.app.request('/v2/users.xml', { headers: demo });
    expect(response.status).toBe(502);
  });

  it('derives ids for non-numeric user ids, and lists domain after domain in NerdGraph\'s order', async () => {
    const { gateway, received } = await gatewayOver(() =>
      organization([
        { id: 'a', users: { nextCursor: null, users: [user('900', 'Zed Last'), user('abc-uuid', 'Mary Ann Smith')] } },
        { id: 'b', users: { nextCursor: null, users: [user('15', null)] } },
      ]),
    );
    const response = await gateway.app.request('/v2/users.json?filter[email]=example', { headers: demo });
    expect(response.status).toBe(200);
    const { users } = (await response.json()) as { users: Array<Record<string, unknown>> };
    expect(users.map((u) => u.id)).toEqual([900, userV2Id('abc-uuid'), 15]);
    expect(users.find((u) => u.id === userV2Id('abc-uuid'))).toMatchObject({ first_name: 'Mary', last_name: 'Ann Smith', role: null });
    expect(users.find((u) => u.id === 15)).toMatchObject({ first_name: null, last_name: null });
    // The filter went to NerdGraph as a variable, never into the document.
    const sent = received.filter((r) => r.operationName === 'Users');
    expect(sent[0]!.variables).toMatchObject({ filter: { email: { contains: 'example' } }, domainIds: null, cursor: null });
    expect(sent[0]!.query).not.toContain('example');
  });

  it(`stops after ${MAX_USER_READS} reads with a 422 that says to read the pages in order or narrow the list`, async () => {
    let n = 0;
    const { gateway, received } = await gatewayOver(() => organization([{ id: 'a', users: { nextCursor: `c${++n}`, users: [user(String(n), 'A B')] } }]));
    const response = await gateway.app.request('/v2/users.json', { headers: demo });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: { title: UserTitles.tooMany } });
    expect(received.filter((r) => r.operationName === 'Users')).toHaveLength(MAX_USER_READS);
  });

  it('follows each domain with its own id and cursor', async () => {
    const { gateway, received } = await gatewayOver((request) => {
      const { domainIds, cursor } = request.variables as { domainIds: string[] | null; cursor: string | null };
      if (domainIds === null) {
        return organization([
          { id: 'a', users: { nextCursor: 'a2', users: [user('1', 'A One')] } },
          { id: 'b', users: { nextCursor: 'b2', users: [user('2', 'B Two')] } },
        ]);
      }
      const id = domainIds[0]!;
      return organization([{ id, users: { nextCursor: null, users: [user(id === 'a' ? '3' : '4', `${cursor} X`)] } }]);
    });
    const response = await gateway.app.request('/v2/users.json', { headers: demo });
    const { users } = (await response.json()) as { users: Array<{ id: number; first_name: string }> };
    expect(users.map((u) => [u.id, u.first_name])).toEqual([
      [1, 'A'],
      [3, 'a2'],
      [2, 'B'],
      [4, 'b2'],
    ]);
    expect(received.filter((r) => r.operationName === 'Users').map((r) => r.variables.domainIds)).toEqual([null, ['a'], ['b']]);
  });

  it('reads a domain only as far as the page needs, carries a walk on from what it read, and names the last page by totalCount', async () => {
    // Domain a: 500 users in 5 NerdGraph pages of 100; domain b: 50 users in one page.
    const pageOf = (domain: string, offset: number, size: number, total: number) => ({
      id: domain,
      users: {
        nextCursor: offset + size < total ? `${domain}${offset + size}` : null,
        totalCount: total,
        users: Array.from({ length: Math.min(size, total - offset) }, (_, i) => user(String((domain === 'a' ? 10_000 : 20_000) + offset + i), `${domain} ${offset + i}`)),
      },
    });
    const { gateway, received } = await gatewayOver((request) => {
      const { domainIds, cursor } = request.variables as { domainIds: string[] | null; cursor: string | null };
      if (domainIds === null) return organization([pageOf('a', 0, 100, 500), pageOf('b', 0, 100, 50)]);
      return organization([pageOf(domainIds[0]!, Number(cursor!.slice(1)), 100, domainIds[0] === 'a' ? 500 : 50)]);
    });
    const reads = (): Array<string | null> => received.filter((r) => r.operationName === 'Users').map((r) => (r.variables as { cursor: string | null }).cursor);
    const page = async (n: number) => {
      const response = await gateway.app.request(`/v2/users.json?page=${n}`, { headers: demo });
      const { users } = (await response.json()) as { users: Array<{ id: number }> };
      return { ids: users.map((u) => u.id), link: response.headers.get('link') };
    };
    const first = await page(1);
    expect(first.ids).toEqual(Array.from({ length: 200 }, (_, i) => 10_000 + i));
    expect(first.link).toContain('page=3>; rel="last"');
    expect(reads()).toEqual([null, 'a100']);
    const second = await page(2);
    expect(second.ids).toEqual(Array.from({ length: 200 }, (_, i) => 10_200 + i));
    expect(reads()).toEqual([null, 'a100', 'a200', 'a300']);
    // Domain a's last page, then domain b's users, read with the first request.
    const third = await page(3);
    expect(third.ids).toEqual([...Array.from({ length: 100 }, (_, i) => 10_400 + i), ...Array.from({ length: 50 }, (_, i) => 20_000 + i)]);
    expect(third.link).not.toContain('rel="next"');
    expect(reads()).toEqual([null, 'a100', 'a200', 'a300', 'a400']);
  });

  it('never answers a short list: more domains, a domain gone between pages, or a repeated cursor is a 502', async () => {
    const cases: Array<[string, (request: FakeRequest) => unknown]> = [
      ['a further page of domains', () => ({ actor: { organization: { userManagement: { authenticationDomains: { nextCursor: 'MORE', authenticationDomains: [{ id: 'a', users: { nextCursor: null, users: [user('1', 'A One')] } }] } } } } })],
      ['a domain gone', (request) => ((request.variables as { domainIds: unknown }).domainIds === null ? organization([{ id: 'a', users: { nextCursor: 'a2', users: [user('1', 'A One')] } }]) : organization([]))],
      ['a repeated cursor', () => organization([{ id: 'a', users: { nextCursor: 'same', users: [user('1', 'A One')] } }])],
    ];
    for (const [name, answer] of cases) {
      const { gateway } = await gatewayOver(answer);
      const response = await gateway.app.request('/v2/users.json', { headers: demo });
      expect(response.status, name).toBe(502);
      expect(await response.json(), name).toEqual({ error: { title: UserTitles.incomplete } });
      await close?.();
      close = undefined;
    }
  });

  it('shows 15-digit numeric ids as they are, and derives longer ones (v2 paths take at most 15 digits)', () => {
    expect(userV2Id('123456789012345')).toBe(123456789012345);
    expect(userV2Id('1234567890123456')).not.toBe(1234567890123456);
  });
});
