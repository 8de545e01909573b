import { defineReadPlanMapping, NO_PARAMS, ID_PATTERN, V2Error } from '../../src/mapping-api.ts';
import { USERS_OPERATION, USER_ASSUMPTIONS, UserTitles, readAllUsers, userFields, userGaps, userKeys } from './users.ts';

/** GET /v2/users/{id}.{json,xml}: one user of the caller's organization, by id. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'users.show',
  method: 'GET',
  route: '/v2/users/{id}.{format}',
  v2Keys: userKeys('user', false),
  sample: { path: { id: '{user_id}' } },
  operation: USERS_OPERATION,
  summary: 'Show a user: NerdGraph user management filtered by `id.eq` across the authentication domains of the key\'s organization',
  fidelity: 'approximate',
  parameters: NO_PARAMS,
  fields: userFields('user'),
  knownGaps: userGaps('user'),
  assumptions: [...USER_ASSUMPTIONS, 'A path id that is not a positive integer answers 404, as an unknown id does.'],
  async load(ctx) {
    const raw = ctx.pathParams.id ?? '';
    if (!ID_PATTERN.test(raw)) throw new V2Error(404, UserTitles.notFound);
    const id = Number(raw);
    const user = (await readAllUsers(ctx, { id: { eq: raw } })).find((found) => found.id === id);
    if (!user) throw new V2Error(404, UserTitles.notFound);
    return { body: { user } };
  },
});
