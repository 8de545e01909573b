/**
 * The legacy face's alert channels: REST v2's `alerts_channels` (list, create, delete) and
 * `alerts_policy_channels` (PUT links channels to a policy, DELETE unlinks one), served from the
 * sandbox's notification store (../notifications.ts), the same world the NerdGraph face shows
 * as destinations, channels and workflows. Shapes are rest-v2-shapes.md §9.
 *
 * What v2 showed and this face shows the same way: channel ids are row ids, handed out in the
 * order the channels were made (../ids.ts RowIds; v2's ids grew with each channel), so a list
 * by id is a list by age; `configuration` as strings with every key of the type (null when
 * unset), secrets included (v2 echoed them), `links.policy_ids` from the workflows that bind a
 * policy. The body rules are channel-rules.ts; how a policy binds channels, ../policy-workflows.ts.
 *
 * Where the sandbox world, being NerdGraph's, cannot hold what v2 could (documented in the
 * mappings too): opsgenie and victorops channels (422), and user (mobile push) channels on a
 * policy (422). Choices: 50 channels per page (as the sandbox's other alert lists), ordered by
 * id; 201 for a create; unlinking a channel that is not linked answers it unchanged; no bound
 * on how many policies or channels one request names (v2 documents none).
 */
import type { AlertPolicy } from '../alerts.ts';
import { RowIds } from '../ids.ts';
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
} from '../notifications/store.ts';
import { POLICY_PREDICATE, isPolicyOwnFilter, policyIdsOf, workflowNameForPolicy } from '../policy-workflows.ts';
import { ChannelTitles, V2_TYPE_OF, channelToStore, idsIn, oneIdIn, v2ConfigurationOf } from './channel-rules.ts';
import { invalid, pageOf, send, type LegacyRequest, type LegacyRoute } from './common.ts';
import { notFound, type V2Body } from './wire.ts';
import { bodyParams } from './bodies.ts';
import { ALERT_CHANNEL_LINKS } from '../../facts/v2-values.ts';

/** v2's top-level links beside a channel answer (facts/v2-values.ts: rest-v2-shapes.md §0, `channel.policy_ids`). */
const TOP_LINKS = ALERT_CHANNEL_LINKS;

/** Channels per page of the v2 list (UNCONFIRMED; the sandbox's alert lists page by 50). */
export const CHANNELS_PAGE_SIZE = 50;

/** The first channel id the face hands out (v2's channel ids were seven-digit numbers, rest-v2-shapes.md §9). */
const FIRST_CHANNEL_ID = 3_000_001;
const rowIds = new WeakMap<SandboxNotifications, RowIds>();

/** The channel's v2 id: every channel of the store gets its row id in the order the store made them. */
function idOf(store: SandboxNotifications, channel: SandboxChannel): number {
  let ids = rowIds.get(store);
  if (!ids) rowIds.set(store, (ids = new RowIds(FIRST_CHANNEL_ID)));
  for (const made of store.channels) ids.idOf(made.id);
  return ids.idOf(channel.id);
}

/** The v2 id the legacy face shows for a store channel (tests follow ids with it). */
export function legacyChannelId(data: LegacyRequest['data'], channelId: string): number | undefined {
  const store = notificationsOf(data);
  const channel = store.channels.find((c) => c.id === channelId);
  return channel ? idOf(store, channel) : rowIds.get(store)?.idOf(channelId);
}

/** The account's channels v2 can show, by v2 id. */
function visibleChannels(store: SandboxNotifications, accountId: number): SandboxChannel[] {
  return store.channels
    .filter((channel) => channel.accountId === accountId && V2_TYPE_OF[channel.type] !== undefined)
    .sort((a, b) => idOf(store, a) - idOf(store, b));
}

/** One v2 channel, secrets and all (the legacy face is what v2 answered). */
function channelBody(store: SandboxNotifications, channel: SandboxChannel, policyIds: ReadonlyMap<string, number[]>): V2Body {
  const destination = store.destinations.find((d) => d.id === channel.destinationId);
  return {
    id: idOf(store, channel),
    name: channel.name,
    type: V2_TYPE_OF[channel.type] ?? channel.type.toLowerCase(),
    configuration: v2ConfigurationOf(channel, destination),
    links: { policy_ids: policyIds.get(channel.id) ?? [] },
  };
}

