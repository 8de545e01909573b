/**
 * The sandbox's users, both faces' source (helper A): NerdGraph's user management
 * (`actor.organization.userManagement.authenticationDomains{users}`) and the legacy face's
 * `/v2/users` list and show (legacy/users.ts) read the same generated people.
 *
 * Users are a pure function of the accounts (their own random stream, memoised per data set),
 * so they need no field in SandboxData. Each account is its own organization here: a key's
 * organization is that of its home account (NerdGraph: the organization of the key's user).
 * The first account holds 450 users over two authentication domains, with ids interleaved
 * across them (more than two v2 pages of 200); every other account 35 in one domain.
 */
import { GraphQLError } from 'graphql';
import type { SandboxData } from './model.ts';
import { createRandom } from './world/draws.ts';
import { hashText } from './search-paging.ts';

export type SandboxRole = 'owner' | 'admin' | 'user' | 'restricted';

export interface SandboxUser {
  /** The NerdGraph `UserManagementUser.id`: a numeric string, also the v2 id. */
  id: string;
  accountId: number;
  domainId: string;
  firstName: string;
  lastName: string;
  email: string;
  /** v2's role; NerdGraph has none (its user type is a billing tier). */
  role: SandboxRole;
  type: { id: string; displayName: string };
}

export interface SandboxAuthenticationDomain {
  id: string;
  name: string;
  provisioningType: string;
  accountId: number;
}

export interface SandboxUsers {
  users: SandboxUser[];
  domains: SandboxAuthenticationDomain[];
}

/** NerdGraph pages users 100 at a time here (the real page size is UNCONFIRMED). */
export const USERS_PAGE_SIZE = 100;
export const FIRST_ACCOUNT_USERS = 450;
export const OTHER_ACCOUNT_USERS = 35;
const USERS_STREAM = 0x05e7_5a11;

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Edsger', 'Radia', 'Guido', 'Hedy', 'Tim', 'Sophie', 'Niklaus', 'Anita', 'Bjarne', 'Joan', 'Yukihiro'];
// Some last names hold a space: v2 kept them whole, and the split at the first space of
// NerdGraph's `name` keeps them whole too (first names never hold one here).
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Allen', 'van Dijk', 'Perlman', 'van Rossum', 'Lamarr', 'Berners-Lee', 'Wilson', 'Wirth', 'Borg', 'Stroustrup', 'de la Cruz', "O'Brien"];
const TYPES = {
  full: { id: '1', displayName: 'Full platform' },
  core: { id: '2', displayName: 'Core' },
  basic: { id: '0', displayName: 'Basic' },
} as const;

const generated = new WeakMap<SandboxData, SandboxUsers>();

function roleOf(index: number): SandboxRole {
  if (index === 0) return 'owner';
  if (index % 7 === 0) return 'admin';
  if (index % 11 === 0) return 'restricted';
  return 'user';
}

/** Every account's users and authentication domains, generated once per data set. */
export function sandboxUsers(data: SandboxData): SandboxUsers {
  const known = generated.get(data);
  if (known) return known;
  const random = createRandom(USERS_STREAM);
  const users: SandboxUser[] = [];
  const domains: SandboxAuthenticationDomain[] = [];
  data.accounts.forEach((account, accountIndex) => {
    const main = { id: `${account.id}-default`, name: 'Default', provisioningType: 'manual', accountId: account.id };
    const sso = { id: `${account.id}-sso`, name: 'Okta SSO', provisioningType: 'scim', accountId: account.id };
    domains.push(main);
    if (accountIndex === 0) domains.push(sso);
    const count = accountIndex === 0 ? FIRST_ACCOUNT_USERS : OTHER_ACCOUNT_USERS;
    let id = 1_000_000_000 + accountIndex * 100_000_000;
    for (let index = 0; index < count; index++) {
      id += 1 + Math.floor(random() * 97);
      const firstName = FIRST_NAMES[Math.floor(random() * FIRST_NAMES.length)] as string;
      const lastName = LAST_NAMES[Math.floor(random() * LAST_NAMES.length)] as string;
      const role = roleOf(index);
      const local = `${firstName}.${lastName}`.toLowerCase().replace(/[^a-z.]/g, '');
      users.push({
        id: String(id),
        accountId: account.id,
        domainId: accountIndex === 0 && index % 5 === 3 ? sso.id : main.id,
        firstName,
        lastName,
        // A few mixed-case addresses: v2's filter[email] matched them whatever the case.
        email: `${index % 13 === 5 ? local.replace(/^./, (c) => c.toUpperCase()) : local}${index}@${account.id}.example.com`,
        role,
        type: role === 'owner' || role === 'admin' ? TYPES.full : index % 3 === 0 ? TYPES.core : TYPES.basic,
      });
    }
  });
  const made = { users, domains };
  generated.set(data, made);
  return made;
}

