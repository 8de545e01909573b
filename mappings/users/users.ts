import { z } from 'zod';
import { type FieldNote, type KnownGap, type OperationContext, parseAnswer, V2Error, type V2Body, derivedV2Id, ID_PATTERN, XML_ASSUMPTION, v2KeysOf } from '../../src/mapping-api.ts';
import { USER_TITLES } from '../../facts/v2-titles.ts';

/**
 * Users (routes-next.md §7) over NerdGraph user management: the caller's organization's
 * authentication domains, each with its users paged by cursor (mappings/users/Users.graphql), listed
 * domain after domain and read only as far as a v2 page needs (a cold page 1 read
 * every page of every domain before). Shared by GET /v2/users and GET /v2/users/{id}.
 */
export const USERS_OPERATION = 'Users';

/**
 * The v2 integer id of a NerdGraph user (`UserManagementUser.id`, an `ID`): the id itself when
 * it is a v2 id (ID_PATTERN; user ids seen are numeric strings; whether they are the numbers
 * v2 showed is UNCONFIRMED; probe: v2-user-ids-are-nerdgraph-ids), otherwise derived from the string (derivedV2Id).
 */
export function userV2Id(userId: string): number {
  if (ID_PATTERN.test(userId)) return Number(userId);
  return derivedV2Id(`user|${userId}`);
}
export const USERS_PAGE_SIZE = 200;
/** At most this many NerdGraph reads make one v2 answer (each domain page is one read, the first read holding every domain's first page). */
export const MAX_USER_READS = 60;

export const UserTitles = {
  notFound: USER_TITLES.notFound,
  noOrganization: "This API key cannot read the organization's users (NerdGraph user management): use a user key with the Read users permission",
  tooMany: `The page lies further into the organization's users than the gateway reads for one v2 answer (${MAX_USER_READS} NerdGraph pages): read the pages in order from page 1 (a walk carries on where its previous page stopped), or narrow the list with filter[email] or filter[ids]`,
  // A short list would read as the whole list: an answer the gateway cannot complete is an error.
  incomplete: 'NerdGraph user management answered an incomplete user list (a further page of authentication domains, a domain gone between pages, or a repeated cursor); nothing partial is shown',
} as const;

const User = z.object({
  id: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  type: z.object({ id: z.string(), displayName: z.string() }).nullable(),
});
type User = z.infer<typeof User>;

const Domain = z.object({
  id: z.string(),
  // totalCount is an Int! in the schema; an answer without it only costs the past-the-end shortcut.
  users: z.object({ nextCursor: z.string().nullable(), totalCount: z.number().int().nonnegative().optional(), users: z.array(User) }).nullable(),
});

const Answer = z.object({
  actor: z.object({
    organization: z
      .object({
        userManagement: z
          .object({ authenticationDomains: z.object({ nextCursor: z.string().nullable().optional(), authenticationDomains: z.array(Domain) }).nullable() })
          .nullable(),
      })
      .nullable(),
  }),
});

/** NerdGraph's user filter: filter[email] as `contains`, filter[ids] as `id.in`. */
export interface UserFilter {
  email?: { contains: string };
  id?: { in: string[] } | { eq: string };
}

/** v2's user: first and last name split from NerdGraph's `name` at its first space; no role. */
export function reshapeUser(user: User): V2Body {
  const name = user.name?.trim() ?? null;
  const space = name === null ? -1 : name.indexOf(' ');
  return {
    id: userV2Id(user.id),
    first_name: name === null ? null : space < 0 ? name : name.slice(0, space),
    last_name: name === null ? null : space < 0 ? '' : name.slice(space + 1),
    email: user.email,
    role: null,
  };
}

/** One authentication domain as read so far: its users in NerdGraph's order, and the cursor of its next page (null: read to its end). */
interface DomainRead {
  id: string;
  users: V2Body[];
  cursor: string | null;
}

/**
 * How far the users of one filter have been read: every domain in NerdGraph's order, each with
 * the users its pages gave so far. The list is domain after domain, each domain's users in
 * NerdGraph's order, so its start is known as soon as the domains before are read to their end.
 * A value kept between requests (ctx.cache) is never changed: a read continues on a copy.
 */
