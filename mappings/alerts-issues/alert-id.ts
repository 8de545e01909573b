import { derivedV2Id } from '../../src/mapping-api.ts';

/**
 * The v2 integer id of an alert issue (REST "incident") or incident (REST "violation"),
 * derived from its NerdGraph id (a UUID): stable, positive, below 2^53. v2's own ids are not
 * recoverable; the sandbox's tests compute the same ids from this one.
 */
export function alertV2Id(nerdgraphId: string): number {
  return derivedV2Id(`alert|${nerdgraphId}`);
}
