import { defineUnsupportedMapping, type UnsupportedMapping, NO_PARAMS, RETIRED, RETIRED_ROUTES, type RetiredFamily, type RetiredFamilyName } from '../../src/mapping-api.ts';

/**
 * Retired products and routes NerdGraph cannot serve (routes-next.md §8), as unsupported
 * mappings: the table of families and routes is src/v2/retired.ts (the legacy face reads it too).
 */
export { RETIRED, RETIRED_ROUTES };

/** One retired (method, route): the same error on every call, from its family. */
export function retiredRoute(
  family: RetiredFamilyName,
  id: string,
  method: UnsupportedMapping['method'],
  route: string,
  summary: string,
): UnsupportedMapping {
  const answer: RetiredFamily = RETIRED[family];
  return defineUnsupportedMapping({
    kind: 'unsupported',
    id,
    method,
    route,
    operation: '(none)',
    summary: `${summary}: ${family === 'resetPassword' ? 'no NerdGraph mutation' : 'retired product'}, answered ${answer.status} with its replacement`,
    fidelity: 'unsupported',
    status: answer.status,
    title: answer.title,
    reason: answer.reason,
    replacement: answer.replacement,
    parameters: NO_PARAMS,
    fields: [],
    knownGaps: [{ description: `Never served: every call answers ${answer.status} with the title above and changes nothing, without calling NerdGraph.` }],
    assumptions: answer.assumptions,
  });
}

/** The mapping of one declared retired route, by id (each mapping module is one line). */
export function retiredMapping(id: string): UnsupportedMapping {
  const declared = RETIRED_ROUTES.find((route) => route.id === id);
  if (!declared) throw new Error(`no retired route ${id} in mappings/retired/retired.ts`);
  return retiredRoute(declared.family, declared.id, declared.method, declared.route, declared.summary);
}