export interface UsersRead {
  domains: DomainRead[];
  /** NerdGraph's totalCount of the domains, summed (first read; null when a domain gave none): the list's length until it is read whole. */
  totalCount: number | null;
  /** v2 ids listed so far (a user seen twice is listed once, where first read) and cursors followed. */
  seenIds: Set<number>;
  seenCursors: Set<string>;
}

const incomplete = (): V2Error => new V2Error(502, UserTitles.incomplete, { kind: 'users_incomplete' });

/** The read of one NerdGraph request: its domains (403 when the key reaches no organization). */
async function readDomains(ctx: OperationContext, filter: UserFilter | null, variables: { domainIds: string[] | null; cursor: string | null }): Promise<Array<z.infer<typeof Domain>>> {
  const answer = parseAnswer(Answer, await ctx.read(USERS_OPERATION, { ...variables, filter }), USERS_OPERATION);
  const domains = answer.actor.organization?.userManagement?.authenticationDomains;
  if (!domains) throw new V2Error(403, UserTitles.noOrganization);
  // Organizations have a handful of domains; a second page of them is not read, so say so.
  if (domains.nextCursor) throw incomplete();
  return domains.authenticationDomains;
}

/** Adds a page's users to `into`, each id once. */
function addUsers(read: UsersRead, into: V2Body[], users: readonly User[]): void {
  for (const user of users) {
    const shaped = reshapeUser(user);
    if (read.seenIds.has(shaped.id as number)) continue;
    read.seenIds.add(shaped.id as number);
    into.push(shaped);
  }
}

/** Follows `cursor` of `domainId` next (502 when it came before: the walk would loop). */
function follow(read: UsersRead, domainId: string, cursor: string | null | undefined): string | null {
  if (!cursor) return null;
  const key = `${domainId}|${cursor}`;
  if (read.seenCursors.has(key)) throw incomplete();
  read.seenCursors.add(key);
  return cursor;
}

/** The first read: every domain of the organization with its first page of users (one request). */
export async function firstUsersRead(ctx: OperationContext, filter: UserFilter | null): Promise<UsersRead> {
  const read: UsersRead = { domains: [], totalCount: null, seenIds: new Set(), seenCursors: new Set() };
  const domains = await readDomains(ctx, filter, { domainIds: null, cursor: null });
  for (const domain of domains) {
    const users: V2Body[] = [];
    addUsers(read, users, domain.users?.users ?? []);
    read.domains.push({ id: domain.id, users, cursor: follow(read, domain.id, domain.users?.nextCursor) });
  }
  const counts = domains.map((domain) => (domain.users ? domain.users.totalCount : 0));
  if (counts.every((count) => count !== undefined)) read.totalCount = counts.reduce<number>((sum, count) => sum + (count ?? 0), 0);
  return read;
}

/** The start of the list `read` knows for sure: the domains read to their end, then the users of the first one that is not. */
export function listedUsers(read: UsersRead): { users: V2Body[]; complete: boolean } {
  const users: V2Body[] = [];
  for (const domain of read.domains) {
    users.push(...domain.users);
    if (domain.cursor !== null) return { users, complete: false };
  }
  return { users, complete: true };
}

/**
 * `read` carried on (on a copy) until the list's start holds `wanted` users or the list is read
 * whole: each request is the next page of the first domain not read to its end. At most
 * `maxReads` requests; `bounded` says it stopped there with the list still short.
 */
export async function readUsersUntil(ctx: OperationContext, filter: UserFilter | null, from: UsersRead, wanted: number, maxReads = MAX_USER_READS): Promise<{ read: UsersRead; bounded: boolean }> {
  const read: UsersRead = {
    domains: from.domains.map((domain) => ({ ...domain, users: [...domain.users] })),
    totalCount: from.totalCount,
    seenIds: new Set(from.seenIds),
    seenCursors: new Set(from.seenCursors),
  };
  let listed = listedUsers(read).users.length;
  for (let reads = 0; listed < wanted; reads++) {
    const next = read.domains.find((domain) => domain.cursor !== null);
    if (next === undefined || next.cursor === null) break;
    if (reads >= maxReads) return { read, bounded: true };
    const domain = (await readDomains(ctx, filter, { domainIds: [next.id], cursor: next.cursor })).find((d) => d.id === next.id);
    if (!domain?.users) throw incomplete();
    const before = next.users.length;
    addUsers(read, next.users, domain.users.users);
    next.cursor = follow(read, next.id, domain.users.nextCursor);
    listed += next.users.length - before;
    // A domain read to its end uncovers the users already read of the domains after it.
    if (next.cursor === null) listed = listedUsers(read).users.length;
  }
  return { read, bounded: false };
}

