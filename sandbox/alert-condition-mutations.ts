/**
 * The NerdGraph face's alert condition writes, over the alert store (alerts.ts) the legacy face
 * shares: alertsNrqlConditionStaticCreate/Update, alertsNrqlConditionBaselineCreate/Update
 * (nrql-condition-fields.ts turns their inputs into the store's v2 fields) and
 * alertsConditionDelete, which removes a condition of any family.
 *
 * Errors are GraphQL errors with `extensions.errorClass`, as NerdGraph's alerts mutations answer
 * them (docs.newrelic.com/docs/apis/nerdgraph/get-started/nerdgraph-api-errors: problems come
 * in `errors` with the mutation's field null): FORBIDDEN for an account the key does not see,
 * NOT_FOUND for a policy or condition not in the account, INVALID_INPUT for a bad condition. An
 * update through the mutation of the other threshold type is refused: NerdGraph's tutorial
 * (nerdgraph-api-nrql-condition-alerts, "Update a condition") says to use the mutation matching
 * the condition's type. The message texts are the sandbox's (UNCONFIRMED).
 */
import { GraphQLError } from 'graphql';
import type { SandboxRequestContext } from './actor.ts';
import { createCondition, deleteCondition, type AlertCondition } from './alerts.ts';
import type { SandboxData } from './model.ts';
import { forbidden, invalidInput } from './nerdgraph-errors.ts';
import { nrqlConditionView, storeTermExtras, thresholdTypeOf, v2FieldsOf, type ConditionInput, type NrqlThresholdType } from './nrql-condition-fields.ts';

export const ConditionMessages = {
  policyNotFound: (id: string): string => `Policy with id ${id} not found`,
  conditionNotFound: (id: string): string => `Condition with id ${id} not found`,
  wrongType: (id: string, type: string): string => `Condition with id ${id} is not a ${type} condition: use the mutation of its type`,
} as const;

const notFound = (message: string): GraphQLError => new GraphQLError(message, { extensions: { errorClass: 'NOT_FOUND' } });
const ID = /^[1-9]\d{0,14}$/;

interface CreateArguments {
  accountId: number;
  policyId: string;
  condition: ConditionInput;
}

interface UpdateArguments {
  accountId: number;
  id: string;
  condition: ConditionInput;
}

export function alertConditionMutationRoot(data: SandboxData, context: SandboxRequestContext): Record<string, (args: never) => unknown> {
  const visible = new Set(context.accountIds);
  const writable = (accountId: number): void => {
    if (!visible.has(accountId) || !data.accounts.some((account) => account.id === accountId)) throw forbidden(`You are not authorized to query account ${accountId}`);
  };
  const conditionIn = (accountId: number, id: string): AlertCondition => {
    const found = ID.test(String(id)) ? data.alerts.conditions.find((c) => c.accountId === accountId && c.id === Number(id)) : undefined;
    if (!found) throw notFound(ConditionMessages.conditionNotFound(String(id)));
    return found;
  };

  const create = (type: NrqlThresholdType) => ({ accountId, policyId, condition }: CreateArguments) => {
    writable(accountId);
    const policy = ID.test(String(policyId)) ? data.alerts.policies.find((p) => p.accountId === accountId && p.id === Number(policyId)) : undefined;
    if (!policy) throw notFound(ConditionMessages.policyNotFound(String(policyId)));
    const made = createCondition(data.alerts, policy, 'alerts_nrql_conditions', v2FieldsOf(type, condition));
    storeTermExtras(made, condition.terms);
    return nrqlConditionView(made);
  };

  const update = (type: NrqlThresholdType) => ({ accountId, id, condition }: UpdateArguments) => {
    writable(accountId);
    const stored = conditionIn(accountId, id);
    if (stored.family !== 'alerts_nrql_conditions') throw notFound(ConditionMessages.conditionNotFound(String(id)));
    if (thresholdTypeOf(stored) !== type) throw invalidInput(ConditionMessages.wrongType(String(id), type.toUpperCase()));
    stored.fields = v2FieldsOf(type, condition, stored.fields);
    storeTermExtras(stored, condition.terms);
    return nrqlConditionView(stored);
  };

  return {
    alertsNrqlConditionStaticCreate: create('static'),
    alertsNrqlConditionStaticUpdate: update('static'),
    alertsNrqlConditionBaselineCreate: create('baseline'),
    alertsNrqlConditionBaselineUpdate: update('baseline'),
    alertsNrqlConditionOutlierCreate: create('outlier'),
    alertsNrqlConditionOutlierUpdate: update('outlier'),
    alertsConditionDelete: ({ accountId, id }: { accountId: number; id: string }) => {
      writable(accountId);
      const condition = conditionIn(accountId, id);
      deleteCondition(data.alerts, condition);
      return { id: String(condition.id) };
    },
  };
}
