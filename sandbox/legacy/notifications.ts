/**
 * The legacy face's alert channels: REST v2's `alerts_channels` (list, create, delete) and
 * `alerts_policy_channels` (PUT links channels to a policy, DELETE unlinks one), served from the
 * sandbox's notification store (../notifications.ts), the same world the NerdGraph face shows
 * as destinations, channels and workflows. Shapes are rest-v2-shapes.md §9.
 *
 * What v2 showed and this face shows the same way: channel ids (derived from the NerdGraph
 * channel id, src/v2/ids.ts channelV2Id: the sandbox world has no other), `configuration` as
 * strings with every key of the type (null when unset), secrets included (v2 echoed them),
 * `links.policy_ids` from the workflows that bind a policy.
 *
 * Where the sandbox world, being NerdGraph's, cannot hold what v2 could (documented in the
 * mappings too): opsgenie and victorops channels (422), and user (mobile push) channels on a
 * policy (422). Choices: 50 channels per page (as the sandbox's other alert lists), ordered by
 * id; 201 for a create; unlinking a channel that is not linked answers it unchanged.
 */
import { notFound, type V2Body } from './wire.ts';
import { channelV2Id } from '../../src/v2/ids.ts';
import {
  CHANNEL_TOP_LINKS,
  ChannelTitles,
  MAX_CHANNEL_IDS,
  MAX_POLICY_IDS,
  POLICY_PREDICATE,
  PolicyChannelTitles,
  V2_TYPE_OF_CHANNEL,
  channelIdList,
  channelIdParam,
  isOwnPolicyFilter,
  planChannel,
  policyIdsOfPredicates,
  policyWorkflowName,
  v2Configuration,
} from '../../src/v2/channel-config.ts';
import type { AlertPolicy } from '../alerts.ts';
import {
  addChannel,
  addDestination,
  addWorkflow,
  notificationsOf,
  policyIdsByChannel,
  removeChannel,
  removeWorkflow,
  type SandboxChannel,
  type SandboxNotifications,
  type SandboxWorkflow,
} from '../notifications.ts';
import { invalid, pageOf, send, type LegacyRequest, type LegacyRoute } from './common.ts';
import { bodyParams } from './writes.ts';

/** Channels per page of the v2 list (UNCONFIRMED; the sandbox's alert lists page by 50). */
export const CHANNELS_PAGE_SIZE = 50;

/** The account's channels v2 can show, by v2 id. */
function visibleChannels(store: SandboxNotifications, accountId: number): SandboxChannel[] {
  return store.channels
    .filter((channel) => channel.accountId === accountId && V2_TYPE_OF_CHANNEL[channel.type] !== undefined)
    .sort((a, b) => channelV2Id(a.id) - channelV2Id(b.id));
}

/** One v2 channel, secrets and all (the legacy face is what v2 answered). */
function channelBody(store: SandboxNotifications, channel: SandboxChannel, policyIds: ReadonlyMap<string, number[]>): V2Body {
  const destination = store.destinations.find((d) => d.id === channel.destinationId);
  const auth = destination?.auth ?? null;
  return {
    id: channelV2Id(channel.id),
    name: channel.name,
    type: V2_TYPE_OF_CHANNEL[channel.type] ?? channel.type.toLowerCase(),
    configuration: v2Configuration({
      channelType: channel.type,
      channelProperties: channel.properties,
      destinationProperties: destination?.properties ?? [],
      authUser: auth?.type === 'BASIC' ? auth.user : null,
      secrets: auth === null ? {} : auth.type === 'BASIC' ? { password: auth.password } : { token: auth.token },
    }),
    links: { policy_ids: policyIds.get(channel.id) ?? [] },
  };
}

function channelOf(store: SandboxNotifications, req: LegacyRequest, id: number): SandboxChannel {
  const channel = visibleChannels(store, req.accountId).find((c) => channelV2Id(c.id) === id);
  if (!channel) throw notFound(ChannelTitles.notFound);
  return channel;
}

function policyOf(req: LegacyRequest, id: number): AlertPolicy {
  const policy = req.data.alerts.policies.find((p) => p.accountId === req.accountId && p.id === id);
  if (!policy) throw notFound(ChannelTitles.policyNotFound);
  return policy;
}

const queryValues = (req: LegacyRequest, key: string): string[] => [...req.query.getAll(key), ...req.query.getAll(`${key}[]`)];

/** The policy's enabled own workflows (one predicate binding exactly it), oldest first. */
const ownWorkflows = (store: SandboxNotifications, accountId: number, policyId: number): SandboxWorkflow[] =>
  store.workflows.filter((w) => w.accountId === accountId && w.enabled && isOwnPolicyFilter(w.predicates, policyId));

/** Links channels to a policy: added to its first own workflow, or a new one. */
function link(store: SandboxNotifications, req: LegacyRequest, policyId: number, channels: readonly SandboxChannel[]): void {
  const linked = new Set([...policyIdsByChannel(store, req.accountId)].filter(([, ids]) => ids.includes(policyId)).map(([id]) => id));
  const missing = channels.filter((channel) => !linked.has(channel.id)).map((channel) => channel.id);
  if (missing.length === 0) return;
  const own = ownWorkflows(store, req.accountId, policyId)[0];
  if (own) {
    own.channelIds = [...own.channelIds, ...missing];
    own.updatedAt = req.now;
    return;
  }
  addWorkflow(
    store,
    {
      accountId: req.accountId,
      name: policyWorkflowName(policyId),
      enabled: true,
      channelIds: missing,
      filterName: `policy ${policyId}`,
      predicates: [{ attribute: POLICY_PREDICATE.attribute, operator: POLICY_PREDICATE.operator, values: [String(policyId)] }],
      mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
    },
    req.now,
  );
}

