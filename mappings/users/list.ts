import { defineReadPlanMapping, defineParams, pageOfPrefix, param, pastTheCount, V2Error, withLink } from '../../src/mapping-api.ts';
import { firstUsersRead, listedUsers, MAX_USER_READS, readUsersUntil, USERS_OPERATION, USERS_PAGE_SIZE, USER_ASSUMPTIONS, userFields, userGaps, UserTitles, type UserFilter, type UsersRead, userKeys } from './users.ts';

const parameters = defineParams({
  email: param.text('filter[email]', { fidelity: 'approximate', note: 'NerdGraph user filter `email.contains`: a substring, case-insensitive in the sandbox (UNCONFIRMED on both v2 and NerdGraph; no probe: the probe sends no user filter)' }),
  ids: param.idList('filter[ids]', { fidelity: 'approximate', note: 'NerdGraph user filter `id.in`; users with derived ids are not found by them' }),
  page: param.page({ fidelity: 'approximate', note: `${USERS_PAGE_SIZE} per page (page size UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing), domain after domain in NerdGraph's order, read only as far as the page needs; v2 Link header` }),
});

/** How long a walk's read is kept for its later pages (per caller, account and filter: ctx.cache). */
const KEPT_USERS_MS = 30_000;

/** The ctx.cache key of a walk over the users `filter` selects. */
const keptUsersKey = (filter: UserFilter | null): string => `users/${JSON.stringify(filter)}`;

/** GET /v2/users.{json,xml}: the users of the caller's organization (NerdGraph user management). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'users.list',
  method: 'GET',
  route: '/v2/users.{format}',
  v2Keys: userKeys('users', true),
  // The two sides order users differently (NerdGraph's domain order keeps a page within 3 calls:
  // users.ts), so a page of the whole list holds other users on each side: compared at one user.
  sample: { compareQuery: 'filter[ids]={user_id}' },
  operation: USERS_OPERATION,
  summary:
    "List users: NerdGraph user management (the authentication domains of the key's organization, each one's pages of users read only as far as the page needs), filtered there, domain after domain; what a walk read is kept 30 s for its later pages",
  fidelity: 'approximate',
  parameters,
  fields: userFields('users[]'),
  knownGaps: [
    ...userGaps('users[]'),
    {
      description:
        'Page 1 is always read from NerdGraph (in the sandbox, 2 requests: every domain\'s first page, then the next page of the first domain); what it read is kept 30 s per caller, account and filter, and pages 2..N within that time carry on from it, reading only the NerdGraph pages not yet read: a walk reads each NerdGraph page once and sees one snapshot, up to 30 s old. A user added or removed meanwhile shows on page 1, or once the 30 s pass.',
    },
    {
      description: `A later page asked for cold (no walk kept: another gateway replica, or past 30 s) reads from the start up to it: about page × ${USERS_PAGE_SIZE} / NerdGraph's page size requests, at most ${MAX_USER_READS}; further than that is a 422 asking to read the pages in order.`,
    },
  ],
  assumptions: [...USER_ASSUMPTIONS, 'An empty filter[ids] (`filter[ids]=`) matches nothing, as on the other v2 lists.'],
  async load(ctx) {
    const { email, ids, page } = parameters.parse(ctx.params);
    if (ids !== undefined && ids.length === 0) return withLink({ users: [] }, undefined);
    const given: UserFilter = {
      ...(email !== undefined ? { email: { contains: email } } : {}),
      ...(ids !== undefined ? { id: { in: ids.map(String) } } : {}),
    };
    const filter = Object.keys(given).length > 0 ? given : null;
    // Page 1 starts a walk: always read. Later pages carry on from what the walk kept.
    const key = keptUsersKey(filter);
    const kept = page > 1 ? ctx.cache.get<UsersRead>(key) : undefined;
    const start = kept ?? (await firstUsersRead(ctx, filter));
    // A page past NerdGraph's count holds nothing: no need to read the rest to say so.
    const pastTheEnd = page > 1 && pastTheCount(page, start.totalCount, USERS_PAGE_SIZE);
    const { read, bounded } = pastTheEnd ? { read: start, bounded: false } : await readUsersUntil(ctx, filter, start, page * USERS_PAGE_SIZE, MAX_USER_READS - (kept ? 0 : 1));
    // What was read so far is kept even when the bound stops it: reading on resumes there.
    ctx.cache.set(key, { value: read, ttlMs: KEPT_USERS_MS, size: read.seenIds.size });
    if (bounded) throw new V2Error(422, UserTitles.tooMany);
    const listed = listedUsers(read);
    const { items, link } = pageOfPrefix(listed.users, page, USERS_PAGE_SIZE, ctx.publicUrl, { complete: listed.complete, count: read.totalCount });
    return withLink({ users: items }, link);
  },
});
