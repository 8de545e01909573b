import { z } from 'zod';
import { defineParams, defineWriteMapping, notFound, param, parseAnswer, v2IdOf } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import {
  NRQL_CONDITION_ASSUMPTIONS,
  NRQL_CONDITION_OPERATIONS,
  mutatedConditionAnswer,
  NrqlConditionTitles,
  nrqlConditionFields,
  nrqlConditionGaps,
} from './nrql-conditions.ts';
import { nerdgraphInput, thresholdType, v2ConditionOf } from './nrql-condition-input.ts';

const OPERATIONS = NRQL_CONDITION_OPERATIONS.create;

const parameters = defineParams({
  condition: param.bodyField('nrql_condition', {
    fidelity: 'approximate',
    note: "type static (default), baseline or outlier (alertsNrqlConditionStatic/Baseline/OutlierCreate), name, enabled (default false), runbook_url, value_function (static: valueFunction), baseline_direction, expected_groups and ignore_overlap (outlier), violation_time_limit_seconds (default 259,200), terms (duration minutes -> thresholdDuration seconds, six operators, all/any -> ALL/AT_LEAST_ONCE), nrql {query, since_value (optional, deprecated) -> evaluationOffset}, signal and expiration key by key (v2's documented signal defaults sent when not given).",
  }),
});

const PolicyFound = z.object({ actor: z.object({ account: z.object({ alerts: z.object({ policy: z.object({ id: z.string() }).nullable() }) }).nullable() }) });

/** POST /v2/alerts_nrql_conditions/policies/{policy_id}.{json,xml}: one static or baseline create mutation. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts_nrql_conditions.create',
  method: 'POST',
  route: '/v2/alerts_nrql_conditions/policies/{policy_id}.{format}',
  sample: {
    path: { policy_id: '{nrql_policy_id}' },
    body: { json: { nrql_condition: { name: 'costs {call}', terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '1', time_function: 'all' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' } } } },
  },
  operation: OPERATIONS.static,
  stepOperations: [OPERATIONS.baseline, OPERATIONS.outlier],
  summary: 'Create a NRQL alert condition in a policy: the policy read (404 when not in the account), then one alertsNrqlConditionStaticCreate, BaselineCreate or OutlierCreate by v2 type',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 201,
  unconfirmedTitle: 'The NRQL condition may have been created, but New Relic did not confirm it: list the policy\'s NRQL conditions before retrying',
  parameters,
  fields: nrqlConditionFields('nrql_condition'),
  knownGaps: nrqlConditionGaps('nrql_condition'),
  assumptions: [...NRQL_CONDITION_ASSUMPTIONS, "Success is 201, as the sandbox's legacy face answers (v2's status is UNCONFIRMED; clients accept any 2xx; no probe: it would have to write, and the probes are read-only)."],
  async plan(ctx) {
    const policyId = v2IdOf(ctx.pathParams.policy_id ?? '');
    if (policyId === undefined) throw notFound(NrqlConditionTitles.policyNotFound);
    // The policy first, then the body, as v2 checked them.
    const found = parseAnswer(PolicyFound, await ctx.read('NrqlConditionPolicy', { accountId: ctx.accountId, policyId: String(policyId) }), 'NrqlConditionPolicy');
    if (found.actor.account?.alerts.policy?.id !== String(policyId)) throw notFound(NrqlConditionTitles.policyNotFound);
    const condition = v2ConditionOf(ctx.body, true);
    const type = thresholdType(condition);
    const input = nerdgraphInput(condition, type);
    const operation = OPERATIONS[type];
    return {
      operation,
      variables: { accountId: ctx.accountId, policyId: String(policyId), condition: input },
      answer: mutatedConditionAnswer('create', type, operation),
    };
  },
});
