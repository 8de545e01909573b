import { z } from 'zod';
import { defineWriteMapping, type WritePlan, parseAnswer, invalidParameter, writeRefused, defineParams, param, objectAt, type V2Body } from '../../src/mapping-api.ts';
import {
  CHANNEL_ASSUMPTIONS,
  channelFields,
  channelGaps,
  checkWorkflowPayload,
  policyWorkflows,
  readDirectory,
  readPolicy,
  requireComplete,
  v2Channel,
  workflowCreate,
  workflowUpdate,
  type NotificationWorkflow,
} from './notifications.ts';
import { CHANNEL_TOP_LINKS, ChannelTitles, MAX_POLICY_IDS, PolicyChannelTitles, planChannel, type ChannelPlan } from './channel-config.ts';

const DESTINATION = 'ChannelDestinationCreate';
const CHANNEL = 'ChannelCreate';
const WORKFLOW_UPDATE = 'PolicyWorkflowUpdate';
const WORKFLOW_CREATE = 'PolicyWorkflowCreate';

const Property = z.object({ key: z.string(), value: z.string() });
const Problem = z
  .object({ description: z.string().optional(), type: z.string().optional(), details: z.string().optional() })
  .nullable();
const DestinationCreated = z.object({
  aiNotificationsCreateDestination: z.object({
    destination: z
      .object({ id: z.string(), name: z.string(), type: z.string(), properties: z.array(Property), auth: z.object({ authType: z.string().optional(), user: z.string().optional() }).nullable().optional() })
      .nullable(),
    error: Problem,
  }),
});
const ChannelCreated = z.object({
  aiNotificationsCreateChannel: z.object({
    channel: z
      .object({ id: z.string(), name: z.string(), type: z.string(), product: z.string(), active: z.boolean(), destinationId: z.string(), properties: z.array(Property) })
      .nullable(),
    error: Problem,
  }),
});

const problemText = (problem: z.infer<typeof Problem>): string =>
  [problem?.type, problem?.description ?? problem?.details].filter((part) => part !== undefined && part !== '').join(': ').slice(0, 200) || 'no reason given';

const parameters = defineParams({
  name: param.bodyField('channel.name', { fidelity: 'exact', note: '1 to 255 characters; the destination gets the same name.' }),
  type: param.bodyField('channel.type', { fidelity: 'approximate', note: 'email, slack, webhook, pagerduty, user; opsgenie and victorops are refused (422): NerdGraph has no such destination.' }),
  configuration: param.bodyField('channel.configuration', {
    fidelity: 'approximate',
    note: 'Per type as v2 (recipients, include_json_attachment; url, channel; service_key; base_url, auth_username, auth_password, payload_type, payload, headers; user_id). Secrets go to NerdGraph as secure values only.',
  }),
  policy_ids: param.ids('policy_ids', {
    fidelity: 'approximate',
    note: `Up to ${MAX_POLICY_IDS} policies, each linked by one more step: the policy's own workflow updated (or created) to route to the new channel.`,
    title: ChannelTitles.idInvalid('policy_ids'),
    ids: 'derived',
  }),
});