// ---------------------------------------------------------------------------------------------

function listChannels(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const page = pageOf(req.params);
  const channels = visibleChannels(store, req.accountId);
  const policyIds = policyIdsByChannel(store, req.accountId);
  const shown = channels.slice((page - 1) * CHANNELS_PAGE_SIZE, page * CHANNELS_PAGE_SIZE).map((channel) => channelBody(store, channel, policyIds));
  const linkHeader = req.link(page, Math.ceil(channels.length / CHANNELS_PAGE_SIZE));
  return send(req.format, 200, { channels: shown }, linkHeader ? { link: linkHeader } : {});
}

async function createChannel(req: LegacyRequest): Promise<Response> {
  const store = notificationsOf(req.data);
  const params = await bodyParams(req.request);
  const policyIds = channelIdList(queryValues(req, 'policy_ids'), 'policy_ids');
  if (policyIds.length > MAX_POLICY_IDS) throw invalid(PolicyChannelTitles.tooManyPolicies);
  const plan = planChannel(Object.hasOwn(params, 'channel') ? params.channel : undefined);
  const policies = policyIds.map((id) => policyOf(req, id));
  if (plan.type === 'user' && policies.length > 0) throw invalid(PolicyChannelTitles.pushNotRoutable);
  const auth = plan.destination.auth;
  const destination = addDestination(
    store,
    {
      accountId: req.accountId,
      name: plan.destination.name,
      type: plan.destination.type,
      properties: plan.destination.properties,
      auth: auth === undefined ? null : auth.type === 'TOKEN' ? { type: 'TOKEN', token: auth.token.token } : { type: 'BASIC', user: auth.basic.user, password: auth.basic.password },
    },
    req.now,
  );
  const channel = addChannel(
    store,
    { accountId: req.accountId, name: plan.channel.name, type: plan.channel.type, product: plan.channel.product, destinationId: destination.id, properties: plan.channel.properties },
    req.now,
  );
  for (const policy of policies) link(store, req, policy.id, [channel]);
  return send(req.format, 201, { channels: [channelBody(store, channel, policyIdsByChannel(store, req.accountId))], links: { ...CHANNEL_TOP_LINKS } });
}

function deleteChannel(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const raw = req.path.channel_id ?? '';
  const channel = /^[1-9]\d{0,15}$/.test(raw) ? channelOf(store, req, Number(raw)) : undefined;
  if (!channel) throw notFound(ChannelTitles.notFound);
  const body = channelBody(store, channel, policyIdsByChannel(store, req.accountId));
  removeChannel(store, channel, req.now);
  return send(req.format, 200, { channel: body, links: { ...CHANNEL_TOP_LINKS } });
}

function updatePolicyChannels(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const policyId = channelIdParam(queryValues(req, 'policy_id'), 'policy_id', ChannelTitles.policyIdRequired);
  const channelIds = channelIdList(queryValues(req, 'channel_ids'), 'channel_ids');
  if (channelIds.length === 0) throw invalid(ChannelTitles.channelIdsRequired);
  if (channelIds.length > MAX_CHANNEL_IDS) throw invalid(PolicyChannelTitles.tooManyChannels);
  const policy = policyOf(req, policyId);
  const channels = channelIds.map((id) => channelOf(store, req, id));
  if (channels.some((channel) => channel.type === 'MOBILE_PUSH')) throw invalid(PolicyChannelTitles.pushNotRoutable);
  link(store, req, policy.id, channels);
  const linked = visibleChannels(store, req.accountId)
    .filter((channel) => (policyIdsByChannel(store, req.accountId).get(channel.id) ?? []).includes(policy.id))
    .map((channel) => channelV2Id(channel.id))
    .sort((a, b) => a - b);
  return send(req.format, 200, { policy: { id: policy.id, channel_ids: linked } });
}

function unlinkPolicyChannel(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const policyId = channelIdParam(queryValues(req, 'policy_id'), 'policy_id', ChannelTitles.policyIdRequired);
  const channelId = channelIdParam(queryValues(req, 'channel_id'), 'channel_id', ChannelTitles.channelIdRequired);
  const policy = policyOf(req, policyId);
  const channel = channelOf(store, req, channelId);
  const bindingPolicy = store.workflows.filter((w) => w.accountId === req.accountId && w.enabled && w.channelIds.includes(channel.id) && policyIdsOfPredicates(w.predicates).includes(policy.id));
  if (bindingPolicy.some((w) => !isOwnPolicyFilter(w.predicates, policy.id))) throw invalid(PolicyChannelTitles.sharedWorkflow);
  for (const workflow of bindingPolicy) {
    workflow.channelIds = workflow.channelIds.filter((id) => id !== channel.id);
    workflow.updatedAt = req.now;
    if (workflow.channelIds.length === 0) removeWorkflow(store, workflow);
  }
  return send(req.format, 200, { channel: channelBody(store, channel, policyIdsByChannel(store, req.accountId)), links: { ...CHANNEL_TOP_LINKS } });
}

/** In the gateway's order (its mappings load by file name), so a 405's Allow header lists methods alike. */
export const NOTIFICATION_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/alerts_channels.{format}', methods: ['POST'], body: 'own', handler: createChannel },
  { template: '/v2/alerts_channels/{channel_id}.{format}', methods: ['DELETE'], body: 'own', handler: deleteChannel },
  { template: '/v2/alerts_channels.{format}', methods: ['GET'], handler: listChannels },
  { template: '/v2/alerts_policy_channels.{format}', methods: ['DELETE'], body: 'own', handler: unlinkPolicyChannel },
  { template: '/v2/alerts_policy_channels.{format}', methods: ['PUT'], body: 'own', handler: updatePolicyChannels },
];
