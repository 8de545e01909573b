/**
 * How the sandbox's New Relic ties an alert policy to notification channels: a workflow whose
 * issues filter matches the policy and whose destination configurations name the channels
 * (routes-next.md §5.5: `AiWorkflowsWorkflow`, `AiWorkflowsPredicate{attribute, operator,
 * values}`). The predicate for a policy id is commonly `labels.policyIds` with
 * `EXACTLY_MATCHES` (routes-next.md §5.5; UNCONFIRMED there, and so here).
 */

/** A key/value property of a destination or channel (NerdGraph's `AiNotificationsPropertyInput`). */
export interface PropertyInput {
  key: string;
  value: string;
}

export const POLICY_PREDICATE = { attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES' } as const;

type PredicateLike = { attribute: string; operator: string; values: readonly string[] };

const isPolicyPredicate = (p: PredicateLike): boolean => p.attribute === POLICY_PREDICATE.attribute && p.operator === POLICY_PREDICATE.operator;

/** The policy ids a workflow's predicates match. */
export function policyIdsOf(predicates: readonly PredicateLike[]): number[] {
  return predicates.filter(isPolicyPredicate).flatMap((p) => p.values.map((v) => v.trim()).filter((v) => /^[1-9][0-9]*$/.test(v)).map(Number));
}

/** A filter that is one policy's alone: a single policy predicate with that one id. */
export function isPolicyOwnFilter(predicates: readonly PredicateLike[], policyId: number): boolean {
  const [only, ...rest] = predicates;
  return only !== undefined && rest.length === 0 && isPolicyPredicate(only) && only.values.length === 1 && only.values[0]?.trim() === String(policyId);
}

/** The name the sandbox gives a workflow it makes for a policy (its seed, and v2 links on the legacy face). */
export const workflowNameForPolicy = (policyId: number): string => `Policy ${policyId} notifications`;
