import type { GatewayMetrics } from '../ops/metrics.ts';
import { notFound } from '../v2/errors.ts';
import { decodeEntityGuid, entityGuid } from '../v2/ids.ts';
import { ID_PATTERN } from '../v2/params.ts';

/**
 * The one way from a v2 path id to a NerdGraph entity, and the one account check.
 *
 * An entity GUID is base64url of `accountId|DOMAIN|TYPE|domainId`, and every request is pinned
 * to one account, so the GUID of "application 123 of this caller" is computed, never looked
 * up: no request of its own. Whether it exists, and is the caller's, is then proved by the
 * entity NerdGraph returns in the route's own request (unknown and foreign ids both come back
 * null: the same 404).
 */
export interface EntityKind {
  domain: string;
  type: string;
}

export interface EntityRef {
  id: number;
  guid: string;
}

/** v2 ids of each kind the routes address (New Relic numbers them per domain). */
export const EntityKinds = {
  apmApplication: { domain: 'APM', type: 'APPLICATION' },
  keyTransaction: { domain: 'APM', type: 'KEY_TRANSACTION' },
  mobileApplication: { domain: 'MOBILE', type: 'APPLICATION' },
  browserApplication: { domain: 'BROWSER', type: 'APPLICATION' },
} as const satisfies Record<string, EntityKind>;

/** The entity `rawId` names in `accountId`; a malformed id is a 404 that never reaches NerdGraph. */
export function entityRef(kind: EntityKind, rawId: string | undefined, accountId: number, notFoundTitle: string): EntityRef {
  if (rawId === undefined || !ID_PATTERN.test(rawId)) throw notFound(notFoundTitle);
  const id = Number(rawId);
  return { id, guid: entityGuid(accountId, kind.domain, kind.type, id) };
}

/**
 * Account scoping, checked locally on every entity NerdGraph returns: its accountId and the
 * account encoded in its GUID must both be the resolved account. Anything else is dropped and
 * counted (each count is a mapping bug or an upstream surprise worth a look); null entries
 * (NerdGraph's "no such entity" or "no access") are dropped without counting.
 */
export function inAccount(entity: unknown, accountId: number, operation: string, metrics: GatewayMetrics): boolean {
  if (entity === null || entity === undefined) return false;
  const candidate = entity as { guid?: unknown; accountId?: unknown };
  const ok = typeof candidate.guid === 'string' && candidate.accountId === accountId && decodeEntityGuid(candidate.guid)?.accountId === accountId;
  if (!ok) metrics.scopeViolations.inc({ operation });
  return ok;
}

/** 404 unless NerdGraph returned exactly the entity `ref` names, in the caller's account. */
export function requireEntity<T>(
  entity: T | null | undefined,
  ref: Pick<EntityRef, 'guid'>,
  scope: { accountId: number; operation: string; metrics: GatewayMetrics },
  notFoundTitle: string,
): T {
  if (!inAccount(entity, scope.accountId, scope.operation, scope.metrics)) throw notFound(notFoundTitle);
  if ((entity as { guid?: unknown }).guid !== ref.guid) {
    scope.metrics.scopeViolations.inc({ operation: scope.operation });
    throw notFound(notFoundTitle);
  }
  return entity as T;
}
