import { z } from 'zod';
import { defineParams, defineWriteMapping, notFound, param, parseAnswer, v2IdOf } from '../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from './shared/alerts.ts';
import {
  NRQL_CONDITION_ASSUMPTIONS,
  mutatedConditionAnswer,
  NrqlConditionTitles,
  nerdgraphInput,
  nrqlConditionFields,
  nrqlConditionGaps,
  thresholdType,
  v2ConditionOf,
} from './shared/nrql-conditions.ts';

const STATIC = 'NrqlConditionStaticCreate';
const BASELINE = 'NrqlConditionBaselineCreate';

const parameters = defineParams({
  condition: param.bodyField('nrql_condition', {
    fidelity: 'approximate',
    note: "type static (alertsNrqlConditionStaticCreate) or baseline (alertsNrqlConditionBaselineCreate; outlier is refused, 422), name, enabled, runbook_url, baseline_direction, violation_time_limit_seconds, terms (duration minutes -> thresholdDuration seconds, all/any -> ALL/AT_LEAST_ONCE), nrql {query, since_value -> evaluationOffset}; value_function sum is refused (422).",
  }),
});

const PolicyFound = z.object({ actor: z.object({ account: z.object({ alerts: z.object({ policy: z.object({ id: z.string() }).nullable() }) }).nullable() }) });

/** POST /v2/alerts_nrql_conditions/policies/{policy_id}.{json,xml}: one static or baseline create mutation. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts_nrql_conditions.create',
  method: 'POST',
  route: '/v2/alerts_nrql_conditions/policies/{policy_id}.{format}',
  operation: STATIC,
  stepOperations: [BASELINE],
  summary: 'Create a NRQL alert condition in a policy: the policy read (404 when not in the account), then one alertsNrqlConditionStaticCreate or alertsNrqlConditionBaselineCreate by v2 type',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 201,
  unconfirmedTitle: 'The NRQL condition may have been created, but New Relic did not confirm it: list the policy\'s NRQL conditions before retrying',
  parameters,
  fields: nrqlConditionFields('nrql_condition'),
  knownGaps: nrqlConditionGaps('nrql_condition'),
  assumptions: [...NRQL_CONDITION_ASSUMPTIONS, "Success is 201, as the sandbox's legacy face answers (v2's status is UNCONFIRMED; clients accept any 2xx)."],
  async plan(ctx) {
    const policyId = v2IdOf(ctx.pathParams.policy_id ?? '');
    if (policyId === undefined) throw notFound(NrqlConditionTitles.policyNotFound);
    // The policy first, then the body, as v2 checked them.
    const found = parseAnswer(PolicyFound, await ctx.read('NrqlConditionPolicy', { accountId: ctx.accountId, policyId: String(policyId) }), 'NrqlConditionPolicy');
    if (found.actor.account?.alerts.policy?.id !== String(policyId)) throw notFound(NrqlConditionTitles.policyNotFound);
    const condition = v2ConditionOf(ctx.body, true);
    const type = thresholdType(condition);
    const input = nerdgraphInput(condition, type);
    const operation = type === 'baseline' ? BASELINE : STATIC;
    return {
      operation,
      variables: { accountId: ctx.accountId, policyId: String(policyId), condition: input },
      answer: mutatedConditionAnswer('create', type, operation),
    };
  },
});
