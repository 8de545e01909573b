/**
 * GET /v2/users.{format} and GET /v2/users/{id}.{format} on the legacy face (helper
 * A): the account's users as REST v2 showed them (`id`, `first_name`, `last_name`, `email`,
 * `role`), from the same generated people the NerdGraph face serves (../users.ts).
 * filter[email] is a case-insensitive substring, filter[ids] a comma list; 200 per page,
 * ascending by id, with v2's Link header.
 */
import { notFound, type V2Body } from './wire.ts';
import { accountUsers, type SandboxUser } from '../users.ts';
import { ids, pageOf, send, text, type LegacyRequest, type LegacyRoute } from './common.ts';
import { USER_TITLES } from '../../facts/v2-titles.ts';

const PAGE_SIZE = 200;
const NOT_FOUND = USER_TITLES.notFound;

function legacyUser(user: SandboxUser): V2Body {
  return { id: Number(user.id), first_name: user.firstName, last_name: user.lastName, email: user.email, role: user.role };
}

function listUsers(req: LegacyRequest): Response {
  const email = text(req.params, 'filter[email]')?.toLowerCase();
  const idList = ids(req.params, 'filter[ids]');
  const page = pageOf(req.params);
  const idSet = idList === undefined ? undefined : new Set(idList);
  const matching = accountUsers(req.data, req.accountId)
    .filter((user) => email === undefined || user.email.toLowerCase().includes(email))
    .filter((user) => idSet === undefined || idSet.has(Number(user.id)))
    .sort((a, b) => Number(a.id) - Number(b.id));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map(legacyUser);
  const link = req.link(page, Math.ceil(matching.length / PAGE_SIZE));
  return send(req.format, 200, { users: items }, link ? { link } : {});
}

function showUser(req: LegacyRequest): Response {
  const raw = req.path.id ?? '';
  const user = /^[1-9]\d{0,14}$/.test(raw) ? accountUsers(req.data, req.accountId).find((u) => u.id === raw) : undefined;
  if (!user) throw notFound(NOT_FOUND);
  return send(req.format, 200, { user: legacyUser(user) });
}

export const USER_LEGACY_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/users.{format}', methods: ['GET'], handler: listUsers },
  { template: '/v2/users/{id}.{format}', methods: ['GET'], handler: showUser },
];
