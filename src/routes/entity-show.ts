import { z } from 'zod';
import { notFound } from '../v2/errors.ts';
import type { EntityShowMapping } from './mapping.ts';
import { respond } from '../v2/format.ts';
import { ID_PATTERN } from '../v2/params.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { inAccount, reshapeOrFail, wrap } from './entities.ts';
import type { RouteDeps, RouteRequest } from './types.ts';

/** Serves a v2 show route: numeric id -> GUID (cached) -> entity(guid) -> v2 object. */
const EntityAnswer = z.object({ actor: z.object({ entity: z.unknown() }) });

export function createShowRunner(deps: RouteDeps) {
  return async function runShow(mapping: EntityShowMapping, req: RouteRequest): Promise<Response> {
    const rawId = req.pathParams.id ?? '';
    // Malformed ids never reach NerdGraph.
    if (!ID_PATTERN.test(rawId)) throw notFound(mapping.notFoundTitle);
    const guid = await deps.guids.resolve(req.caller, req.accountId, mapping.entityKind, Number(rawId));
    if (guid === null) throw notFound(mapping.notFoundTitle);

    const data = await deps.nerdgraph.call({ operation: mapping.operation, variables: { guid }, apiKey: req.caller.apiKey });
    const entity = parseAnswer(EntityAnswer, data, mapping.operation).actor.entity;
    if (!inAccount(entity, req.accountId, mapping.operation, deps.metrics) || (entity as { guid?: unknown }).guid !== guid) {
      throw notFound(mapping.notFoundTitle);
    }
    const item = reshapeOrFail(() => mapping.reshape(entity, { accountId: req.accountId, now: deps.now() }), mapping.operation);
    return respond(req.c, req.format, 200, wrap(mapping.wrapperKey, item, mapping.topLinks));
  };
}
