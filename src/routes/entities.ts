import type { GatewayMetrics } from '../ops/metrics.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { V2Body } from '../v2/format.ts';
import { decodeEntityGuid } from '../v2/ids.ts';

/** Steps every entity route shares: scope the answer, reshape it, wrap it. */

/**
 * Account scoping, checked locally on every entity NerdGraph returns: its accountId and the
 * account encoded in its GUID must both be the resolved account. Anything else is dropped
 * and counted (each count is a mapping bug or an upstream surprise worth a look); null
 * entries (NerdGraph's "no access") are dropped without counting.
 */
export function inAccount(entity: unknown, accountId: number, operation: string, metrics: GatewayMetrics): boolean {
  if (entity === null || entity === undefined) return false;
  const candidate = entity as { guid?: unknown; accountId?: unknown };
  const ok =
    typeof candidate.guid === 'string' &&
    candidate.accountId === accountId &&
    decodeEntityGuid(candidate.guid)?.accountId === accountId;
  if (!ok) metrics.scopeViolations.inc({ operation });
  return ok;
}

/** Runs a mapping's reshape; a shape it cannot read is an upstream failure, not a 500. */
export function reshapeOrFail(reshape: () => V2Body, operation: string): V2Body {
  try {
    return reshape();
  } catch {
    throw new UpstreamError('upstream_failure', `unexpected entity shape in ${operation}`);
  }
}

/** The v2 body: the data under its wrapper key, and v2's link templates beside it. */
export function wrap(wrapperKey: string, content: V2Body | V2Body[], topLinks: V2Body | undefined): V2Body {
  return { [wrapperKey]: content, ...(topLinks ? { links: topLinks } : {}) };
}
