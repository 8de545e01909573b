import { z } from 'zod';
import { type FieldNote, type KnownGap, type OperationContext, parseAnswer, V2Error, type V2Body, derivedV2Id, ID_PATTERN, XML_ASSUMPTION } from '../../src/mapping-api.ts';

/**
 * Users (routes-next.md §7) over NerdGraph user management: the caller's organization's
 * authentication domains, each with its users paged by cursor (queries/Users.graphql). Shared
 * by GET /v2/users and GET /v2/users/{id}.
 */
export const USERS_OPERATION = 'Users';

/**
 * The v2 integer id of a NerdGraph user (`UserManagementUser.id`, an `ID`): the id itself when
 * it is a v2 id (ID_PATTERN; user ids seen are numeric strings; whether they are the numbers
 * v2 showed is UNCONFIRMED), otherwise derived from the string (derivedV2Id).
 */
export function userV2Id(userId: string): number {
  if (ID_PATTERN.test(userId)) return Number(userId);
  return derivedV2Id(`user|${userId}`);
}
export const USERS_PAGE_SIZE = 200;
/** At most this many NerdGraph reads make one v2 answer (each domain page is one read). */
export const MAX_USER_READS = 60;

export const UserTitles = {
  notFound: 'No user found with the given ID',
  noOrganization: "This API key cannot read the organization's users (NerdGraph user management): use a user key with the Read users permission",
  tooMany: `The organization has more users than the gateway reads for one v2 answer (${MAX_USER_READS} NerdGraph pages): narrow the list with filter[email] or filter[ids]`,
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
  users: z.object({ nextCursor: z.string().nullable(), users: z.array(User) }).nullable(),
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

/**
 * Every user of the caller's organization that `filter` selects, across its authentication
 * domains, ascending by v2 id: the first read returns each domain's first page, each further
 * page of a domain is one more read with that domain's id and cursor.
 */
export async function readUsers(ctx: OperationContext, filter: UserFilter | null): Promise<V2Body[]> {
  let reads = 0;
  const read = async (variables: Record<string, unknown>): Promise<z.infer<typeof Answer>> => {
    reads += 1;
    if (reads > MAX_USER_READS) throw new V2Error(422, UserTitles.tooMany);
    return parseAnswer(Answer, await ctx.read(USERS_OPERATION, { ...variables, filter }), USERS_OPERATION);
  };
  const domainsOf = (answer: z.infer<typeof Answer>): Array<z.infer<typeof Domain>> => {
    const domains = answer.actor.organization?.userManagement?.authenticationDomains;
    if (!domains) throw new V2Error(403, UserTitles.noOrganization);
    // Organizations have a handful of domains; a second page of them is not read, so say so.
    if (domains.nextCursor) throw new V2Error(502, UserTitles.incomplete, { kind: 'users_incomplete' });
    return domains.authenticationDomains;
  };
  const byId = new Map<number, V2Body>();
  const keep = (users: readonly User[]): void => {
    for (const user of users) {
      const shaped = reshapeUser(user);
      byId.set(shaped.id as number, shaped);
    }
  };
  const pending: Array<{ domainId: string; cursor: string }> = [];
  for (const domain of domainsOf(await read({ domainIds: null, cursor: null }))) {
    keep(domain.users?.users ?? []);
    if (domain.users?.nextCursor) pending.push({ domainId: domain.id, cursor: domain.users.nextCursor });
  }
  const seen = new Set(pending.map((p) => `${p.domainId}|${p.cursor}`));
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    const domain = domainsOf(await read({ domainIds: [next.domainId], cursor: next.cursor })).find((d) => d.id === next.domainId);
    if (!domain?.users) throw new V2Error(502, UserTitles.incomplete, { kind: 'users_incomplete' });
    keep(domain.users.users);
    const cursor = domain.users.nextCursor;
    if (cursor) {
      if (seen.has(`${next.domainId}|${cursor}`)) throw new V2Error(502, UserTitles.incomplete, { kind: 'users_incomplete' });
      seen.add(`${next.domainId}|${cursor}`);
      pending.push({ domainId: next.domainId, cursor });
    }
  }
  return [...byId.values()].sort((a, b) => (a.id as number) - (b.id as number));
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
  'NerdGraph user ids are numeric strings, used as the v2 ids unchanged (UNCONFIRMED that they are the numbers v2 showed).',
  'Users are listed ascending by id (v2 documented no order).',
  `Page size ${USERS_PAGE_SIZE} (UNCONFIRMED, as for other v2 lists); the gateway reads every matching user (every authentication domain, every NerdGraph page, at most ${MAX_USER_READS} reads) and pages locally.`,
  "filter[email] is a case-insensitive substring (v2: 'simple substring, no regex'; NerdGraph `email.contains`; case sensitivity UNCONFIRMED on both).",
  'Only the first page of authentication domains is read (organizations have a handful): an answer with a further page of domains, a domain gone between pages or a repeated cursor is a 502 saying the list is incomplete, never a short list.',
];
