import { defineWriteMapping, defineParams, param, UpstreamError } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { POLICY_ASSUMPTIONS, POLICY_SHOW, POLICY_UPDATE, confirmedPolicy, policyChanges, policyFields, policyGaps, readPolicy, v2Policy } from './alert-policies.ts';

const parameters = defineParams({
  name: param.bodyField('policy.name', { fidelity: 'exact', note: 'Optional; trimmed, 1 to 255 characters.' }),
  incident_preference: param.bodyField('policy.incident_preference', { fidelity: 'exact', note: 'Optional; PER_POLICY, PER_CONDITION or PER_CONDITION_AND_TARGET.' }),
});

/** PUT /v2/alerts_policies/{policy_id}.{json,xml}: the policy read (404 first, as v2), then one alertsPolicyUpdate. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-policies.update',
  method: 'PUT',
  route: '/v2/alerts_policies/{policy_id}.{format}',
  sample: { path: { policy_id: '{policy_to_rename_id}' }, body: { json: { policy: { name: 'costs {call}' } } } },
  operation: POLICY_UPDATE,
  summary: 'Update an alert policy: account.alerts.policy(id), then one alertsPolicyUpdate with the attributes given (none given: nothing is sent)',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 200,
  unconfirmedTitle: 'The policy may have been updated, but New Relic did not confirm it: show the policy before retrying',
  parameters,
  fields: policyFields('policy'),
  knownGaps: [
    ...policyGaps('policy'),
    { description: `A policy deleted between the read (${POLICY_SHOW}) and the mutation answers NerdGraph's not-found as 404 "Resource not found", not v2's title.` },
  ],
  assumptions: [...POLICY_ASSUMPTIONS, 'An update naming no attribute changes nothing and sends nothing (v2 only moved updated_at, which NerdGraph does not have).'],
  async plan(ctx) {
    const current = await readPolicy(ctx, ctx.pathParams.policy_id);
    const changes = policyChanges(ctx.body);
    if (Object.keys(changes).length === 0) return { variables: null, answer: () => ({ policy: v2Policy(current) }) };
    return {
      variables: { accountId: ctx.accountId, id: current.id, policy: changes },
      answer(payload) {
        const updated = confirmedPolicy(payload, POLICY_UPDATE);
        if (!updated || updated.id !== current.id) throw new UpstreamError('upstream_failure', 'alertsPolicyUpdate confirmed no policy');
        return { policy: v2Policy(updated) };
      },
    };
  },
});
