/**
 * NerdGraph's alert policy mutations over the shared alert store (alerts.ts), so a policy made,
 * renamed or deleted here is the one the legacy face's alerts_policies shows, and the reverse:
 *
 *   alertsPolicyCreate(accountId: Int!, policy: AlertsPolicyInput!): AlertsPolicy
 *   alertsPolicyUpdate(accountId: Int!, id: ID!, policy: AlertsPolicyUpdateInput!): AlertsPolicy
 *   alertsPolicyDelete(accountId: Int!, id: ID!): AlertsPolicyDeleteResponse   ({ id } only)
 *
 * Signatures: the real schema (../shared/nerdgraph/schema.json). Usage: New Relic's "NerdGraph
 * tutorial: Alert policies" (docs.newrelic.com/docs/apis/nerdgraph/examples/nerdgraph-api-alerts-policies):
 * a create takes a name and an incidentPreference; an update takes only the attributes it
 * changes; a delete answers only the id. AlertsPolicy has no created or updated time in
 * NerdGraph (terraform-provider-newrelic PR #504 dropped created_at/updated_at when it moved
 * policies to NerdGraph: "Unavailable attribute in NerdGraph"); the store keeps v2's times and
 * moves updatedAt on every write, whichever face made it.
 *
 * Errors are GraphQL errors with `extensions.errorClass`, nothing written:
 * - an account the key does not see: FORBIDDEN, as every sandbox mutation;
 * - a policy id not in that account: NOT_FOUND "Not Found" (newrelic-client-go PR #477: NerdGraph
 *   answered an unknown policy with a "Not Found" error; the error class it used then,
 *   BAD_USER_INPUT, is UNCONFIRMED for today's mutations, so the sandbox says NOT_FOUND);
 * - a blank name, or one over 255 characters (the v2 limit the legacy face keeps; NerdGraph's
 *   own is UNCONFIRMED): INVALID_INPUT. An unknown incidentPreference never arrives: the enum
 *   refuses it in validation.
 *
 * incidentPreference may be CUSTOM, the value AlertsIncidentPreference gained after both schema
 * files were pulled (../shared/reference/nerdgraph.md §1, quirk 3); that the mutations accept it
 * as input, as the shared enum lets them, is UNCONFIRMED.
 */
import { GraphQLError } from 'graphql';
import type { SandboxRequestContext } from './actor.ts';
import { createPolicy, deletePolicy, updatePolicy, type AlertPolicy, type StoredIncidentPreference } from './alerts.ts';
import type { SandboxData } from './model.ts';
import { forbidden, invalidInput } from './nerdgraph-errors.ts';

export const POLICY_MUTATION_MESSAGES = {
  notFound: 'Not Found',
  nameBlank: 'name must not be blank',
  nameTooLong: 'name must be at most 255 characters',
} as const;

const MAX_NAME = 255;

interface PolicyInput {
  name?: string | null;
  incidentPreference?: StoredIncidentPreference | null;
}

const nerdgraphPolicy = (policy: AlertPolicy) => ({ id: String(policy.id), name: policy.name, accountId: policy.accountId, incidentPreference: policy.incidentPreference });

/** The name as stored: trimmed (as the legacy face stores it), refused when blank or too long. */
function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalidInput(POLICY_MUTATION_MESSAGES.nameBlank);
  if (trimmed.length > MAX_NAME) throw invalidInput(POLICY_MUTATION_MESSAGES.nameTooLong);
  return trimmed;
}

/** The alert policy mutation fields of one request, for graphql-js's rootValue. */
export function alertPolicyMutationRoot(data: SandboxData, context: SandboxRequestContext, now: () => number): Record<string, (args: never) => unknown> {
  const visible = new Set(context.accountIds);
  const writable = (accountId: number): void => {
    if (!visible.has(accountId) || !data.accounts.some((account) => account.id === accountId)) throw forbidden(`You are not authorized to query account ${accountId}`);
  };
  /** The policy `id` names in `accountId`; another account's id is not found, as an unknown one. */
  const policyIn = (accountId: number, id: string): AlertPolicy => {
    const numeric = /^[1-9]\d{0,14}$/.test(String(id)) ? Number(id) : undefined;
    const policy = numeric === undefined ? undefined : data.alerts.policies.find((p) => p.id === numeric && p.accountId === accountId);
    if (!policy) throw new GraphQLError(POLICY_MUTATION_MESSAGES.notFound, { extensions: { errorClass: 'NOT_FOUND' } });
    return policy;
  };

  return {
    alertsPolicyCreate: ({ accountId, policy }: { accountId: number; policy: { name: string; incidentPreference: StoredIncidentPreference } }) => {
      writable(accountId);
      const created = createPolicy(data.alerts, accountId, checkedName(policy.name), policy.incidentPreference, now());
      return nerdgraphPolicy(created);
    },
    alertsPolicyUpdate: ({ accountId, id, policy }: { accountId: number; id: string; policy: PolicyInput }) => {
      writable(accountId);
      const found = policyIn(accountId, id);
      // Only the attributes given change (the tutorial's "you don't need to supply all of the attributes").
      const name = policy.name === undefined || policy.name === null ? undefined : checkedName(policy.name);
      const incidentPreference = policy.incidentPreference ?? undefined;
      updatePolicy(found, { ...(name !== undefined && { name }), ...(incidentPreference !== undefined && { incidentPreference }) }, now());
      return nerdgraphPolicy(found);
    },
    alertsPolicyDelete: ({ accountId, id }: { accountId: number; id: string }) => {
      writable(accountId);
      const found = policyIn(accountId, id);
      deletePolicy(data.alerts, found);
      return { id: String(found.id) };
    },
  };
}
