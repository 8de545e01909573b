import { z } from 'zod';
import type { EntityShowMapping } from './mapping.ts';
import { respond } from '../v2/format.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { reshapeOrFail, wrap } from './entities.ts';
import { entityRef, requireEntity } from './entity-ref.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/** Serves a v2 show route: numeric id -> computed GUID -> entity(guid) -> v2 object, one request. */
const EntityAnswer = z.object({ actor: z.object({ entity: z.unknown() }) });

export function createShowRunner(deps: RouteDeps) {
  return async function runShow(mapping: EntityShowMapping, req: RouteRequest): Promise<Response> {
    mapping.parameters.parse(req.params);
    const ref = entityRef(mapping.entityKind, req.pathParams.id, req.accountId, mapping.notFoundTitle);
    const data = await deps.nerdgraph.call({ operation: mapping.operation, variables: { guid: ref.guid }, apiKey: req.caller.apiKey });
    const found = parseAnswer(EntityAnswer, data, mapping.operation).actor.entity;
    const entity = requireEntity(found, ref, { accountId: req.accountId, operation: mapping.operation, metrics: deps.metrics }, mapping.notFoundTitle);
    const item = reshapeOrFail(() => mapping.reshape(entity, { accountId: req.accountId, now: deps.now() }), mapping.operation);
    return respond(req.c, req.format, 200, wrap(mapping.wrapperKey, item, mapping.topLinks));
  };
}