/** POST /v2/alerts_channels.{json,xml}: a destination, a channel on it, then one workflow write per policy_ids entry. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-channels.create',
  method: 'POST',
  route: '/v2/alerts_channels.{format}',
  sample: { body: { json: { channel: { name: 'costs {call}', type: 'email', configuration: { recipients: '{call}@example.com' } } } } },
  operation: DESTINATION,
  stepOperations: [CHANNEL, WORKFLOW_UPDATE, WORKFLOW_CREATE],
  summary: 'Create an alert channel: aiNotificationsCreateDestination, then aiNotificationsCreateChannel on it, then per policy_ids one aiWorkflowsUpdateWorkflow or aiWorkflowsCreateWorkflow (a chained write)',
  fidelity: 'approximate',
  successStatus: 201,
  unconfirmedTitle: 'The channel may have been created in part (its destination, the channel or some policy links) but New Relic did not confirm it: list channels before retrying',
  partialTitle: 'The channel was created in part (its destination, maybe the channel and some policy links) and New Relic refused the rest: list channels and fix or delete what was created before retrying',
  parameters,
  fields: [...channelFields('channels[]'), { field: 'links', fidelity: 'exact', source: "v2's template {channel.policy_ids}" }],
  knownGaps: [
    ...channelGaps('channels[]'),
    {
      description:
        'One v2 create is 2 mutations (destination, channel) plus one per policy: nothing is resent, and a failure after the first is never "nothing was changed". A later step New Relic refused (or that was never sent) answers 409 with the partial title: the earlier steps are known applied, and 409 is a status clients do not retry (newrelic-client-go retries 429, 500 and >= 502), so a retry does not create a second destination and channel. A later step whose outcome is unknown (lost answer, timeout) answers the unconfirmed title (502), which client-go does retry: that retry can create a duplicate destination and channel.',
    },
    { description: 'A user (mobile push) channel cannot be linked to a policy (NerdGraph workflows cannot route to it): policy_ids with a user channel is refused (422).' },
  ],
  assumptions: [...CHANNEL_ASSUMPTIONS, 'Success is 201 (v2\'s status is unconfirmed; clients accept any 2xx).', 'Channels are created with product IINT (what workflows route).'],
  async plan(ctx) {
    const { policy_ids: policyIds } = parameters.parse(ctx.params);
    if (policyIds.length > MAX_POLICY_IDS) throw invalidParameter(PolicyChannelTitles.tooManyPolicies);
    const plan: ChannelPlan = planChannel(objectAt(ctx.body, 'channel'));
    // The policies must exist; the workflows are read once, before anything is written.
    let workflows: NotificationWorkflow[] = [];
    if (policyIds.length > 0) {
      for (const policyId of policyIds) await readPolicy(ctx, policyId);
      if (plan.type === 'user') throw invalidParameter(PolicyChannelTitles.pushNotRoutable);
      workflows = requireComplete(await readDirectory(ctx, { workflows: true })).workflows;
    }
    const { accountId } = ctx;
    const linked: number[] = [];
    let shown: V2Body | undefined;

    const finish = (): V2Body => {
      if (shown === undefined) throw new Error('the channel step has not run');
      return { channels: [{ ...shown, links: { policy_ids: [...linked].sort((a, b) => a - b) } }], links: { ...CHANNEL_TOP_LINKS } };
    };

    /** The workflow steps after the channel exists: one per policy, in order. */
    const linkStep = (channelId: string, index: number): WritePlan => {
      const policyId = policyIds[index] as number;
      const own = policyWorkflows(workflows, policyId).own[0];
      const operation = own ? WORKFLOW_UPDATE : WORKFLOW_CREATE;
      const variables = own
        ? workflowUpdate(accountId, own, [...own.destinationConfigurations.map((c) => c.channelId), channelId])
        : workflowCreate(accountId, policyId, [channelId]);
      const after = (payload: unknown): void => {
        if (own) checkWorkflowPayload(payload, 'aiWorkflowsUpdateWorkflow', operation, own.id);
        else checkWorkflowPayload(payload, 'aiWorkflowsCreateWorkflow', operation);
        linked.push(policyId);
      };
      if (index + 1 < policyIds.length) {
        return { operation, variables, next: (payload) => (after(payload), linkStep(channelId, index + 1)) };
      }
      return { operation, variables, answer: (payload) => (after(payload), finish()) };
    };

    return {
      variables: { accountId, destination: plan.destination },
      next(payload): WritePlan {
        const created = parseAnswer(DestinationCreated, payload, DESTINATION).aiNotificationsCreateDestination;
        if (created.error || !created.destination) throw writeRefused(422, `New Relic refused the channel's destination: ${problemText(created.error)}`);
        const destination = { ...created.destination, accountId };
        const channelStep = { operation: CHANNEL, variables: { accountId, channel: { ...plan.channel, destinationId: destination.id } } };
        const afterChannel = (channelPayload: unknown): string => {
          const made = parseAnswer(ChannelCreated, channelPayload, CHANNEL).aiNotificationsCreateChannel;
          if (made.error || !made.channel) throw writeRefused(422, `New Relic refused the channel: ${problemText(made.error)}`);
          shown = v2Channel({ ...made.channel, accountId }, destination, []);
          return made.channel.id;
        };
        if (policyIds.length === 0) return { ...channelStep, answer: (channelPayload) => (afterChannel(channelPayload), finish()) };
        return { ...channelStep, next: (channelPayload) => linkStep(afterChannel(channelPayload), 0) };
      },
    };
  },
});
