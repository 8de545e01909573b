/**
 * The sandbox's notification world, in NerdGraph's shape: destinations (where alerts go),
 * channels on them (what is sent), and workflows that route issues of alert policies to
 * channels. Both faces read and write it: the NerdGraph face as `aiNotifications` /
 * `aiWorkflows` (resolvers below), the legacy face as REST v2's `alerts_channels` and
 * `alerts_policy_channels` (legacy/notifications.ts), so a write through either is seen by both.
 *
 * A policy is bound to channels by a workflow whose issues filter holds the predicate
 * `labels.policyIds EXACTLY_MATCHES [<policy id>]` (the attribute is UNCONFIRMED,
 * routes-next.md §5.5); workflows with other filters route nothing v2 can show.
 *
 * The store is generated on first use from the world (its accounts, their alert policies, the
 * generation time), from its own random stream, so adding it changed no other value, and two
 * sandboxes built alike hold the same channels with the same ids.
 */
import { createRandom } from './data.ts';
import type { SandboxData } from './model.ts';
import { fnv1a32 } from './ids.ts';
import { POLICY_PREDICATE, workflowNameForPolicy as policyWorkflowName, type PropertyInput } from './policy-workflows.ts';
import { forbidden, invalidInput, type SandboxRequestContext } from './actor.ts';

export interface SandboxDestination {
  accountId: number;
  id: string;
  name: string;
  type: string;
  properties: PropertyInput[];
  /** Credentials as given; the NerdGraph face never shows the secret, only the legacy face does. */
  auth: { type: 'TOKEN'; token: string } | { type: 'BASIC'; user: string; password: string } | null;
  createdAt: number;
  updatedAt: number;
}

