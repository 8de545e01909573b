import { defineReadPlanMapping, pageOfList, defineParams, param } from '../src/mapping-api.ts';
import { USERS_OPERATION, USERS_PAGE_SIZE, USER_ASSUMPTIONS, readUsers, userFields, userGaps, type UserFilter } from './shared/users.ts';

const parameters = defineParams({
  email: param.text('filter[email]', { fidelity: 'approximate', note: 'NerdGraph user filter `email.contains`: a substring, case-insensitive in the sandbox (UNCONFIRMED on both v2 and NerdGraph)' }),
  ids: param.idList('filter[ids]', { fidelity: 'approximate', note: 'NerdGraph user filter `id.in`; users with derived ids are not found by them' }),
  page: param.page({ fidelity: 'approximate', note: `${USERS_PAGE_SIZE} per page (page size UNCONFIRMED), ascending by id, paged locally; v2 Link header` }),
});

/** GET /v2/users.{json,xml}: the users of the caller's organization (NerdGraph user management). */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'users.list',
  method: 'GET',
  route: '/v2/users.{format}',
  operation: USERS_OPERATION,
  summary: "List users: NerdGraph user management (every authentication domain of the key's organization, every page), filtered there, sorted by id and paged locally",
  fidelity: 'approximate',
  parameters,
  fields: userFields('users[]'),
  knownGaps: userGaps('users[]'),
  assumptions: [...USER_ASSUMPTIONS, 'An empty filter[ids] (`filter[ids]=`) matches nothing, as on the other v2 lists.'],
  async load(ctx) {
    const { email, ids, page } = parameters.parse(ctx.params);
    const paging = { page, pageSize: USERS_PAGE_SIZE, wrapperKey: 'users', publicUrl: ctx.publicUrl };
    if (ids !== undefined && ids.length === 0) return pageOfList([], paging);
    const filter: UserFilter = {
      ...(email !== undefined ? { email: { contains: email } } : {}),
      ...(ids !== undefined ? { id: { in: ids.map(String) } } : {}),
    };
    return pageOfList(await readUsers(ctx, Object.keys(filter).length > 0 ? filter : null), paging);
  },
});
