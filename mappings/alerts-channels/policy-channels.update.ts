import { defineWriteMapping, invalidParameter, defineParams, param } from '../../src/mapping-api.ts';
import { CHANNEL_ASSUMPTIONS, channelById, checkWorkflowPayload, policyIdsByChannel, policyWorkflows, readDirectory, readPolicy, requireComplete, workflowCreate, workflowUpdate } from './notifications.ts';
import { ChannelTitles, MAX_CHANNEL_IDS, PolicyChannelTitles, channelV2Id } from './channel-config.ts';

const UPDATE = 'PolicyWorkflowUpdate';
const CREATE = 'PolicyWorkflowCreate';

const parameters = defineParams({
  policy_id: param.requiredId('policy_id', {
    fidelity: 'exact',
    note: 'Required; 404 when the account has no such policy (alerts.policy).',
    title: ChannelTitles.idInvalid('policy_id'),
    missingTitle: ChannelTitles.policyIdRequired,
    ids: 'derived',
  }),
  channel_ids: param.ids('channel_ids', {
    fidelity: 'exact',
    note: `Required, comma-separated, at most ${MAX_CHANNEL_IDS}; each must be a channel of the account (404).`,
    title: ChannelTitles.idInvalid('channel_ids'),
    ids: 'derived',
  }),
});

/** PUT /v2/alerts_policy_channels.{json,xml}?policy_id=&channel_ids=: link channels to a policy through its workflow. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-policy-channels.update',
  method: 'PUT',
  route: '/v2/alerts_policy_channels.{format}',
  sample: { query: 'policy_id={unlinked_policy_id}&channel_ids={channel_to_link_id}' },
  operation: UPDATE,
  stepOperations: [CREATE],
  summary: "Link channels to a policy: read the policy, channels and workflows, then one aiWorkflowsUpdateWorkflow of the policy's own workflow (or one aiWorkflowsCreateWorkflow)",
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The channels may have been linked to the policy, but New Relic did not confirm it: list channels before retrying',
  parameters,
  fields: [
    { field: 'policy.id', fidelity: 'exact', source: 'policy_id, once alerts.policy found it' },
    { field: 'policy.channel_ids', fidelity: 'approximate', source: 'derived ids of every channel the workflows link to the policy, after the change' },
  ],
  knownGaps: [
    { description: 'Channel ids are derived from NerdGraph notification channel ids, not the ids v2 had.' },
    { description: 'User (mobile push) channels cannot be linked (NerdGraph workflows cannot route to them): refused with 422.' },
    {
      description:
        "The policy's workflow is an enabled one whose filter is exactly labels.policyIds EXACTLY_MATCHES [policy id] (the one the gateway created first); links made by other workflows are shown but not edited. Disabled workflows link nothing and are not edited: with only a disabled one, a new workflow is created.",
    },
    { description: "Channels the workflow keeps are sent back with their notificationTriggers and updateOriginalMessage as NerdGraph read them; new ones get NerdGraph's defaults." },
  ],
  assumptions: [...CHANNEL_ASSUMPTIONS, 'Channels already linked are left as they are: PUT adds, as v2 did; nothing is written when all are linked.', 'A workflow created for a policy is named "REST v2 policy <id> channels" and notifies all issues.'],
  async plan(ctx) {
    const { policy_id: policyId, channel_ids: channelIds } = parameters.parse(ctx.params);
    if (channelIds.length === 0) throw invalidParameter(ChannelTitles.channelIdsRequired);
    if (channelIds.length > MAX_CHANNEL_IDS) throw invalidParameter(PolicyChannelTitles.tooManyChannels);
    await readPolicy(ctx, policyId);
    const directory = requireComplete(await readDirectory(ctx, { channels: true, workflows: true }));
    const channels = channelIds.map((id) => channelById(directory, id));
    if (channels.some((channel) => channel.type === 'MOBILE_PUSH')) throw invalidParameter(PolicyChannelTitles.pushNotRoutable);
    const links = policyIdsByChannel(directory.workflows);
    const linkedBefore = directory.channels.filter((channel) => (links.get(channel.id) ?? []).includes(policyId));
    const missing = channels.filter((channel) => !linkedBefore.includes(channel)).map((channel) => channel.id);
    const answer = () => ({
      policy: { id: policyId, channel_ids: [...new Set([...linkedBefore.map((c) => channelV2Id(c.id)), ...channels.map((c) => channelV2Id(c.id))])].sort((a, b) => a - b) },
    });
    if (missing.length === 0) return { variables: null, answer };
    const own = policyWorkflows(directory.workflows, policyId).own[0];
    if (own) {
      return {
        variables: workflowUpdate(ctx.accountId, own, [...own.destinationConfigurations.map((c) => c.channelId), ...missing]),
        answer: (payload) => (checkWorkflowPayload(payload, 'aiWorkflowsUpdateWorkflow', UPDATE, own.id), answer()),
      };
    }
    return {
      operation: CREATE,
      variables: workflowCreate(ctx.accountId, policyId, missing),
      answer: (payload) => (checkWorkflowPayload(payload, 'aiWorkflowsCreateWorkflow', CREATE), answer()),
    };
  },
});
