import { z } from 'zod';
import { entityQuery } from '../upstream/entity-query.ts';
import type { Caller } from '../caller/identity.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { NerdGraph } from '../upstream/client.ts';
import { parseAnswer } from '../upstream/answer.ts';
import { decodeEntityGuid } from '../v2/ids.ts';
import { CoalescingCache } from './coalescing-cache.ts';

/**
 * v2 numeric ids -> entity GUIDs, through a cache keyed by caller identity and account
 * (an answer learned for one key is never served to another). Unknown ids are cached too,
 * for a shorter time, so a client retrying a wrong id does not hammer NerdGraph.
 */
export interface EntityKind {
  domain: string;
  type: string;
}

const GuidAnswer = z.object({
  actor: z.object({
    entitySearch: z
      .object({
        results: z
          .object({
            entities: z.array(
              z.object({ guid: z.string(), accountId: z.number().int().nullable().optional() }).nullable(),
            ).nullable(),
          })
          .nullable(),
      })
      .nullable(),
  }),
});

interface GuidEntry {
  guid: string | null;
}

export interface GuidResolver {
  /** The GUID of the entity, or null when the account has no such entity. */
  resolve(caller: Caller, accountId: number, kind: EntityKind, domainId: number): Promise<string | null>;
}

export function createGuidResolver(deps: {
  nerdgraph: NerdGraph;
  metrics: GatewayMetrics;
  ttlMs: number;
  negativeTtlMs?: number;
}): GuidResolver {
  const cache = new CoalescingCache<GuidEntry>('guid', deps.metrics, { max: 50_000, ttlMs: deps.ttlMs });
  const negativeTtlMs = deps.negativeTtlMs ?? Math.min(30_000, deps.ttlMs);

  return {
    async resolve(caller, accountId, kind, domainId) {
      const key = `${caller.identity}|${accountId}|${kind.domain}|${kind.type}|${domainId}`;
      const entry = await cache.get(key, async () => {
        const query = entityQuery([
          { field: 'domain', op: '=', value: kind.domain },
          { field: 'type', op: '=', value: kind.type },
          { field: 'accountId', op: '=', value: accountId },
          { field: 'domainId', op: '=', value: String(domainId) },
        ]);
        const data = await deps.nerdgraph.call({ operation: 'EntityGuidByDomainId', variables: { query }, apiKey: caller.apiKey });
        const entities = parseAnswer(GuidAnswer, data, 'EntityGuidByDomainId').actor.entitySearch?.results?.entities ?? [];
        // Only a GUID that itself decodes to this account, domain, type and id is accepted.
        const match = entities.find((entity) => {
          const decoded = entity ? decodeEntityGuid(entity.guid) : undefined;
          return (
            decoded !== undefined &&
            decoded.accountId === accountId &&
            decoded.domain === kind.domain &&
            decoded.type === kind.type &&
            decoded.domainId === String(domainId)
          );
        });
        if (entities.length > 0 && !match) deps.metrics.scopeViolations.inc({ operation: 'EntityGuidByDomainId' });
        return match ? { value: { guid: match.guid } } : { value: { guid: null }, ttlMs: negativeTtlMs };
      });
      return entry.guid;
    },
  };
}
