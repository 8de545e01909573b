import { type WritePlan, defineWriteMapping, invalidParameter, writeRefused, type V2Body, defineParams, param } from '../../src/mapping-api.ts';
import {
  CHANNEL_ASSUMPTIONS,
  channelById,
  channelFields,
  channelGaps,
  checkWorkflowPayload,
  isGatewayWorkflow,
  policyIdsByChannel,
  policyWorkflows,
  readDirectory,
  readPolicy,
  requireComplete,
  v2Channel,
  workflowUpdate,
} from './notifications.ts';
import { CHANNEL_TOP_LINKS, ChannelTitles, PolicyChannelTitles } from './channel-config.ts';

const UPDATE = 'PolicyWorkflowUpdate';
const DELETE = 'PolicyWorkflowDelete';

const parameters = defineParams({
  policy_id: param.requiredId('policy_id', {
    fidelity: 'exact',
    note: 'Required; 404 when the account has no such policy.',
    title: ChannelTitles.idInvalid('policy_id'),
    missingTitle: ChannelTitles.policyIdRequired,
    ids: 'derived',
  }),
  channel_id: param.requiredId('channel_id', {
    fidelity: 'exact',
    note: 'Required; 404 when the account has no such channel.',
    title: ChannelTitles.idInvalid('channel_id'),
    missingTitle: ChannelTitles.channelIdRequired,
    ids: 'derived',
  }),
});

/** DELETE /v2/alerts_policy_channels.{json,xml}?policy_id=&channel_id=: unlink a channel from a policy's workflow. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-policy-channels.delete',
  method: 'DELETE',
  route: '/v2/alerts_policy_channels.{format}',
  // Removes the links the update's sample made.
  sample: { query: 'policy_id={unlinked_policy_id}&channel_id={channel_to_link_id}', after: 'alerts-policy-channels.update' },
  operation: UPDATE,
  stepOperations: [DELETE],
  summary:
    "Unlink a channel from a policy: the policy's workflow updated without it (aiWorkflowsUpdateWorkflow), or deleted when it was its last channel and the gateway created it (aiWorkflowsDeleteWorkflow); channels and other workflows are never deleted",
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The channel may have been unlinked from the policy, but New Relic did not confirm it: list channels before retrying',
  parameters,
  fields: [...channelFields('channel'), { field: 'links', fidelity: 'exact', source: "v2's template {channel.policy_ids}" }],
  knownGaps: [
    ...channelGaps('channel'),
    { description: 'A channel linked to the policy through a workflow shared with other policies is not unlinked: refused (422) with a title saying so.' },
    {
      description:
        "Unlinking the last channel of a policy's workflow the gateway did not create (not named \"REST v2 policy <id> channels\") is refused (422): NerdGraph workflows need a channel, and the gateway deletes only workflows it created (v2 never deleted anything here).",
    },
    { description: 'Disabled workflows are neither links nor edited: a channel reached only through a disabled workflow is shown unlinked and unlinking it writes nothing.' },
  ],
  assumptions: [
    ...CHANNEL_ASSUMPTIONS,
    'A channel not linked to the policy is answered unchanged (200) and nothing is written.',
    'Unlinking never deletes the channel: the documents send deleteUnusedChannels: false and deleteChannels: false (NerdGraph defaults to true).',
    'The workflow the gateway created for a policy (workflowCreate) is deleted once it has no channel left: it holds nothing else.',
  ],
  async plan(ctx) {
    const { policy_id: policyId, channel_id: channelId } = parameters.parse(ctx.params);
    await readPolicy(ctx, policyId);
    const directory = requireComplete(await readDirectory(ctx, { channels: true, destinations: true, workflows: true }));
    const channel = channelById(directory, channelId);
    const { binding } = policyWorkflows(directory.workflows, policyId);
    const holding = binding.filter((workflow) => workflow.destinationConfigurations.some((c) => c.channelId === channel.id));
    if (holding.some((workflow) => !policyWorkflows([workflow], policyId).own.length)) throw invalidParameter(PolicyChannelTitles.sharedWorkflow);
    const remaining = directory.workflows.filter((workflow) => !holding.includes(workflow));
    const body = (): V2Body => ({
      channel: v2Channel(channel, directory.destinations.get(channel.destinationId), policyIdsByChannel(remaining).get(channel.id) ?? []),
      links: { ...CHANNEL_TOP_LINKS },
    });
    if (holding.length === 0) return { variables: null, answer: body };
    // A workflow the caller made in New Relic is never deleted: refused before anything is written.
    const emptied = holding.find((workflow) => workflow.destinationConfigurations.every((c) => c.channelId === channel.id) && !isGatewayWorkflow(workflow, policyId));
    if (emptied) throw writeRefused(422, PolicyChannelTitles.lastChannelOfForeignWorkflow(emptied.name));
    const step = (index: number): WritePlan => {
      const workflow = holding[index];
      if (workflow === undefined) throw new Error('no workflow step');
      const left = workflow.destinationConfigurations.map((c) => c.channelId).filter((id) => id !== channel.id);
      const last = index + 1 === holding.length;
      const check = (payload: unknown): void => {
        if (left.length === 0) checkWorkflowPayload(payload, 'aiWorkflowsDeleteWorkflow', DELETE, workflow.id);
        else checkWorkflowPayload(payload, 'aiWorkflowsUpdateWorkflow', UPDATE, workflow.id);
      };
      const base = left.length === 0 ? { operation: DELETE, variables: { accountId: ctx.accountId, id: workflow.id } } : { operation: UPDATE, variables: workflowUpdate(ctx.accountId, workflow, left) };
      return last ? { ...base, answer: (payload) => (check(payload), body()) } : { ...base, next: (payload) => (check(payload), step(index + 1)) };
    };
    return step(0);
  },
});
