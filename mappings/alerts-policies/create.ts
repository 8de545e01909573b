import { defineWriteMapping, defineParams, param, UpstreamError } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { POLICY_ASSUMPTIONS, POLICY_CREATE, confirmedPolicy, policyFields, policyGaps, policyToCreate, v2Policy } from './alert-policies.ts';

const parameters = defineParams({
  name: param.bodyField('policy.name', { fidelity: 'exact', note: "Required; trimmed, 1 to 255 characters (422 \"Invalid policy: name can't be blank\")." }),
  incident_preference: param.bodyField('policy.incident_preference', {
    fidelity: 'exact',
    note: 'PER_POLICY (default), PER_CONDITION or PER_CONDITION_AND_TARGET, as spelt; anything else is 422.',
  }),
});

/** POST /v2/alerts_policies.{json,xml}: one alertsPolicyCreate. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-policies.create',
  method: 'POST',
  route: '/v2/alerts_policies.{format}',
  sample: { body: { json: { policy: { name: 'costs {call}' } } } },
  operation: POLICY_CREATE,
  summary: 'Create an alert policy: one alertsPolicyCreate',
  fidelity: 'approximate',
  passthroughByDefault: ALERTS_KEPT_ALIVE,
  successStatus: 201,
  unconfirmedTitle: 'The policy may have been created, but New Relic did not confirm it: list policies by filter[name] before retrying',
  parameters,
  fields: policyFields('policy'),
  knownGaps: [
    ...policyGaps('policy'),
    {
      description:
        'The mutation is sent once and never resent; when its answer is lost (timeout, 5xx) the gateway answers 502 with the unconfirmed title, and a client that retries then (client-go does) can create a second policy of the same name, as it could with v2.',
    },
  ],
  assumptions: [...POLICY_ASSUMPTIONS, "Success is 201 (v2's status is unconfirmed; clients accept any 2xx)."],
  async plan(ctx) {
    const policy = policyToCreate(ctx.body);
    return {
      variables: { accountId: ctx.accountId, policy },
      answer(payload) {
        const created = confirmedPolicy(payload, POLICY_CREATE);
        // No error and no policy: whether it was created is unknown (the runner answers the unconfirmed title).
        if (!created) throw new UpstreamError('upstream_failure', 'alertsPolicyCreate confirmed no policy');
        return { policy: v2Policy(created) };
      },
    };
  },
});