function channelOf(store: SandboxNotifications, req: LegacyRequest, id: number): SandboxChannel {
  const channel = visibleChannels(store, req.accountId).find((c) => idOf(store, c) === id);
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
  store.workflows.filter((w) => w.accountId === accountId && w.enabled && isPolicyOwnFilter(w.predicates, policyId));

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
      name: workflowNameForPolicy(policyId),
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
  const policyIds = idsIn(queryValues(req, 'policy_ids'), 'policy_ids');
  const plan = channelToStore(Object.hasOwn(params, 'channel') ? params.channel : undefined);
  const policies = policyIds.map((id) => policyOf(req, id));
  if (plan.v2Type === 'user' && policies.length > 0) throw invalid(ChannelTitles.pushNotRoutable);
  const destination = addDestination(store, { accountId: req.accountId, name: plan.name, ...plan.destination }, req.now);
  // Alert channels belong to New Relic's alerts product (IINT).
  const channel = addChannel(store, { accountId: req.accountId, name: plan.name, ...plan.channel, product: 'IINT', destinationId: destination.id }, req.now);
  for (const policy of policies) link(store, req, policy.id, [channel]);
  return send(req.format, 201, { channels: [channelBody(store, channel, policyIdsByChannel(store, req.accountId))], links: { ...TOP_LINKS } });
}

function deleteChannel(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const raw = req.path.channel_id ?? '';
  const channel = /^[1-9]\d{0,15}$/.test(raw) ? channelOf(store, req, Number(raw)) : undefined;
  if (!channel) throw notFound(ChannelTitles.notFound);
  const body = channelBody(store, channel, policyIdsByChannel(store, req.accountId));
  removeChannel(store, channel, req.now);
  return send(req.format, 200, { channel: body, links: { ...TOP_LINKS } });
}

function updatePolicyChannels(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const policyId = oneIdIn(queryValues(req, 'policy_id'), 'policy_id', ChannelTitles.policyIdRequired);
  const channelIds = idsIn(queryValues(req, 'channel_ids'), 'channel_ids');
  if (channelIds.length === 0) throw invalid(ChannelTitles.channelIdsRequired);
  const policy = policyOf(req, policyId);
  const channels = channelIds.map((id) => channelOf(store, req, id));
  if (channels.some((channel) => channel.type === 'MOBILE_PUSH')) throw invalid(ChannelTitles.pushNotRoutable);
  link(store, req, policy.id, channels);
  const linked = visibleChannels(store, req.accountId)
    .filter((channel) => (policyIdsByChannel(store, req.accountId).get(channel.id) ?? []).includes(policy.id))
    .map((channel) => idOf(store, channel))
    .sort((a, b) => a - b);
  return send(req.format, 200, { policy: { id: policy.id, channel_ids: linked } });
}

function unlinkPolicyChannel(req: LegacyRequest): Response {
  const store = notificationsOf(req.data);
  const policyId = oneIdIn(queryValues(req, 'policy_id'), 'policy_id', ChannelTitles.policyIdRequired);
  const channelId = oneIdIn(queryValues(req, 'channel_id'), 'channel_id', ChannelTitles.channelIdRequired);
  const policy = policyOf(req, policyId);
  const channel = channelOf(store, req, channelId);
  const bindingPolicy = store.workflows.filter((w) => w.accountId === req.accountId && w.enabled && w.channelIds.includes(channel.id) && policyIdsOf(w.predicates).includes(policy.id));
  if (bindingPolicy.some((w) => !isPolicyOwnFilter(w.predicates, policy.id))) throw invalid(ChannelTitles.sharedWorkflow);
  for (const workflow of bindingPolicy) {
    workflow.channelIds = workflow.channelIds.filter((id) => id !== channel.id);
    workflow.updatedAt = req.now;
    if (workflow.channelIds.length === 0) removeWorkflow(store, workflow);
  }
  return send(req.format, 200, { channel: channelBody(store, channel, policyIdsByChannel(store, req.accountId)), links: { ...TOP_LINKS } });
}

/** In this order a 405's Allow lists POST, GET for the channels and DELETE, PUT for the policy channels. */
export const NOTIFICATION_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/alerts_channels.{format}', methods: ['POST'], body: 'own', handler: createChannel },
  { template: '/v2/alerts_channels/{channel_id}.{format}', methods: ['DELETE'], body: 'own', handler: deleteChannel },
  { template: '/v2/alerts_channels.{format}', methods: ['GET'], handler: listChannels },
  { template: '/v2/alerts_policy_channels.{format}', methods: ['DELETE'], body: 'own', handler: unlinkPolicyChannel },
  { template: '/v2/alerts_policy_channels.{format}', methods: ['PUT'], body: 'own', handler: updatePolicyChannels },
];
