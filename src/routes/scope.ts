import type { GatewayMetrics } from '../metrics.ts';
import { decodeEntityGuid } from '../v2/ids.ts';

/**
 * Account scoping, checked locally on every entity NerdGraph returns: its accountId and the
 * account encoded in its GUID must both be the resolved account. Anything else is dropped
 * and counted (each count is a mapping bug or an upstream surprise worth a look).
 */
export function inAccount(entity: unknown, accountId: number, operation: string, metrics: GatewayMetrics): boolean {
  const candidate = entity as { guid?: unknown; accountId?: unknown } | null;
  const ok =
    candidate !== null &&
    typeof candidate === 'object' &&
    typeof candidate.guid === 'string' &&
    candidate.accountId === accountId &&
    decodeEntityGuid(candidate.guid)?.accountId === accountId;
  if (!ok) metrics.scopeViolations.inc({ operation });
  return ok;
}