/** The users of one account (v2: the account's users), ascending by id. */
export function accountUsers(data: SandboxData, accountId: number): SandboxUser[] {
  return sandboxUsers(data).users.filter((user) => user.accountId === accountId);
}

// ---------------------------------------------------------------------------------------------
// The NerdGraph face: Actor.organization

interface UserFilterInput {
  email?: { contains?: string | null; eq?: string | null } | null;
  id?: { eq?: string | null; in?: readonly string[] | null } | null;
}

interface UserManagementUserSource {
  id: string;
  name: string;
  email: string;
  type: { id: string; displayName: string };
}

function invalidInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { errorClass: 'INVALID_INPUT' } });
}

/** A cursor names the offset into one filtered list; another list's cursor is refused. */
function encodeCursor(offset: number, list: string): string {
  return Buffer.from(JSON.stringify({ offset, list }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | null | undefined, list: string): number {
  if (cursor === undefined || cursor === null) return 0;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { offset?: unknown; list?: unknown };
    if (typeof decoded.offset === 'number' && Number.isInteger(decoded.offset) && decoded.offset >= 0 && decoded.list === list) return decoded.offset;
  } catch {
    // Falls through to the refusal below.
  }
  throw invalidInput('Invalid cursor');
}

function matches(user: SandboxUser, filter: UserFilterInput | null | undefined, ids: readonly string[] | null | undefined): boolean {
  if (ids && !ids.includes(user.id)) return false;
  const email = filter?.email;
  if (email?.contains !== undefined && email.contains !== null && !user.email.toLowerCase().includes(email.contains.toLowerCase())) return false;
  if (email?.eq !== undefined && email.eq !== null && user.email.toLowerCase() !== email.eq.toLowerCase()) return false;
  const id = filter?.id;
  if (id?.eq !== undefined && id.eq !== null && user.id !== id.eq) return false;
  if (id?.in !== undefined && id.in !== null && !id.in.includes(user.id)) return false;
  return true;
}

/**
 * `actor.organization` for a key whose home account is `accountId`: its authentication
 * domains, each with its users paged USERS_PAGE_SIZE at a time (graphql-js calls the methods
 * with the field's arguments).
 */
export function organizationOf(data: SandboxData, accountId: number | undefined): object | null {
  if (accountId === undefined) return null;
  const { users, domains } = sandboxUsers(data);
  return {
    id: `org-${accountId}`,
    userManagement: {
      authenticationDomains: ({ cursor, id }: { cursor?: string | null; id?: readonly string[] | null }) => {
        if (cursor !== undefined && cursor !== null) throw invalidInput('Invalid cursor');
        const mine = domains.filter((domain) => domain.accountId === accountId && (!id || id.includes(domain.id)));
        return {
          nextCursor: null,
          totalCount: mine.length,
          authenticationDomains: mine.map((domain) => ({
            id: domain.id,
            name: domain.name,
            provisioningType: domain.provisioningType,
            users: (args: { cursor?: string | null; filter?: UserFilterInput | null; id?: readonly string[] | null }) => {
              const list = users.filter((user) => user.domainId === domain.id && matches(user, args.filter, args.id));
              const key = `${domain.id} ${JSON.stringify(args.filter ?? null)} ${JSON.stringify(args.id ?? null)}`;
              const offset = decodeCursor(args.cursor, key);
              const page = list.slice(offset, offset + USERS_PAGE_SIZE);
              const next = offset + USERS_PAGE_SIZE;
              return {
                totalCount: list.length,
                nextCursor: next < list.length ? encodeCursor(next, key) : null,
                users: page.map((user): UserManagementUserSource => ({ id: user.id, name: `${user.firstName} ${user.lastName}`, email: user.email, type: user.type })),
              };
            },
          })),
        };
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The user who owns an API key (NerdGraph's `actor.user`)

/** NerdGraph's `User` (id is an Int in the schema), as `actor { user { id email name } }` answers it. */
export interface SandboxKeyUser {
  id: number;
  name: string;
  email: string;
}

/**
 * The user who owns `apiKey`: the one declared for it (createSandbox `keyUsers`, default
 * world/accounts.ts defaultKeyUsers), else a user of its own, with an id derived from the key (stable
 * across runs). NerdGraph counts concurrent requests per user, not per key ("NerdGraph usage
 * limits": "Requests made by the same user using multiple user keys will all contribute to that
 * user's total concurrent requests"), so graphql.ts limits by this id.
 */
export function keyUserOf(data: SandboxData, apiKey: string): SandboxKeyUser {
  const id = data.keyUsers.get(apiKey) ?? 1_000 + (parseInt(hashText(apiKey), 16) % 9_000_000);
  return { id, name: 'Sandbox User', email: `sandbox-user-${id}@example.com` };
}
