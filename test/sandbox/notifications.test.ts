/**
 * The sandbox's notification world over its NerdGraph face (sandbox/notifications/):
 * aiNotifications channels and destinations, aiWorkflows workflows, alerts.policy, and the
 * mutations the alerts_channels translation sends, with the gateway's own documents
 * (the gateway's documents). Secrets never come back; NerdGraph's channel-deleting defaults apply.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { loadDocuments } from '../../src/upstream/documents.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { NOTIFICATIONS_PAGE_SIZE } from '../../sandbox/notifications/fields.ts';
import { CHANNEL_COUNTS } from '../../sandbox/notifications/seed.ts';
import { notificationsOf } from '../../sandbox/notifications/store.ts';

const DEMO = 'NRAK-SANDBOX-DEMO';
const PRIMARY_ID = 1000001;
const SECONDARY_ID = 1000002;
const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const documents = loadDocuments();

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox({ seed: 7, apmApps: 30, now: () => FIXED });
});

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { errorClass?: string } }>;
}

async function run(operation: string, variables: Record<string, unknown>, apiKey = DEMO): Promise<GraphqlBody> {
  const document = documents.get(operation);
  if (!document) throw new Error(`no document ${operation}`);
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query: document.text, variables }),
  });
  return (await response.json()) as GraphqlBody;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of GraphQL answers
type Loose = any;

const directory = (variables: Record<string, unknown> = {}) =>
  run('NotificationDirectory', { accountId: PRIMARY_ID, withChannels: true, withDestinations: true, withWorkflows: true, ...variables });

describe('sandbox aiNotifications / aiWorkflows', () => {
  it('lists channels, destinations and workflows in pages, with cursors', async () => {
    const first = (await directory()) as Loose;
    expect(first.errors).toBeUndefined();
    const account = first.data.actor.account;
    const channels = account.aiNotifications.channels;
    expect(channels.entities).toHaveLength(NOTIFICATIONS_PAGE_SIZE);
    expect(channels.totalCount).toBe(CHANNEL_COUNTS.primary + 2);
    expect(channels.nextCursor).toEqual(expect.any(String));
    expect(channels.entities.every((c: Loose) => c.accountId === PRIMARY_ID)).toBe(true);
    expect(account.aiWorkflows.workflows.entities.length).toBeGreaterThan(10);
    const second = (await directory({ channelCursor: channels.nextCursor, withDestinations: false, withWorkflows: false })) as Loose;
    const rest = second.data.actor.account.aiNotifications.channels;
    expect(rest.entities).toHaveLength(CHANNEL_COUNTS.primary + 2 - NOTIFICATIONS_PAGE_SIZE);
    expect(rest.nextCursor).toBeNull();
    expect(second.data.actor.account.aiNotifications.destinations).toBeUndefined();
    const bad = await directory({ channelCursor: 'bm90LWEtY3Vyc29y' });
    expect(bad.errors?.[0]?.message).toBe('Invalid cursor');
  });

  it('never shows a secret: basic auth shows its user, token auth nothing', async () => {
    const text = JSON.stringify(await directory());
    expect(text).not.toContain('sandbox-secret-');
    expect(text).not.toContain('pd-sandbox-key-');
    expect(text).toContain('"authType":"BASIC"');
  });

  it('reads an alert policy of the account, null for another account\'s', async () => {
    const policy = sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ID);
    const foreign = sandbox.data.alerts.policies.find((p) => p.accountId === SECONDARY_ID);
    const mine = (await directory({ withPolicy: true, policyId: String(policy?.id), withChannels: false, withDestinations: false, withWorkflows: false })) as Loose;
    expect(mine.data.actor.account.alerts.policy).toEqual({ id: String(policy?.id), name: policy?.name });
    const theirs = (await directory({ withPolicy: true, policyId: String(foreign?.id), withChannels: false, withDestinations: false, withWorkflows: false })) as Loose;
    expect(theirs.data.actor.account.alerts.policy).toBeNull();
  });

  it('creates a destination and a channel on it, counted once each; refusals are payload errors, not counted', async () => {
    const before = sandbox.writes();
    const destination = (await run('ChannelDestinationCreate', {
      accountId: PRIMARY_ID,
      destination: { name: 'Hook', type: 'WEBHOOK', properties: [{ key: 'url', value: 'https://example.com/h' }], auth: { type: 'BASIC', basic: { user: 'u', password: 'p4ss' } } },
    })) as Loose;
    const created = destination.data.aiNotificationsCreateDestination;
    expect(created.error).toBeNull();
    expect(created.destination.auth).toEqual({ authType: 'BASIC', user: 'u' });
    expect(JSON.stringify(destination)).not.toContain('p4ss');
    const channel = (await run('ChannelCreate', {
      accountId: PRIMARY_ID,
      channel: { name: 'Hook', type: 'WEBHOOK', product: 'IINT', destinationId: created.destination.id, properties: [{ key: 'payloadType', value: 'application/json' }] },
    })) as Loose;
    expect(channel.data.aiNotificationsCreateChannel.channel).toMatchObject({ name: 'Hook', type: 'WEBHOOK', destinationId: created.destination.id });
    const mismatch = (await run('ChannelCreate', {
      accountId: PRIMARY_ID,
      channel: { name: 'x', type: 'EMAIL', product: 'IINT', destinationId: created.destination.id, properties: [] },
    })) as Loose;
    expect(mismatch.data.aiNotificationsCreateChannel.error.type).toBe('INVALID_PARAMETER');
    const after = sandbox.writes();
    expect(after.nerdgraph.aiNotificationsCreateDestination).toBe((before.nerdgraph.aiNotificationsCreateDestination ?? 0) + 1);
    expect(after.nerdgraph.aiNotificationsCreateChannel).toBe((before.nerdgraph.aiNotificationsCreateChannel ?? 0) + 1);
  });

  it('refuses another account', async () => {
    const answer = await run('ChannelDelete', { accountId: 999, channelId: 'x' });
    expect(answer.errors?.[0]?.extensions?.errorClass).toBe('FORBIDDEN');
  });

  it('keeps channels when the gateway\'s documents unlink them (deleteUnusedChannels / deleteChannels false)', async () => {
    const store = notificationsOf(sandbox.data);
    const workflow = store.workflows.find((w) => w.accountId === PRIMARY_ID && w.channelIds.length > 0);
    if (!workflow) throw new Error('no workflow');
    const channels = [...workflow.channelIds];
    const updated = (await run('PolicyWorkflowUpdate', { accountId: PRIMARY_ID, workflow: { id: workflow.id, destinationConfigurations: [] } })) as Loose;
    expect(updated.data.aiWorkflowsUpdateWorkflow.errors).toEqual([]);
    expect(channels.every((id) => store.channels.some((c) => c.id === id))).toBe(true);
    const deleted = (await run('PolicyWorkflowDelete', { accountId: PRIMARY_ID, id: workflow.id })) as Loose;
    expect(deleted.data.aiWorkflowsDeleteWorkflow).toEqual({ id: workflow.id, errors: [] });
    expect(store.workflows.includes(workflow)).toBe(false);
    expect(channels.every((id) => store.channels.some((c) => c.id === id))).toBe(true);
  });

  it('deletes a channel and drops it from the workflows that route to it', async () => {
    const store = notificationsOf(sandbox.data);
    const workflow = store.workflows.find((w) => w.accountId === PRIMARY_ID && w.channelIds.length > 0);
    const channelId = workflow?.channelIds[0] as string;
    const deleted = (await run('ChannelDelete', { accountId: PRIMARY_ID, channelId })) as Loose;
    expect(deleted.data.aiNotificationsDeleteChannel).toEqual({ ids: [channelId], error: null });
    expect(workflow?.channelIds).not.toContain(channelId);
    const again = (await run('ChannelDelete', { accountId: PRIMARY_ID, channelId })) as Loose;
    expect(again.data.aiNotificationsDeleteChannel.error.type).toBe('INVALID_PARAMETER');
  });

  it('refuses a mobile-push channel in a workflow', async () => {
    const store = notificationsOf(sandbox.data);
    const push = store.channels.find((c) => c.accountId === PRIMARY_ID && c.type === 'MOBILE_PUSH');
    const answer = (await run('PolicyWorkflowCreate', {
      accountId: PRIMARY_ID,
      workflow: { name: 'w', mutingRulesHandling: 'NOTIFY_ALL_ISSUES', destinationConfigurations: [{ channelId: push?.id }], issuesFilter: { type: 'FILTER', predicates: [] } },
    })) as Loose;
    expect(answer.data.aiWorkflowsCreateWorkflow.errors[0].type).toBe('UNSUPPORTED_CHANNEL_TYPE');
  });
});
