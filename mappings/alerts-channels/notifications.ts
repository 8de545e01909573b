/**
 * Shared by the alerts_channels and alerts_policy_channels mappings: the account's notification
 * channels, their destinations and its workflows read through NotificationDirectory (every
 * cursor walked, bounded), v2 channel objects rebuilt from them, and the policy links found by
 * inverting the workflows' `labels.policyIds EXACTLY_MATCHES` predicates (UNCONFIRMED attribute,
 * routes-next.md §5.5; no probe: the route comparison of /v2/alerts_channels shows the links where workflows bind policies).
 */
import { z } from 'zod';
import { type FieldNote, type KnownGap, type OperationContext, parseAnswer, UpstreamError, V2Error, notFound, writeRefused, type V2Body, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { ChannelTitles, POLICY_PREDICATE, V2_TYPE_OF_CHANNEL, isOwnPolicyFilter, policyIdsOfPredicates, policyWorkflowName, v2Configuration, channelV2Id } from './channel-config.ts';

export const DIRECTORY = 'NotificationDirectory';
/** v2 list page size (UNCONFIRMED, routes-next.md §0 assumes 200; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing; the sandbox's alert lists page by 50, as here). */
export const CHANNELS_PAGE_SIZE = 50;
/** NerdGraph pages read per list at most (a few thousand channels); beyond, the rest is not shown (a list) or nothing is written (a write). */
export const MAX_DIRECTORY_PAGES = 50;

const Property = z.object({ key: z.string(), value: z.string() });
const Channel = z.object({
  accountId: z.number(),
  id: z.string(),
  name: z.string(),
  type: z.string(),
  product: z.string(),
  active: z.boolean(),
  destinationId: z.string(),
  properties: z.array(Property),
});
const Destination = z.object({
  accountId: z.number(),
  id: z.string(),
  name: z.string(),
  type: z.string(),
  properties: z.array(Property),
  auth: z.object({ authType: z.string().optional(), user: z.string().optional() }).nullable().optional(),
});
const Predicate = z.object({ attribute: z.string(), operator: z.string(), values: z.array(z.string()) });
/** One destination of a workflow, with the settings a rewrite of the list must send back unchanged. */
const DestinationConfiguration = z.object({
  channelId: z.string(),
  notificationTriggers: z.array(z.string()).nullable().optional(),
  updateOriginalMessage: z.boolean().nullable().optional(),
});
const Workflow = z.object({
  accountId: z.number(),
  id: z.string(),
  name: z.string(),
  workflowEnabled: z.boolean(),
  destinationConfigurations: z.array(DestinationConfiguration),
  issuesFilter: z.object({ id: z.string(), name: z.string(), type: z.string(), predicates: z.array(Predicate) }),
});
const page = <T extends z.ZodTypeAny>(item: T) => z.object({ nextCursor: z.string().nullable(), entities: z.array(item) }).optional();
const Directory = z.object({
  actor: z.object({
    account: z.object({
      aiNotifications: z.object({ channels: page(Channel), destinations: page(Destination) }).nullable().optional(),
      aiWorkflows: z.object({ workflows: page(Workflow) }).nullable().optional(),
      alerts: z.object({ policy: z.object({ id: z.string(), name: z.string() }).nullable() }).nullable().optional(),
    }),
  }),
});

export type NotificationChannel = z.infer<typeof Channel>;
export type NotificationDestination = z.infer<typeof Destination>;
export type NotificationWorkflow = z.infer<typeof Workflow>;

/** What the routes need to know about the account's channels. */
export interface ChannelDirectory {
  /** Channels v2 can show (types with a v2 name), by v2 id. */
  channels: NotificationChannel[];
  destinations: Map<string, NotificationDestination>;
  workflows: NotificationWorkflow[];
  /** The policy asked for: null when the account has no such policy. */
  policy: { id: string; name: string } | null | undefined;
  /** Why a list was not read to its end (the page bound, or NerdGraph repeating a cursor); undefined when every list asked for was. */
  incomplete?: 'bound' | 'repeated cursor';
}

export const DirectoryTitles = {
  bound: `New Relic lists more notification channels or workflows than the gateway reads (${MAX_DIRECTORY_PAGES} pages); nothing was changed`,
  repeated: 'New Relic repeated a page of notification channels or workflows, so the list read was not complete; nothing was changed',
} as const;

/**
 * A write acts only on a directory read to its end: otherwise it could create a second workflow
 * for a policy, answer 404 for a channel on an unread page, or unlink nothing and say 200. Thrown
 * before any mutation, so "nothing was changed" is true.
 */
export function requireComplete(directory: ChannelDirectory): ChannelDirectory {
  if (directory.incomplete === 'bound') throw new V2Error(503, DirectoryTitles.bound, { kind: 'directory_truncated' });
  if (directory.incomplete === 'repeated cursor') throw new V2Error(502, DirectoryTitles.repeated, { kind: 'directory_truncated' });
  return directory;
}

/**
 * Reads the lists asked for to their ends (each by its own cursor, one request per round) and,
 * with `policyId`, that alert policy. Entities of another account are dropped (the account's
 * lists hold none).
 */
export async function readDirectory(
  ctx: Pick<OperationContext, 'read' | 'accountId'>,
  wanted: { channels?: boolean; destinations?: boolean; workflows?: boolean; policyId?: number },
): Promise<ChannelDirectory> {
  const channels: NotificationChannel[] = [];
  const destinations: NotificationDestination[] = [];
  const workflows: NotificationWorkflow[] = [];
  let policy: ChannelDirectory['policy'];
  let incomplete: ChannelDirectory['incomplete'];
  const seen = { channels: new Set<string>(), destinations: new Set<string>(), workflows: new Set<string>() };
  const cursors = { channels: undefined as string | null | undefined, destinations: undefined as string | null | undefined, workflows: undefined as string | null | undefined };
  const more = (list: keyof typeof cursors): boolean => wanted[list] === true && cursors[list] !== null;
  for (let round = 0; round < MAX_DIRECTORY_PAGES && (round === 0 || more('channels') || more('destinations') || more('workflows')); round++) {
    const withPolicy = round === 0 && wanted.policyId !== undefined;
    const data = await ctx.read(DIRECTORY, {
      accountId: ctx.accountId,
      withChannels: more('channels'),
      withDestinations: more('destinations'),
      withWorkflows: more('workflows'),
      ...(cursors.channels ? { channelCursor: cursors.channels } : {}),
      ...(cursors.destinations ? { destinationCursor: cursors.destinations } : {}),
      ...(cursors.workflows ? { workflowCursor: cursors.workflows } : {}),
      ...(withPolicy ? { withPolicy: true, policyId: String(wanted.policyId) } : {}),
    });
    const account = parseAnswer(Directory, data, DIRECTORY).actor.account;
    const step = <T extends { accountId: number }>(list: keyof typeof cursors, answer: { nextCursor: string | null; entities: T[] } | undefined, into: T[]): void => {
      if (!more(list)) return;
      if (answer === undefined) throw new V2Error(502, `NerdGraph answered ${DIRECTORY} without ${list}`, { kind: 'upstream_shape' });
      into.push(...answer.entities.filter((entity) => entity.accountId === ctx.accountId));
      // A cursor seen before would read the same pages again: stop that list, and say so.
      if (answer.nextCursor !== null && seen[list].has(answer.nextCursor)) {
        incomplete = 'repeated cursor';
        cursors[list] = null;
        return;
      }
      if (answer.nextCursor !== null) seen[list].add(answer.nextCursor);
      cursors[list] = answer.nextCursor;
    };
    // Which lists this round read is decided before any cursor moves.
    const read = { channels: more('channels'), destinations: more('destinations'), workflows: more('workflows') };
    if (read.channels) step('channels', account.aiNotifications?.channels, channels);
    if (read.destinations) step('destinations', account.aiNotifications?.destinations, destinations);
    if (read.workflows) step('workflows', account.aiWorkflows?.workflows, workflows);
    if (withPolicy) policy = account.alerts?.policy ?? null;
  }
  if (incomplete === undefined && (more('channels') || more('destinations') || more('workflows'))) incomplete = 'bound';
  return {
    channels: channels.filter((channel) => V2_TYPE_OF_CHANNEL[channel.type] !== undefined).sort((a, b) => channelV2Id(a.id) - channelV2Id(b.id)),
    destinations: new Map(destinations.map((destination) => [destination.id, destination])),
    workflows,
    policy,
    ...(incomplete === undefined ? {} : { incomplete }),
  };
}

/** The policy ids each channel is linked to (inverting the workflows), ascending. */
export function policyIdsByChannel(workflows: readonly NotificationWorkflow[]): Map<string, number[]> {
  const byChannel = new Map<string, Set<number>>();
  for (const workflow of workflows) {
    // A disabled workflow notifies nobody: it links no policy (v2 had no disabled links).
    if (!workflow.workflowEnabled) continue;
    const policies = policyIdsOfPredicates(workflow.issuesFilter.predicates);
    for (const { channelId } of workflow.destinationConfigurations) {
      let set = byChannel.get(channelId);
      if (!set) byChannel.set(channelId, (set = new Set()));
      for (const policy of policies) set.add(policy);
    }
  }
  return new Map([...byChannel].map(([id, set]) => [id, [...set].sort((a, b) => a - b)]));
}

/** One v2 channel. Secrets are null: NerdGraph never reads them back. */
export function v2Channel(channel: NotificationChannel, destination: NotificationDestination | undefined, policyIds: readonly number[]): V2Body {
  return {
    id: channelV2Id(channel.id),
    name: channel.name,
    type: V2_TYPE_OF_CHANNEL[channel.type] ?? channel.type.toLowerCase(),
    configuration: v2Configuration({
      channelType: channel.type,
      channelProperties: channel.properties,
      destinationProperties: destination?.properties ?? [],
      authUser: destination?.auth?.authType === 'BASIC' ? (destination.auth.user ?? null) : null,
    }),
    links: { policy_ids: [...policyIds] },
  };
}

/** The channel whose derived v2 id is `id`, or v2's 404. */
export function channelById(directory: ChannelDirectory, id: number): NotificationChannel {
  const channel = directory.channels.find((candidate) => channelV2Id(candidate.id) === id);
  if (!channel) throw notFound(ChannelTitles.notFound);
  return channel;
}

/** 404 unless the directory read found the policy. */
export function requirePolicy(directory: ChannelDirectory): void {
  if (!directory.policy) throw notFound(ChannelTitles.policyNotFound);
}

/**
 * 404 unless the account has the alert policy (alerts.policy; one request without lists). A
 * NOT_FOUND error for it, as real NerdGraph may answer instead of null, is the same 404.
 */
export async function readPolicy(ctx: Pick<OperationContext, 'read' | 'accountId'>, policyId: number): Promise<void> {
  let directory: ChannelDirectory;
  try {
    directory = await readDirectory(ctx, { policyId });
  } catch (error) {
    if (error instanceof UpstreamError && error.errorClass === 'not_found') throw notFound(ChannelTitles.policyNotFound);
    throw error;
  }
  requirePolicy(directory);
}

/**
 * Enabled workflows that bind `policyId`, and which of them are its own (the only kind the
 * translation edits), the one the gateway created (named policyWorkflowName) first. Disabled
 * workflows are neither links nor edited: a disabled workflow of the policy is left as it is.
 */
export function policyWorkflows(workflows: readonly NotificationWorkflow[], policyId: number): { binding: NotificationWorkflow[]; own: NotificationWorkflow[] } {
  const binding = workflows.filter((workflow) => workflow.workflowEnabled && policyIdsOfPredicates(workflow.issuesFilter.predicates).includes(policyId));
  const own = binding.filter((workflow) => isOwnPolicyFilter(workflow.issuesFilter.predicates, policyId));
  return { binding, own: [...own.filter((workflow) => isGatewayWorkflow(workflow, policyId)), ...own.filter((workflow) => !isGatewayWorkflow(workflow, policyId))] };
}

/** Whether the gateway created this workflow for the policy (its name and filter are the ones workflowCreate gives): the only kind it deletes. */
export function isGatewayWorkflow(workflow: NotificationWorkflow, policyId: number): boolean {
  return workflow.name === policyWorkflowName(policyId) && isOwnPolicyFilter(workflow.issuesFilter.predicates, policyId);
}

/** A destination configuration as input: its channel and, when NerdGraph had them, its settings, unchanged. */
function configurationInput(configuration: NotificationWorkflow['destinationConfigurations'][number]): Record<string, unknown> {
  return {
    channelId: configuration.channelId,
    ...(configuration.notificationTriggers != null && { notificationTriggers: [...configuration.notificationTriggers] }),
    ...(configuration.updateOriginalMessage != null && { updateOriginalMessage: configuration.updateOriginalMessage }),
  };
}

/**
 * A workflow mutation's variables: its channels replaced by `channelIds` (update), or a new
 * workflow for the policy (create). NerdGraph replaces the whole list, so every channel kept is
 * sent with its settings (notificationTriggers, updateOriginalMessage) as read; a new one bare.
 */
export function workflowUpdate(accountId: number, workflow: NotificationWorkflow, channelIds: readonly string[]): Record<string, unknown> {
  const existing = new Map(workflow.destinationConfigurations.map((configuration) => [configuration.channelId, configuration]));
  return {
    accountId,
    workflow: {
      id: workflow.id,
      destinationConfigurations: channelIds.map((channelId) => {
        const kept = existing.get(channelId);
        return kept ? configurationInput(kept) : { channelId };
      }),
    },
  };
}

export function workflowCreate(accountId: number, policyId: number, channelIds: readonly string[]): Record<string, unknown> {
  return {
    accountId,
    workflow: {
      name: policyWorkflowName(policyId),
      workflowEnabled: true,
      mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
      destinationConfigurations: channelIds.map((channelId) => ({ channelId })),
      issuesFilter: {
        name: `policy ${policyId}`,
        type: 'FILTER',
        predicates: [{ attribute: POLICY_PREDICATE.attribute, operator: POLICY_PREDICATE.operator, values: [String(policyId)] }],
      },
    },
  };
}

const WorkflowPayload = z.object({ workflow: z.object({ id: z.string() }).nullable(), errors: z.array(z.object({ description: z.string(), type: z.string() })) });
const DeletePayload = z.object({ id: z.string().nullable(), errors: z.array(z.object({ description: z.string(), type: z.string() })) });

const MAX_DETAIL = 200;

/**
 * A workflow step's payload: refused (422, "not written" only when it was the first step) when
 * it lists errors; otherwise it must prove the change: the workflow's id (`expectedId`, the one
 * updated or deleted; any id for a create). No error and no proof (`{workflow: null, errors: []}`,
 * a delete's `{id: null}`, another id) is an unknown outcome: the runner answers the mapping's
 * unconfirmed title. Returns the workflow id.
 */
type WorkflowField = 'aiWorkflowsCreateWorkflow' | 'aiWorkflowsUpdateWorkflow' | 'aiWorkflowsDeleteWorkflow';
// One schema per field, built once (zod compiles a schema on its first parse).
const WORKFLOW_ANSWERS: Record<WorkflowField, z.ZodType<Record<string, unknown>>> = {
  aiWorkflowsCreateWorkflow: z.object({ aiWorkflowsCreateWorkflow: WorkflowPayload }),
  aiWorkflowsUpdateWorkflow: z.object({ aiWorkflowsUpdateWorkflow: WorkflowPayload }),
  aiWorkflowsDeleteWorkflow: z.object({ aiWorkflowsDeleteWorkflow: DeletePayload }),
};

export function checkWorkflowPayload(payload: unknown, field: 'aiWorkflowsCreateWorkflow' | 'aiWorkflowsUpdateWorkflow' | 'aiWorkflowsDeleteWorkflow', operation: string, expectedId?: string): string {
  const schema = WORKFLOW_ANSWERS[field];
  const answer = parseAnswer(schema, payload, operation)[field] as { errors: Array<{ description: string; type: string }>; workflow?: { id: string } | null; id?: string | null };
  const [first] = answer.errors;
  if (first) throw writeRefused(422, `New Relic refused the workflow change: ${first.type}: ${first.description.slice(0, MAX_DETAIL)}`);
  const id = field === 'aiWorkflowsDeleteWorkflow' ? answer.id : answer.workflow?.id;
  if (id === null || id === undefined || id === '') throw new UpstreamError('upstream_failure', `${field} answered no error and no workflow id`);
  if (expectedId !== undefined && id !== expectedId) throw new UpstreamError('upstream_failure', `${field} answered another workflow's id`);
  return id;
}

/** What the mappings of this family share in their documentation. */
export const channelGaps = (prefix: string): KnownGap[] => [
  { description: 'Channel ids are derived from NerdGraph notification channel ids (channelV2Id), not the ids v2 had; ids stored from the real v2 API will not match.' },
  {
    path: `${prefix}.configuration.service_key`,
    description: 'Secrets (PagerDuty service_key, webhook auth_password) go to NerdGraph as secure values it never reads back: the answer shows null where v2 echoed them (and they never reach logs).',
  },
  { path: `${prefix}.configuration.auth_password`, description: 'Webhook auth_password: sent as the destination\'s basic-auth password (SecureValue), never read back; shown as null.' },
  { description: 'NerdGraph channel types v2 had no name for (Jira, ServiceNow, Microsoft Teams, EventBridge, ...) are not listed.' },
  { description: 'opsgenie and victorops channels have no NerdGraph equivalent: creating one is refused (422) with the title saying so.' },
];

export const CHANNEL_ASSUMPTIONS: readonly string[] = [
  XML_ASSUMPTION,
  'v2 types map to NerdGraph channel types: email EMAIL, slack SLACK_LEGACY (SLACK lists as slack too), webhook WEBHOOK, pagerduty PAGERDUTY_SERVICE_INTEGRATION (PAGERDUTY_ACCOUNT_INTEGRATION lists as pagerduty), user MOBILE_PUSH (UNCONFIRMED; no probe: the route comparison of /v2/alerts_channels shows it for the types the account has).',
  'Configuration keys map to properties: destination email (recipients), url (slack url, webhook base_url), userId (user_id); channel includeJsonAttachment, channel (slack), payloadType, payload, headers (UNCONFIRMED keys; no probe: the route comparison of /v2/alerts_channels shows them for the types the account has). Every key of the type is shown, null when unset; headers and payload sent as objects are kept as JSON text.',
  'A policy is linked to a channel by a workflow whose issues filter holds labels.policyIds EXACTLY_MATCHES [policy id] (UNCONFIRMED attribute; no probe: the route comparison of /v2/alerts_channels shows the links where workflows bind policies); workflows with other filters link no policy.',
  `Page size ${CHANNELS_PAGE_SIZE}, channels ordered by their (derived) id.`,
];

export const channelFields = (prefix: string): FieldNote[] => [
  { field: `${prefix}.id`, fidelity: 'approximate', source: 'channelV2Id(AiNotificationsChannel.id): a stable integer, not the id v2 had' },
  { field: `${prefix}.name`, fidelity: 'exact', source: 'AiNotificationsChannel.name' },
  { field: `${prefix}.type`, fidelity: 'approximate', source: 'AiNotificationsChannel.type mapped to the v2 type names' },
  { field: `${prefix}.configuration`, fidelity: 'approximate', source: 'channel and destination properties, destination basic-auth user; secrets null' },
  { field: `${prefix}.links.policy_ids`, fidelity: 'approximate', source: 'policy ids of the workflows routing to the channel (labels.policyIds EXACTLY_MATCHES predicates)' },
];
