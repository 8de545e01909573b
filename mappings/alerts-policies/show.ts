import { defineReadPlanMapping, NO_PARAMS } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE, SHOW_UNCONFIRMED } from '../common/alerts.ts';
import { POLICY_ASSUMPTIONS, POLICY_SHOW, policyFields, policyGaps, readPolicy, v2Policy, policyKeys } from './alert-policies.ts';

/** GET /v2/alerts_policies/{policy_id}.{json,xml}: one policy, by `policy(id)`. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-policies.show',
  method: 'GET',
  route: '/v2/alerts_policies/{policy_id}.{format}',
  v2Keys: policyKeys('policy', false),
  operation: POLICY_SHOW,
  summary: 'Show one alert policy: account.alerts.policy(id)',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  parameters: NO_PARAMS,
  fields: policyFields('policy'),
  knownGaps: policyGaps('policy'),
  assumptions: [SHOW_UNCONFIRMED, ...POLICY_ASSUMPTIONS, 'The answer is {"policy": P}, as PUT and DELETE answer (v2 documents no show).'],
  async load(ctx) {
    return { body: { policy: v2Policy(await readPolicy(ctx, ctx.pathParams.policy_id)) } };
  },
});
