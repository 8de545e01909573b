import { describe, expect, it } from 'vitest';
import { createSandbox } from '../server.ts';
import { FIRST_ACCOUNT_USERS, OTHER_ACCOUNT_USERS, USERS_PAGE_SIZE, accountUsers, sandboxUsers } from '../users.ts';

/** The sandbox's NerdGraph user management (actor.organization.userManagement). */
const sandbox = createSandbox({ seed: 3, apmApps: 30, now: () => 1_750_000_000_000 });

const USERS = `
  query Users($domainIds: [ID!], $cursor: String, $filter: UserManagementUserFilterInput) {
    actor { organization { userManagement { authenticationDomains(id: $domainIds) { nextCursor totalCount authenticationDomains {
      id name provisioningType users(cursor: $cursor, filter: $filter) { nextCursor totalCount users { id name email type { id displayName } } } } } } } }
  }`;

interface Domain {
  id: string;
  users: { nextCursor: string | null; totalCount: number; users: Array<{ id: string; name: string; email: string }> };
}

async function post(variables: Record<string, unknown>, apiKey = 'NRAK-SANDBOX-DEMO'): Promise<{ domains?: Domain[]; errors?: Array<{ message: string }> }> {
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': apiKey },
    body: JSON.stringify({ query: USERS, variables }),
  });
  const body = (await response.json()) as { data?: { actor: { organization: { userManagement: { authenticationDomains: { authenticationDomains: Domain[] } } } } }; errors?: Array<{ message: string }> };
  return { ...(body.data ? { domains: body.data.actor.organization.userManagement.authenticationDomains.authenticationDomains } : {}), ...(body.errors ? { errors: body.errors } : {}) };
}

describe('sandbox user management', () => {
  const data = sandbox.data;

  it('generates the same users for the same accounts, 450 in the first account over two domains', () => {
    expect(sandboxUsers(data)).toBe(sandboxUsers(data));
    const [first, second] = data.accounts;
    expect(accountUsers(data, first!.id)).toHaveLength(FIRST_ACCOUNT_USERS);
    expect(accountUsers(data, second!.id)).toHaveLength(OTHER_ACCOUNT_USERS);
    const ids = sandboxUsers(data).users.map((u) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[1-9]\d+$/.test(id))).toBe(true);
  });

  it("lists the key's organization per domain, pages of 100 by cursor", async () => {
    const { domains } = await post({});
    expect(domains!.map((d) => d.id)).toHaveLength(2);
    const total = domains!.reduce((n, d) => n + d.users.totalCount, 0);
    expect(total).toBe(FIRST_ACCOUNT_USERS);
    const main = domains!.find((d) => d.users.nextCursor !== null)!;
    expect(main.users.users).toHaveLength(USERS_PAGE_SIZE);
    const next = await post({ domainIds: [main.id], cursor: main.users.nextCursor });
    expect(next.domains).toHaveLength(1);
    expect(next.domains![0]!.users.users[0]!.id).not.toBe(main.users.users[0]!.id);
  });

  it('filters by email (case-insensitive substring) and by id', async () => {
    const { domains } = await post({ filter: { email: { contains: 'ADA' } } });
    const users = domains!.flatMap((d) => d.users.users);
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((u) => u.email.toLowerCase().includes('ada'))).toBe(true);
    const one = accountUsers(data, data.accounts[0]!.id)[17]!;
    const byId = await post({ filter: { id: { eq: one.id } } });
    expect(byId.domains!.flatMap((d) => d.users.users).map((u) => u.id)).toEqual([one.id]);
    const other = await post({ filter: { id: { in: [accountUsers(data, data.accounts[1]!.id)[0]!.id] } } });
    expect(other.domains!.flatMap((d) => d.users.users)).toEqual([]);
  });

  it('refuses a cursor of another list', async () => {
    const { domains } = await post({});
    const main = domains!.find((d) => d.users.nextCursor !== null)!;
    const refused = await post({ domainIds: [main.id], cursor: main.users.nextCursor, filter: { email: { contains: 'a' } } });
    expect(refused.errors?.[0]?.message).toBe('Invalid cursor');
    expect((await post({ cursor: 'junk' })).errors?.[0]?.message).toBe('Invalid cursor');
  });
});
