import { z } from 'zod';
import { defineWriteMapping, NO_PARAMS, parseAnswer, UpstreamError } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { POLICY_ASSUMPTIONS, POLICY_DELETE, POLICY_SHOW, policyFields, policyGaps, readPolicy, v2Policy } from './alert-policies.ts';

const Deleted = z.object({ alertsPolicyDelete: z.object({ id: z.string() }).nullable() });

/** DELETE /v2/alerts_policies/{policy_id}.{json,xml}: the policy read (v2 answers it), then one alertsPolicyDelete. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-policies.delete',
  method: 'DELETE',
  route: '/v2/alerts_policies/{policy_id}.{format}',
  sample: { path: { policy_id: '{policy_to_delete_id}' } },
  operation: POLICY_DELETE,
  summary: 'Delete an alert policy: account.alerts.policy(id) (the answer is the policy as it was), then one alertsPolicyDelete',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 200,
  unconfirmedTitle: 'The policy may have been deleted, but New Relic did not confirm it: show the policy before retrying',
  parameters: NO_PARAMS,
  fields: policyFields('policy'),
  knownGaps: [
    ...policyGaps('policy'),
    { description: `A policy deleted between the read (${POLICY_SHOW}) and the mutation answers NerdGraph's not-found as 404 "Resource not found", not v2's title.` },
  ],
  assumptions: [...POLICY_ASSUMPTIONS, "The policy's conditions go with it, as in v2 (UNCONFIRMED that NerdGraph deletes a policy's conditions with it; the sandbox does; no probe: a write's answer, and the probe never writes)."],
  async plan(ctx) {
    const policy = await readPolicy(ctx, ctx.pathParams.policy_id);
    return {
      variables: { accountId: ctx.accountId, id: policy.id },
      answer(payload) {
        const deleted = parseAnswer(Deleted, payload, POLICY_DELETE).alertsPolicyDelete;
        // No error and not this id: whether it was deleted is unknown (the runner answers the unconfirmed title).
        if (deleted?.id !== policy.id) throw new UpstreamError('upstream_failure', 'alertsPolicyDelete confirmed no id');
        return { policy: v2Policy(policy) };
      },
    };
  },
});
