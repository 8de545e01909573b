import { z } from 'zod';
import type { EntityShowMapping } from './mapping.ts';
import { respond } from '../v2/format.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { reshapeOrFail, wrap } from './entities.ts';
import { entityRef, requireEntity } from './entity-ref.ts';
import { callUpstream } from './request-signal.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/** Serves a v2 show route: numeric id -> computed GUID -> entity(guid) -> v2 object, one request. */
const EntityAnswer = z.object({ actor: z.object({ entity: z.unknown() }).catchall(z.unknown()) });

/** Serves one show request: the entity (and its related ones) in one NerdGraph request, 404 unless in the caller's account. */
export async function serveShow(deps: RouteDeps, mapping: EntityShowMapping, req: RouteRequest): Promise<Response> {
  mapping.parameters.parse(req.params);
  const ref = entityRef(mapping.entityKind, req.pathParams.id, req.accountId, mapping.notFoundTitle);
  const relatedRefs = Object.entries(mapping.related ?? {}).map(([alias, kind]) => ({
    alias,
    guid: entityRef(kind, req.pathParams.id, req.accountId, mapping.notFoundTitle).guid,
  }));
  const variables: Record<string, unknown> = { guid: ref.guid };
  for (const { alias, guid } of relatedRefs) variables[`${alias}Guid`] = guid;
  const data = await callUpstream(deps.nerdgraph, { operation: mapping.operation, variables, apiKey: req.caller.apiKey, signal: req.signal });
  const actor = parseAnswer(EntityAnswer, data, mapping.operation).actor;
  const scope = { accountId: req.accountId, operation: mapping.operation, metrics: deps.metrics };
  const entity = requireEntity(actor.entity, ref, scope, mapping.notFoundTitle);
  // An absent related entity is null; one that is not exactly the computed one is a 404 (and counted).
  const related: Record<string, unknown> = {};
  for (const { alias, guid } of relatedRefs) {
    const found = actor[alias];
    related[alias] = found === null || found === undefined ? null : requireEntity(found, { guid }, scope, mapping.notFoundTitle);
  }
  const item = reshapeOrFail(() => mapping.reshape(entity, { accountId: req.accountId, now: deps.now() }, related), mapping.operation);
  return respond(req.c, req.format, 200, wrap(mapping.wrapperKey, item, mapping.topLinks));
}

/** The router's show runner. */
export function createShowRunner(deps: RouteDeps) {
  return (mapping: EntityShowMapping, req: RouteRequest): Promise<Response> => serveShow(deps, mapping, req);
}