export interface SandboxChannel {
  accountId: number;
  id: string;
  name: string;
  type: string;
  product: string;
  destinationId: string;
  properties: PropertyInput[];
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface Predicate {
  attribute: string;
  operator: string;
  values: string[];
}

export interface SandboxWorkflow {
  accountId: number;
  id: string;
  name: string;
  enabled: boolean;
  channelIds: string[];
  /**
   * Per channel, its destination configuration's settings when set (NerdGraph's
   * notificationTriggers, updateOriginalMessage); absent: NerdGraph's defaults (null). An
   * update's destinationConfigurations replace them with what it sends.
   */
  settings?: Record<string, DestinationSettings>;
  filterId: string;
  filterName: string;
  predicates: Predicate[];
  mutingRulesHandling: string;
  createdAt: number;
  updatedAt: number;
}

export interface DestinationSettings {
  notificationTriggers: string[] | null;
  updateOriginalMessage: boolean | null;
}

export interface SandboxNotifications {
  destinations: SandboxDestination[];
  channels: SandboxChannel[];
  workflows: SandboxWorkflow[];
  /** Behind the ids of created objects: the same sequence of writes gives the same ids. */
  sequence: number;
}

/** Mixed into the stream's seed so notifications draw from their own stream. */
const NOTIFICATIONS_STREAM = 0x0c4a_77e1;
/** Channels v2 can show, per account: the primary account's fill three pages of 50 and part of a fourth. */
export const CHANNEL_COUNTS = { primary: 160, other: 8 } as const;
/** NerdGraph's page size for channels, destinations and workflows in the sandbox. */
export const NOTIFICATIONS_PAGE_SIZE = 100;
/** Policies of the primary account bound to channels by a workflow (the first ones, some skipped). */
const BOUND_POLICIES = 80;

/** Channel type -> destination type, and which of them workflows accept (AiWorkflowsDestinationType). */
const DESTINATION_OF: Record<string, string> = {
  EMAIL: 'EMAIL',
  SLACK_LEGACY: 'SLACK_LEGACY',
  SLACK: 'SLACK',
  WEBHOOK: 'WEBHOOK',
  PAGERDUTY_SERVICE_INTEGRATION: 'PAGERDUTY_SERVICE_INTEGRATION',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'PAGERDUTY_ACCOUNT_INTEGRATION',
  MOBILE_PUSH: 'MOBILE_PUSH',
  JIRA_CLASSIC: 'JIRA',
  MICROSOFT_TEAMS: 'MICROSOFT_TEAMS',
};
const WORKFLOW_DESTINATION_TYPE: Record<string, string> = {
  EMAIL: 'EMAIL',
  SLACK_LEGACY: 'SLACK_LEGACY',
  SLACK: 'SLACK',
  WEBHOOK: 'WEBHOOK',
  PAGERDUTY_SERVICE_INTEGRATION: 'PAGERDUTY_SERVICE_INTEGRATION',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'PAGERDUTY_ACCOUNT_INTEGRATION',
  JIRA_CLASSIC: 'JIRA',
  MICROSOFT_TEAMS: 'MICROSOFT_TEAMS',
};

const stores = new WeakMap<SandboxData, SandboxNotifications>();

/** The world's notification store (generated on first use). */
export function notificationsOf(data: SandboxData): SandboxNotifications {
  let store = stores.get(data);
  if (!store) stores.set(data, (store = generateNotifications(data)));
  return store;
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

function uuidOf(random: Random): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const TEAMS = ['Checkout', 'Billing', 'Platform', 'Search', 'Data', 'Storefront', 'Mobile', 'Payments'];
const AWKWARD_NAMES = ['Ops "pager" rota', "O'Brien <on-call> & friends", 'Café ünïcode 🚨 alerts', 'Back\\slash/route'];

function generateNotifications(data: SandboxData): SandboxNotifications {
  const seed = fnv1a32(`${data.generatedAt}|${data.accounts.map((a) => a.id).join(',')}`) ^ NOTIFICATIONS_STREAM;
  const random = createRandom(seed >>> 0);
  const store: SandboxNotifications = { destinations: [], channels: [], workflows: [], sequence: 0 };
  const DAY = 86_400_000;
  const at = (): number => data.generatedAt - Math.floor(random() * 400 * DAY);
  data.accounts.forEach((account, accountIndex) => {
    const primary = accountIndex === 0;
    const count = primary ? CHANNEL_COUNTS.primary : CHANNEL_COUNTS.other;
    const mine: SandboxChannel[] = [];
    const add = (type: string, name: string, destinationProperties: PropertyInput[], channelProperties: PropertyInput[], auth: SandboxDestination['auth']): SandboxChannel => {
      const createdAt = at();
      const destination: SandboxDestination = { accountId: account.id, id: uuidOf(random), name, type: DESTINATION_OF[type] as string, properties: destinationProperties, auth, createdAt, updatedAt: createdAt };
      store.destinations.push(destination);
      const channel: SandboxChannel = {
        accountId: account.id,
        id: uuidOf(random),
        name,
        type,
        product: 'IINT',
        destinationId: destination.id,
        properties: channelProperties,
        active: random() < 0.95,
        createdAt,
        updatedAt: createdAt,
      };
      store.channels.push(channel);
      mine.push(channel);
      return channel;
    };
    for (let i = 0; i < count; i++) {
      const team = pick(random, TEAMS);
      const name = primary && i < AWKWARD_NAMES.length ? (AWKWARD_NAMES[i] as string) : `${team} ${i + 1}`;
      const roll = random();
      if (roll < 0.35) {
        add('EMAIL', name, [{ key: 'email', value: `${team.toLowerCase()}@example.com${random() < 0.4 ? `,oncall-${i}@example.com` : ''}` }], [{ key: 'includeJsonAttachment', value: random() < 0.3 ? 'true' : 'false' }], null);
      } else if (roll < 0.55) {
        add('SLACK_LEGACY', name, [{ key: 'url', value: `https://hooks.slack.com/services/T0${i}/B0${i}/sandbox${i}` }], random() < 0.7 ? [{ key: 'channel', value: `#${team.toLowerCase()}-alerts` }] : [], null);
      } else if (roll < 0.75) {
        const auth: SandboxDestination['auth'] = random() < 0.4 ? { type: 'BASIC', user: `hook-${i}`, password: `sandbox-secret-${i}` } : null;
        const props: PropertyInput[] = [{ key: 'payloadType', value: 'application/json' }];
        if (random() < 0.5) props.push({ key: 'payload', value: JSON.stringify({ account_id: '$ACCOUNT_ID', condition: '$CONDITION_NAME' }) });
        if (random() < 0.3) props.push({ key: 'headers', value: JSON.stringify({ 'X-Team': team }) });
        add('WEBHOOK', name, [{ key: 'url', value: `https://hooks.example.com/${team.toLowerCase()}/${i}` }], props, auth);
      } else if (roll < 0.88) {
        add('PAGERDUTY_SERVICE_INTEGRATION', name, [], [], { type: 'TOKEN', token: `pd-sandbox-key-${i}` });
      } else {
        add('MOBILE_PUSH', name, [{ key: 'userId', value: String(2_680_000 + i) }], [], null);
      }
    }
    // Channels v2 has no type for: NerdGraph lists them, v2 never shows them.
    const others = primary
      ? [add('JIRA_CLASSIC', 'Jira tickets', [{ key: 'url', value: 'https://example.atlassian.net' }], [{ key: 'project', value: 'OPS' }], null), add('MICROSOFT_TEAMS', 'Teams room', [], [], null)]
      : [];
    const routable = mine.filter((channel) => channel.type !== 'MOBILE_PUSH' && !others.includes(channel));
    const policies = data.alerts.policies.filter((policy) => policy.accountId === account.id).slice(0, primary ? BOUND_POLICIES : 4);
    for (const [index, policy] of policies.entries()) {
      if (index % 4 === 3) continue; // some policies have no channel
      const bound = new Set<string>();
      const wanted = 1 + Math.floor(random() * 3);
      while (bound.size < wanted && routable.length > 0) bound.add(pick(random, routable).id);
      const createdAt = at();
      const channelIds = [...bound];
      store.workflows.push({
        accountId: account.id,
        id: uuidOf(random),
        name: policyWorkflowName(policy.id),
        enabled: true,
        channelIds,
        // Every other policy's first channel notifies on activation and close only, without editing its first message.
        ...(index % 2 === 0 && channelIds[0] !== undefined && { settings: { [channelIds[0]]: { notificationTriggers: ['ACTIVATED', 'CLOSED'], updateOriginalMessage: false } } }),
        filterId: uuidOf(random),
        filterName: `policy ${policy.id}`,
        predicates: [{ attribute: POLICY_PREDICATE.attribute, operator: POLICY_PREDICATE.operator, values: [String(policy.id)] }],
        mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
        createdAt,
        updatedAt: createdAt,
      });
    }
    if (primary) {
      // Workflows that route by something other than a policy: v2 shows nothing of them.
      for (const priority of ['CRITICAL', 'HIGH']) {
        const createdAt = at();
        store.workflows.push({
          accountId: account.id,
          id: uuidOf(random),
          name: `All ${priority.toLowerCase()} issues`,
          enabled: true,
          channelIds: [pick(random, routable).id, ...others.map((channel) => channel.id)],
          filterId: uuidOf(random),
          filterName: `priority ${priority}`,
          predicates: [{ attribute: 'priority', operator: 'EQUAL', values: [priority] }],
          mutingRulesHandling: 'DONT_NOTIFY_FULLY_MUTED_ISSUES',
          createdAt,
          updatedAt: createdAt,
        });
      }
    }
  });
  return store;
}

// ---------------------------------------------------------------------------------------------
// Writes both faces apply (each validates first).

/** A new id: the same sequence of writes on two sandboxes built alike gives the same ids. */
export function newId(store: SandboxNotifications, kind: string): string {
  store.sequence += 1;
  const hex = [1, 2, 3, 4].map((part) => fnv1a32(`${kind}|${store.sequence}|${part}`).toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-9${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function addDestination(store: SandboxNotifications, fields: Omit<SandboxDestination, 'id' | 'createdAt' | 'updatedAt'>, now: number): SandboxDestination {
  const destination: SandboxDestination = { ...fields, id: newId(store, 'destination'), createdAt: now, updatedAt: now };
  store.destinations.push(destination);
  return destination;
}

export function addChannel(store: SandboxNotifications, fields: Omit<SandboxChannel, 'id' | 'createdAt' | 'updatedAt' | 'active'>, now: number): SandboxChannel {
  const channel: SandboxChannel = { ...fields, id: newId(store, 'channel'), active: true, createdAt: now, updatedAt: now };
  store.channels.push(channel);
  return channel;
}

/** Removes a channel, and drops it from every workflow that routes to it. */
export function removeChannel(store: SandboxNotifications, channel: SandboxChannel, now: number): void {
  store.channels.splice(store.channels.indexOf(channel), 1);
  for (const workflow of store.workflows) {
    if (workflow.channelIds.includes(channel.id)) {
      workflow.channelIds = workflow.channelIds.filter((id) => id !== channel.id);
      workflow.updatedAt = now;
    }
  }
}

export function addWorkflow(store: SandboxNotifications, fields: Omit<SandboxWorkflow, 'id' | 'filterId' | 'createdAt' | 'updatedAt'>, now: number): SandboxWorkflow {
  const workflow: SandboxWorkflow = { ...fields, id: newId(store, 'workflow'), filterId: newId(store, 'filter'), createdAt: now, updatedAt: now };
  store.workflows.push(workflow);
  return workflow;
}

export function removeWorkflow(store: SandboxNotifications, workflow: SandboxWorkflow): void {
  store.workflows.splice(store.workflows.indexOf(workflow), 1);
}

/** Channels no workflow routes to any more, among `candidates`, deleted (NerdGraph's deleteUnusedChannels / deleteChannels). */
function deleteUnused(store: SandboxNotifications, candidates: readonly string[], now: number): void {
  for (const id of candidates) {
    if (store.workflows.some((workflow) => workflow.channelIds.includes(id))) continue;
    const channel = store.channels.find((c) => c.id === id);
    if (channel) removeChannel(store, channel, now);
  }
}

/** The policy ids each channel is bound to, by channel id (inverting the workflows' policy predicates). */
export function policyIdsByChannel(store: SandboxNotifications, accountId: number): Map<string, number[]> {
  const byChannel = new Map<string, Set<number>>();
  for (const workflow of store.workflows) {
    // A disabled workflow notifies nobody: it links no policy.
    if (workflow.accountId !== accountId || !workflow.enabled) continue;
    const policies = workflow.predicates
      .filter((p) => p.attribute === POLICY_PREDICATE.attribute && p.operator === POLICY_PREDICATE.operator)
      .flatMap((p) => p.values)
      .filter((value) => /^[1-9]\d{0,14}$/.test(value.trim()))
      .map((value) => Number(value.trim()));
    for (const channelId of workflow.channelIds) {
      let set = byChannel.get(channelId);
      if (!set) byChannel.set(channelId, (set = new Set()));
      for (const policy of policies) set.add(policy);
    }
  }
  return new Map([...byChannel].map(([id, set]) => [id, [...set].sort((a, b) => a - b)]));
}

// ---------------------------------------------------------------------------------------------
// NerdGraph face: Account.aiNotifications, Account.aiWorkflows (Account.alerts.policy: ai-issues.ts).

const iso = (ms: number): string => new Date(ms).toISOString();

function pageOf<T>(items: readonly T[], cursor: string | null | undefined, salt: string): { page: T[]; nextCursor: string | null } {
  let offset = 0;
  if (cursor !== undefined && cursor !== null) {
    const match = /^(\d{1,7})\.([0-9a-f]{8})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!match || fnv1a32(`${salt}|${match[1]}`).toString(16).padStart(8, '0') !== match[2]) throw invalidInput('Invalid cursor');
    offset = Number(match[1]);
  }
  const page = items.slice(offset, offset + NOTIFICATIONS_PAGE_SIZE);
  const next = offset + NOTIFICATIONS_PAGE_SIZE;
  const nextCursor = next < items.length ? Buffer.from(`${next}.${fnv1a32(`${salt}|${next}`).toString(16).padStart(8, '0')}`, 'utf8').toString('base64url') : null;
  return { page, nextCursor };
}

const propertiesView = (properties: readonly PropertyInput[]) => properties.map((p) => ({ key: p.key, value: p.value, label: null, displayValue: null }));

function channelView(channel: SandboxChannel) {
  return {
    accountId: channel.accountId,
    active: channel.active,
    createdAt: iso(channel.createdAt),
    destinationId: channel.destinationId,
    id: channel.id,
    name: channel.name,
    product: channel.product,
    properties: propertiesView(channel.properties),
    status: 'DEFAULT',
    type: channel.type,
    updatedAt: iso(channel.updatedAt),
    updatedBy: 1,
  };
}

function destinationView(destination: SandboxDestination) {
  const auth = destination.auth;
  return {
    accountId: destination.accountId,
    active: true,
    auth:
      auth === null
        ? null
        : auth.type === 'BASIC'
          ? { __typename: 'AiNotificationsBasicAuth', authType: 'BASIC', user: auth.user }
          : { __typename: 'AiNotificationsTokenAuth', authType: 'TOKEN', prefix: '' },
    createdAt: iso(destination.createdAt),
    id: destination.id,
    name: destination.name,
    properties: propertiesView(destination.properties),
    status: 'DEFAULT',
    type: destination.type,
    updatedAt: iso(destination.updatedAt),
    updatedBy: 1,
  };
}

function workflowView(store: SandboxNotifications, workflow: SandboxWorkflow) {
  return {
    accountId: workflow.accountId,
    createdAt: iso(workflow.createdAt),
    destinationConfigurations: workflow.channelIds.flatMap((channelId) => {
      const channel = store.channels.find((c) => c.id === channelId);
      const settings = workflow.settings?.[channelId];
      return channel
        ? [{ channelId, name: channel.name, type: WORKFLOW_DESTINATION_TYPE[channel.type] ?? 'WEBHOOK', notificationTriggers: settings?.notificationTriggers ?? null, updateOriginalMessage: settings?.updateOriginalMessage ?? null }]
        : [];
    }),
    destinationsEnabled: true,
    enrichmentsEnabled: false,
    id: workflow.id,
    issuesFilter: { accountId: workflow.accountId, id: workflow.filterId, name: workflow.filterName, predicates: workflow.predicates, type: 'FILTER' },
    mutingRulesHandling: workflow.mutingRulesHandling,
    name: workflow.name,
    updatedAt: iso(workflow.updatedAt),
    workflowEnabled: workflow.enabled,
  };
}

interface ChannelFilters {
  active?: boolean | null;
  destinationId?: string | null;
  id?: string | null;
  ids?: readonly string[] | null;
  name?: string | null;
  type?: string | null;
}

interface DestinationFilters {
  active?: boolean | null;
  exactName?: string | null;
  id?: string | null;
  ids?: readonly string[] | null;
  name?: string | null;
  type?: string | null;
}

interface WorkflowFilters {
  channelId?: string | null;
  id?: string | null;
  name?: string | null;
  nameLike?: string | null;
  workflowEnabled?: boolean | null;
}

const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** A list filter's equality test: an absent filter value matches everything. */
const unlessGiven = <T>(wanted: T | null | undefined, actual: T): boolean => !given(wanted) || actual === wanted;

/** One page of an account's matching list items, as NerdGraph's list types answer (the cursor salted by list, account and filters). */
function listPage<T, V>(list: string, accountId: number, filters: object, matching: readonly T[], cursor: string | null | undefined, view: (item: T) => V) {
  const { page, nextCursor } = pageOf(matching, cursor, `${list}|${accountId}|${JSON.stringify(filters)}`);
  return { entities: page.map(view), nextCursor, totalCount: matching.length };
}

/** The fields an Account object gets from this module (spread into actor.ts's account()). */
export function notificationAccountFields(data: SandboxData, accountId: number) {
  const store = notificationsOf(data);
  return {
    aiNotifications: {
      channels: ({ cursor, filters }: { cursor?: string | null; filters?: ChannelFilters | null }) => {
        const f = filters ?? {};
        const matching = store.channels.filter(
          (c) =>
            c.accountId === accountId &&
            unlessGiven(f.id, c.id) &&
            (!given(f.ids) || f.ids.includes(c.id)) &&
            unlessGiven(f.type, c.type) &&
            unlessGiven(f.destinationId, c.destinationId) &&
            unlessGiven(f.active, c.active) &&
            (!given(f.name) || c.name.toLowerCase().includes(f.name.toLowerCase())),
        );
        return { ...listPage('channels', accountId, f, matching, cursor, channelView), error: null };
      },
      destinations: ({ cursor, filters }: { cursor?: string | null; filters?: DestinationFilters | null }) => {
        const f = filters ?? {};
        const matching = store.destinations.filter(
          (d) =>
            d.accountId === accountId &&
            unlessGiven(f.id, d.id) &&
            (!given(f.ids) || f.ids.includes(d.id)) &&
            unlessGiven(f.type, d.type) &&
            unlessGiven(f.exactName, d.name) &&
            (!given(f.active) || f.active) &&
            (!given(f.name) || d.name.toLowerCase().includes(f.name.toLowerCase())),
        );
        return { ...listPage('destinations', accountId, f, matching, cursor, destinationView), error: null };
      },
    },
    aiWorkflows: {
      workflows: ({ cursor, filters }: { cursor?: string | null; filters?: WorkflowFilters | null }) => {
        const f = filters ?? {};
        const matching = store.workflows.filter(
          (w) =>
            w.accountId === accountId &&
            unlessGiven(f.id, w.id) &&
            (!given(f.channelId) || w.channelIds.includes(f.channelId)) &&
            unlessGiven(f.name, w.name) &&
            (!given(f.nameLike) || w.name.toLowerCase().includes(f.nameLike.toLowerCase())) &&
            unlessGiven(f.workflowEnabled, w.enabled),
        );
        return listPage('workflows', accountId, f, matching, cursor, (w) => workflowView(store, w));
      },
    },
    // Account.alerts (policy, policiesSearch, nrqlConditionsSearch) is served by ai-issues.ts's alertsFields.
  };
}

// ---------------------------------------------------------------------------------------------
// Mutations

interface PropertyArgument {
  key: string;
  value: string;
}

interface DestinationInput {
  name: string;
  type: string;
  properties: readonly PropertyArgument[];
  auth?: {
    type: string;
    basic?: { user: string; password: string } | null;
    token?: { token: string; prefix?: string | null } | null;
  } | null;
}

interface ChannelInput {
  destinationId: string;
  name: string;
  product: string;
  type: string;
  properties: readonly PropertyArgument[];
}

interface PredicateInput {
  attribute: string;
  operator: string;
  values: readonly string[];
}

interface FilterInput {
  name?: string | null;
  type: string;
  predicates: readonly PredicateInput[];
}

interface WorkflowInput {
  name?: string | null;
  workflowEnabled?: boolean | null;
  mutingRulesHandling?: string | null;
  destinationConfigurations?: ReadonlyArray<{ channelId: string; notificationTriggers?: readonly string[] | null; updateOriginalMessage?: boolean | null }> | null;
  issuesFilter?: FilterInput | null;
}

interface UpdateWorkflowInput extends Omit<WorkflowInput, 'issuesFilter'> {
  id: string;
  issuesFilter?: { filterInput: FilterInput; id?: string | null } | null;
}

/** The settings a workflow input's destinationConfigurations carry: what it sends replaces what was (a configuration without them: NerdGraph's defaults). */
function settingsOf(configurations: NonNullable<WorkflowInput['destinationConfigurations']>): Record<string, DestinationSettings> {
  const settings: Record<string, DestinationSettings> = {};
  for (const configuration of configurations) {
    const triggers = configuration.notificationTriggers ?? null;
    const update = configuration.updateOriginalMessage ?? null;
    if (triggers !== null || update !== null) settings[configuration.channelId] = { notificationTriggers: triggers === null ? null : [...triggers], updateOriginalMessage: update };
  }
  return settings;
}

const responseError = (type: string, description: string) => ({ __typename: 'AiNotificationsResponseError', type, description, details: description });

/** Properties a destination type needs. */
const REQUIRED_DESTINATION_PROPERTY: Record<string, string> = { EMAIL: 'email', WEBHOOK: 'url', SLACK_LEGACY: 'url', MOBILE_PUSH: 'userId' };

/** The notification mutation fields of one request, for graphql-js's rootValue (counted in graphql.ts). */
export function notificationMutationRoot(data: SandboxData, context: SandboxRequestContext, now: () => number): Record<string, (args: never) => unknown> {
  const store = notificationsOf(data);
  const visible = new Set(context.accountIds);
  const writable = (accountId: number): void => {
    if (!visible.has(accountId) || !data.accounts.some((account) => account.id === accountId)) throw forbidden(`You are not authorized to query account ${accountId}`);
  };
  const cleanProperties = (properties: readonly PropertyArgument[]): PropertyInput[] => properties.map((p) => ({ key: p.key, value: p.value }));

  /** Workflow validation shared by create and update: null when fine, else the payload error. */
  const workflowProblem = (accountId: number, input: WorkflowInput): { type: string; description: string } | null => {
    if (given(input.name) && input.name.trim() === '') return { type: 'VALIDATION_ERROR', description: 'name must not be blank' };
    for (const configuration of input.destinationConfigurations ?? []) {
      const channel = store.channels.find((c) => c.id === configuration.channelId && c.accountId === accountId);
      if (!channel) return { type: 'CHANNEL_NOT_FOUND', description: `Channel ${configuration.channelId} not found` };
      if (WORKFLOW_DESTINATION_TYPE[channel.type] === undefined) return { type: 'UNSUPPORTED_CHANNEL_TYPE', description: `Channels of type ${channel.type} cannot be used in a workflow` };
    }
    if (input.issuesFilter && input.issuesFilter.predicates.some((p) => p.attribute.trim() === '')) return { type: 'INVALID_PARAMETER', description: 'predicate attribute must not be blank' };
    return null;
  };

  return {
    aiNotificationsCreateDestination: ({ accountId, destination }: { accountId: number; destination: DestinationInput }) => {
      writable(accountId);
      if (destination.name.trim() === '') return { destination: null, error: responseError('INVALID_PARAMETER', 'name must not be blank') };
      const needed = REQUIRED_DESTINATION_PROPERTY[destination.type];
      if (needed !== undefined && !destination.properties.some((p) => p.key === needed && p.value.trim() !== '')) {
        return { destination: null, error: responseError('MISSING_PARAMETERS', `property ${needed} is required for ${destination.type} destinations`) };
      }
      const auth = destination.auth;
      let stored: SandboxDestination['auth'] = null;
      if (auth) {
        if (auth.type === 'BASIC' && auth.basic) stored = { type: 'BASIC', user: auth.basic.user, password: auth.basic.password };
        else if (auth.type === 'TOKEN' && auth.token) stored = { type: 'TOKEN', token: auth.token.token };
        else return { destination: null, error: responseError('INVALID_PARAMETER', `auth of type ${auth.type} needs its ${auth.type.toLowerCase()} credentials`) };
      }
      if (destination.type === 'PAGERDUTY_SERVICE_INTEGRATION' && stored?.type !== 'TOKEN') {
        return { destination: null, error: responseError('MISSING_PARAMETERS', 'a PagerDuty service integration needs a token') };
      }
      const created = addDestination(store, { accountId, name: destination.name, type: destination.type, properties: cleanProperties(destination.properties), auth: stored }, now());
      return { destination: destinationView(created), error: null };
    },

    aiNotificationsCreateChannel: ({ accountId, channel }: { accountId: number; channel: ChannelInput }) => {
      writable(accountId);
      const destination = store.destinations.find((d) => d.id === channel.destinationId && d.accountId === accountId);
      if (!destination) return { channel: null, error: responseError('INVALID_PARAMETER', `Destination ${channel.destinationId} not found`) };
      if (DESTINATION_OF[channel.type] !== destination.type) {
        return { channel: null, error: responseError('INVALID_PARAMETER', `A ${channel.type} channel needs a ${DESTINATION_OF[channel.type] ?? 'matching'} destination, not ${destination.type}`) };
      }
      if (channel.name.trim() === '') return { channel: null, error: responseError('INVALID_CHANNEL_NAME', 'name must not be blank') };
      const created = addChannel(store, { accountId, name: channel.name, type: channel.type, product: channel.product, destinationId: destination.id, properties: cleanProperties(channel.properties) }, now());
      return { channel: channelView(created), error: null };
    },

    aiNotificationsDeleteChannel: ({ accountId, channelId }: { accountId: number; channelId: string }) => {
      writable(accountId);
      const channel = store.channels.find((c) => c.id === channelId && c.accountId === accountId);
      if (!channel) return { ids: null, error: responseError('INVALID_PARAMETER', `Channel ${channelId} not found`) };
      removeChannel(store, channel, now());
      return { ids: [channel.id], error: null };
    },

    aiWorkflowsCreateWorkflow: ({ accountId, createWorkflowData: input }: { accountId: number; createWorkflowData: WorkflowInput & { name: string; mutingRulesHandling: string } }) => {
      writable(accountId);
      const problem = workflowProblem(accountId, input);
      if (problem) return { workflow: null, errors: [{ __typename: 'AiWorkflowsCreateResponseError', ...problem }] };
      const created = addWorkflow(
        store,
        {
          accountId,
          name: input.name,
          enabled: input.workflowEnabled ?? true,
          channelIds: [...new Set((input.destinationConfigurations ?? []).map((c) => c.channelId))],
          settings: settingsOf(input.destinationConfigurations ?? []),
          filterName: input.issuesFilter?.name ?? input.name,
          predicates: (input.issuesFilter?.predicates ?? []).map((p) => ({ attribute: p.attribute, operator: p.operator, values: [...p.values] })),
          mutingRulesHandling: input.mutingRulesHandling,
        },
        now(),
      );
      return { workflow: workflowView(store, created), errors: [] };
    },

    aiWorkflowsUpdateWorkflow: ({ accountId, deleteUnusedChannels, updateWorkflowData: input }: { accountId: number; deleteUnusedChannels: boolean; updateWorkflowData: UpdateWorkflowInput }) => {
      writable(accountId);
      const workflow = store.workflows.find((w) => w.id === input.id && w.accountId === accountId);
      if (!workflow) return { workflow: null, errors: [{ __typename: 'AiWorkflowsUpdateResponseError', type: 'INVALID_PARAMETER', description: `Workflow ${input.id} not found` }] };
      const filter = input.issuesFilter?.filterInput ?? null;
      const problem = workflowProblem(accountId, { ...input, issuesFilter: filter });
      if (problem) return { workflow: null, errors: [{ __typename: 'AiWorkflowsUpdateResponseError', ...problem }] };
      const before = workflow.channelIds;
      if (given(input.name)) workflow.name = input.name;
      if (given(input.workflowEnabled)) workflow.enabled = input.workflowEnabled;
      if (given(input.mutingRulesHandling)) workflow.mutingRulesHandling = input.mutingRulesHandling;
      if (given(input.destinationConfigurations)) {
        workflow.channelIds = [...new Set(input.destinationConfigurations.map((c) => c.channelId))];
        workflow.settings = settingsOf(input.destinationConfigurations);
      }
      if (filter) {
        workflow.predicates = filter.predicates.map((p) => ({ attribute: p.attribute, operator: p.operator, values: [...p.values] }));
        if (given(filter.name)) workflow.filterName = filter.name;
      }
      workflow.updatedAt = now();
      // NerdGraph's default: channels the workflow no longer uses are deleted with it.
      if (deleteUnusedChannels) deleteUnused(store, before.filter((id) => !workflow.channelIds.includes(id)), now());
      return { workflow: workflowView(store, workflow), errors: [] };
    },

    aiWorkflowsDeleteWorkflow: ({ accountId, deleteChannels, id }: { accountId: number; deleteChannels: boolean; id: string }) => {
      writable(accountId);
      const workflow = store.workflows.find((w) => w.id === id && w.accountId === accountId);
      if (!workflow) return { id: null, errors: [{ __typename: 'AiWorkflowsDeleteResponseError', type: 'INVALID_PARAMETER', description: `Workflow ${id} not found` }] };
      removeWorkflow(store, workflow);
      if (deleteChannels) deleteUnused(store, workflow.channelIds, now());
      return { id: workflow.id, errors: [] };
    },
  };
}