/** Every user of the caller's organization that `filter` selects (the show route: one user by id). */
export async function readAllUsers(ctx: OperationContext, filter: UserFilter | null): Promise<V2Body[]> {
  const { read, bounded } = await readUsersUntil(ctx, filter, await firstUsersRead(ctx, filter), Number.POSITIVE_INFINITY, MAX_USER_READS - 1);
  if (bounded) throw new V2Error(422, UserTitles.tooMany);
  return listedUsers(read).users;
}

export const userFields = (prefix: string): FieldNote[] => [
  { field: `${prefix}.id`, fidelity: 'approximate', source: 'UserManagementUser.id: the number itself when numeric (userV2Id), else derived from the string' },
  { field: `${prefix}.first_name`, fidelity: 'approximate', source: 'name up to its first space' },
  { field: `${prefix}.last_name`, fidelity: 'approximate', source: 'name after its first space ("" when it has none)' },
  { field: `${prefix}.email`, fidelity: 'exact', source: 'email' },
  { field: `${prefix}.role`, fidelity: 'approximate', source: 'no source: always null (NerdGraph user types are billing tiers, not v2 roles)' },
];

export const userGaps = (prefix: string): KnownGap[] => [
  {
    path: `${prefix}.role`,
    description:
      "v2's role (owner, admin, user, restricted) has no NerdGraph source: the user type (Full platform, Core, Basic) is a billing tier, and roles moved to groups; the gateway sends null.",
  },
  {
    description:
      'first_name and last_name are split from NerdGraph\'s one `name` at its first space: a first name that holds a space ("Mary Ann Smith") comes out as first_name "Mary", last_name "Ann Smith".',
  },
  {
    description:
      "NerdGraph user management lists the users of the key's organization (newer user model only); v2 listed the users of the account (original user model only). For an organization of several accounts, or users on the original model, the lists differ.",
  },
  { description: 'Users whose NerdGraph id is not a number get a derived id: filter[ids] and the show route do not find them by it.' },
];

export const USER_ASSUMPTIONS: readonly string[] = [
  XML_ASSUMPTION,
  'NerdGraph user ids are numeric strings, used as the v2 ids unchanged (UNCONFIRMED that they are the numbers v2 showed; probe: v2-user-ids-are-nerdgraph-ids).',
  "Users are listed authentication domain after authentication domain, in NerdGraph's order of domains and, within a domain, of its users (v2 documented no order; the gateway once listed ascending by id, which needed every user read before page 1). NerdGraph's order is taken to stay the same between the reads of a walk (its cursors assume as much).",
  `Page size ${USERS_PAGE_SIZE} (UNCONFIRMED, as for other v2 lists; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing); a page reads only as far as it needs: one request with every domain's first page, then the next pages of the first domain not read to its end (at most ${MAX_USER_READS} reads for one v2 answer). The last page the Link header names comes from NerdGraph's totalCount until the list is read whole; a page past that count is empty without reading further.`,
  "filter[email] is a case-insensitive substring (v2: 'simple substring, no regex'; NerdGraph `email.contains`; case sensitivity UNCONFIRMED on both; no probe: the probe sends no user filter, and a filter that matches by case alone needs users named for it).",
  'Only the first page of authentication domains is read (organizations have a handful): an answer with a further page of domains, a domain gone between pages or a repeated cursor is a 502 saying the list is incomplete, never a short list.',
];

/** A user's keys under `wrapper`: SHAPES §11; routes-next.md §7 (users: SW's UserResponseType is an internal model "not seen in real output"). */
export const userKeys = v2KeysOf('SHAPES §11; routes-next.md §7 (Shape)', { id: 'int', first_name: 'string', last_name: 'string', email: 'string', role: 'string' });
