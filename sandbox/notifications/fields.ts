/**
 * The NerdGraph face's reads of the notification store: `Account.aiNotifications { channels,
 * destinations }` and `Account.aiWorkflows { workflows }`, in NerdGraph's shapes, 100 per page
 * with opaque cursors bound to the list, account and filters, and `filters` honoured
 * (`Account.alerts.policy` is ai-issues-fields.ts's).
 */
import { invalidInput } from '../nerdgraph-errors.ts';
import { fnv1a32 } from '../ids.ts';
import type { SandboxData } from '../model.ts';
import type { PropertyInput } from '../policy-workflows.ts';
import { WORKFLOW_DESTINATION_TYPE, type SandboxChannel, type SandboxDestination, type SandboxNotifications, type SandboxWorkflow } from './model.ts';
import { notificationsOf } from './store.ts';

/** NerdGraph's page size for channels, destinations and workflows in the sandbox. */
export const NOTIFICATIONS_PAGE_SIZE = 100;
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

export function channelView(channel: SandboxChannel) {
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

export function destinationView(destination: SandboxDestination) {
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

export function workflowView(store: SandboxNotifications, workflow: SandboxWorkflow) {
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

export const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

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
    // Account.alerts (policy, policiesSearch, nrqlConditionsSearch) is served by ai-issues-fields.ts's alertsFields.
  };
}
