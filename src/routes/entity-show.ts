import { z } from 'zod';
import { notFound } from '../errors.ts';
import type { EntityShowMapping } from '../mapping.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { respond, type V2Body } from '../v2/format.ts';
import { ID_PATTERN } from '../v2/params.ts';
import { inAccount } from './scope.ts';
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
    const parsed = EntityAnswer.safeParse(data);
    if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected ${mapping.operation} answer`);
    const entity = parsed.data.actor.entity;
    if (entity === null || entity === undefined) throw notFound(mapping.notFoundTitle);
    if (!inAccount(entity, req.accountId, mapping.operation, deps.metrics)) throw notFound(mapping.notFoundTitle);

    let item: V2Body;
    try {
      item = mapping.reshape(entity, { accountId: req.accountId, now: deps.now() });
    } catch {
      throw new UpstreamError('upstream_failure', `unexpected entity shape in ${mapping.operation}`);
    }
    const body: V2Body = { [mapping.wrapperKey]: item, ...(mapping.topLinks ? { links: mapping.topLinks } : {}) };
    return respond(req.c, req.format, 200, body);
  };
}
