import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryTitles, MAX_DIRECTORY_PAGES } from './notifications.ts';
import { addWorkflow, notificationsOf, type SandboxChannel, type SandboxWorkflow } from '../../sandbox/notifications/store.ts';
import { startFaultProxy, type Decision, type Exchange, type FaultProxy } from '../../test/support/fault-proxy.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { POLICY_PREDICATE, PolicyChannelTitles, policyWorkflowName, channelV2Id } from './channel-config.ts';

/**
 * The alert channel review's findings, each against the sandbox behind a proxy that can rewrite
 * one operation's answer: a user's workflow is never deleted, workflow settings survive a
 * rewrite of its channel list, a truncated or looping directory stops a write before any
 * mutation, a workflow mutation without the workflow's id is not a success, and disabled
 * workflows link nothing.
 */
type Rewrite = (answer: Record<string, unknown>, round: number) => unknown;
let rewrites = new Map<string, Rewrite>();
const arrivals = new Map<string, number>();
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let proxy: FaultProxy;

const MUTATIONS = ['PolicyWorkflowUpdate', 'PolicyWorkflowCreate', 'PolicyWorkflowDelete', 'ChannelDestinationCreate', 'ChannelCreate', 'ChannelDelete'];
const mutationsSent = (): number => MUTATIONS.reduce((sum, operation) => sum + (arrivals.get(operation) ?? 0), 0);

function decide({ operation, body }: Exchange): Decision {
  const round = (arrivals.get(operation) ?? 0) + 1;
  arrivals.set(operation, round);
  // Cursors the rewrites made up: the sandbox gets the first page again.
  const parsed = JSON.parse(body) as { variables?: Record<string, unknown> };
  if (typeof parsed.variables?.workflowCursor === 'string' && parsed.variables.workflowCursor.startsWith('fake-')) delete parsed.variables.workflowCursor;
  const rewrite = rewrites.get(operation);
  return { body: JSON.stringify(parsed), ...(rewrite ? { rewrite: (text: string) => JSON.stringify(rewrite(JSON.parse(text) as Record<string, unknown>, round)) } : {}) };
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  proxy = await startFaultProxy(sandbox.graphqlUrl, decide);
  gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 0, timeoutMs: 5_000 });
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});
beforeEach(() => {
  arrivals.clear();
  rewrites = new Map();
});

const store = () => notificationsOf(sandbox.sandbox.data);

async function call(method: string, path: string): Promise<{ status: number; body: Record<string, unknown>; title: string | undefined }> {
  const response = await gateway.app.request(path, { method, headers: { 'x-api-key': DEMO_KEY } });
  const body = (await response.json()) as Record<string, unknown> & { error?: { title?: string } };
  return { status: response.status, body, title: body.error?.title };
}

/** Policies of the primary account no workflow binds yet, one per call. */
let bareTaken = 0;
function barePolicy(): number {
  const bound = new Set(store().workflows.flatMap((w) => w.predicates.flatMap((p) => p.values.map(Number))));
  const bare = sandbox.sandbox.data.alerts.policies.filter((p) => p.accountId === PRIMARY_ACCOUNT && !bound.has(p.id));
  const policy = bare[bareTaken++ % bare.length];
  if (!policy) throw new Error('no bare policy');
  return policy.id;
}

function routableChannels(count: number): SandboxChannel[] {
  const found = store().channels.filter((c) => c.accountId === PRIMARY_ACCOUNT && c.type !== 'MOBILE_PUSH' && ['EMAIL', 'WEBHOOK', 'SLACK_LEGACY', 'PAGERDUTY_SERVICE_INTEGRATION'].includes(c.type));
  return found.slice(0, count);
}

function workflowFor(policyId: number, channels: readonly SandboxChannel[], name = policyWorkflowName(policyId)): SandboxWorkflow {
  return addWorkflow(
    store(),
    {
      accountId: PRIMARY_ACCOUNT,
      name,
      enabled: true,
      channelIds: channels.map((c) => c.id),
      filterName: `policy ${policyId}`,
      predicates: [{ attribute: POLICY_PREDICATE.attribute, operator: POLICY_PREDICATE.operator, values: [String(policyId)] }],
      mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
    },
    Date.now(),
  );
}

describe("unlinking a policy's last channel", () => {
  it("refuses (422) to empty a workflow the user made, and writes nothing: the workflow stays", async () => {
    const policyId = barePolicy();
    const [channel] = routableChannels(1) as [SandboxChannel];
    const workflow = workflowFor(policyId, [channel], 'Team pager rotation');
    const answer = await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(channel.id)}`);
    expect(answer.status).toBe(422);
    expect(answer.title).toBe(PolicyChannelTitles.lastChannelOfForeignWorkflow('Team pager rotation'));
    expect(mutationsSent()).toBe(0);
    expect(store().workflows).toContain(workflow);
    expect(workflow.channelIds).toEqual([channel.id]);
  });

  it('deletes the workflow the gateway made for the policy once it has no channel', async () => {
    const policyId = barePolicy();
    const [channel] = routableChannels(1) as [SandboxChannel];
    const workflow = workflowFor(policyId, [channel]);
    const answer = await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(channel.id)}`);
    expect(answer.status).toBe(200);
    expect(arrivals.get('PolicyWorkflowDelete')).toBe(1);
    expect(store().workflows).not.toContain(workflow);
    expect(store().channels.some((c) => c.id === channel.id)).toBe(true);
  });

  it("edits a user's workflow that keeps other channels (never deletes it)", async () => {
    const policyId = barePolicy();
    const [first, second] = routableChannels(2) as [SandboxChannel, SandboxChannel];
    const workflow = workflowFor(policyId, [first, second], 'Team pager rotation 2');
    const answer = await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(first.id)}`);
    expect(answer.status).toBe(200);
    expect(arrivals.get('PolicyWorkflowDelete') ?? 0).toBe(0);
    expect(store().workflows).toContain(workflow);
    expect(workflow.channelIds).toEqual([second.id]);
  });
});

describe("a workflow's destination settings", () => {
  it('survive linking another channel (notificationTriggers and updateOriginalMessage sent back unchanged)', async () => {
    const workflow = store().workflows.find((w) => w.accountId === PRIMARY_ACCOUNT && w.settings && Object.keys(w.settings).length > 0 && w.predicates.length === 1 && w.predicates[0]?.attribute === 'labels.policyIds');
    if (!workflow) throw new Error('the sandbox seeds no workflow with settings');
    const policyId = Number(workflow.predicates[0]?.values[0]);
    const before = structuredClone(workflow.settings);
    const extra = routableChannels(40).find((c) => !workflow.channelIds.includes(c.id)) as SandboxChannel;
    const answer = await call('PUT', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_ids=${channelV2Id(extra.id)}`);
    expect(answer.status).toBe(200);
    expect(arrivals.get('PolicyWorkflowUpdate')).toBe(1);
    expect(workflow.channelIds).toContain(extra.id);
    expect(workflow.settings).toEqual(before);
  });

  it('survive unlinking another channel of the workflow', async () => {
    const policyId = barePolicy();
    const [kept, dropped] = routableChannels(2) as [SandboxChannel, SandboxChannel];
    const workflow = workflowFor(policyId, [kept, dropped]);
    workflow.settings = { [kept.id]: { notificationTriggers: ['ACTIVATED'], updateOriginalMessage: true } };
    const answer = await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(dropped.id)}`);
    expect(answer.status).toBe(200);
    expect(workflow.channelIds).toEqual([kept.id]);
    expect(workflow.settings).toEqual({ [kept.id]: { notificationTriggers: ['ACTIVATED'], updateOriginalMessage: true } });
  });
});

describe('writes on a directory NerdGraph did not list to its end', () => {
  type Directory = { data: { actor: { account: { aiWorkflows?: { workflows?: { nextCursor: string | null } } } } } };
  const cursorOf = (answer: Record<string, unknown>) => (answer as unknown as Directory).data.actor.account.aiWorkflows?.workflows;

  it.each([
    ['a repeated cursor', 502, DirectoryTitles.repeated, () => 'fake-same'],
    ['more pages than the bound', 503, DirectoryTitles.bound, (round: number) => `fake-${round}`],
  ])('%s: %s "nothing was changed", before any mutation', async (_name, status, title, cursor) => {
    rewrites.set('NotificationDirectory', (answer, round) => {
      const workflows = cursorOf(answer);
      if (workflows) workflows.nextCursor = cursor(round);
      return answer;
    });
    const policyId = barePolicy();
    const [channel] = routableChannels(1) as [SandboxChannel];
    for (const [method, path] of [
      ['PUT', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_ids=${channelV2Id(channel.id)}`],
      ['DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(channel.id)}`],
      ['DELETE', `/v2/alerts_channels/${channelV2Id(channel.id)}.json`],
    ] as const) {
      const answer = await call(method, path);
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.title).toBe(title);
    }
    expect(mutationsSent()).toBe(0);
    expect(arrivals.get('NotificationDirectory') ?? 0).toBeLessThanOrEqual(3 * (MAX_DIRECTORY_PAGES + 1) + 3);
  });
});

describe('workflow mutations answered without proof', () => {
  it.each([
    ['an update with no workflow and no error', 'PUT', 'PolicyWorkflowUpdate', { data: { aiWorkflowsUpdateWorkflow: { workflow: null, errors: [] } } }],
    ['an update naming another workflow', 'PUT', 'PolicyWorkflowUpdate', { data: { aiWorkflowsUpdateWorkflow: { workflow: { id: 'someone-else', destinationConfigurations: [] }, errors: [] } } }],
    ['a create with no workflow and no error', 'PUT-new', 'PolicyWorkflowCreate', { data: { aiWorkflowsCreateWorkflow: { workflow: null, errors: [] } } }],
    ['a delete with a null id', 'DELETE', 'PolicyWorkflowDelete', { data: { aiWorkflowsDeleteWorkflow: { id: null, errors: [] } } }],
    ['a delete naming another workflow', 'DELETE', 'PolicyWorkflowDelete', { data: { aiWorkflowsDeleteWorkflow: { id: 'someone-else', errors: [] } } }],
  ])('%s: the unconfirmed answer, never a 2xx', async (_name, kind, operation, payload) => {
    rewrites.set(operation, () => payload);
    const policyId = barePolicy();
    const [first, second] = routableChannels(2) as [SandboxChannel, SandboxChannel];
    if (kind !== 'PUT-new') workflowFor(policyId, [first]);
    const answer =
      kind === 'DELETE'
        ? await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(first.id)}`)
        : await call('PUT', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_ids=${channelV2Id(second.id)}`);
    expect(answer.status).toBe(502);
    expect(answer.title).toMatch(/may have been .* but New Relic did not confirm it/);
    expect(arrivals.get(operation)).toBe(1);
  });
});

describe('disabled workflows', () => {
  it('link no policy, are not edited, and a PUT creates an enabled workflow instead', async () => {
    const policyId = barePolicy();
    const [channel, other] = routableChannels(2) as [SandboxChannel, SandboxChannel];
    const disabled = workflowFor(policyId, [channel]);
    disabled.enabled = false;
    const list = await call('PUT', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_ids=${channelV2Id(other.id)}`);
    expect(list.status).toBe(200);
    // The disabled workflow's channel is not a link; the new one is.
    expect((list.body.policy as { channel_ids: number[] }).channel_ids).toEqual([channelV2Id(other.id)]);
    expect(arrivals.get('PolicyWorkflowCreate')).toBe(1);
    expect(arrivals.get('PolicyWorkflowUpdate') ?? 0).toBe(0);
    expect(disabled.channelIds).toEqual([channel.id]);
    expect(disabled.enabled).toBe(false);
    // Unlinking the channel only the disabled workflow holds writes nothing.
    arrivals.clear();
    const unlink = await call('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyId}&channel_id=${channelV2Id(channel.id)}`);
    expect(unlink.status).toBe(200);
    expect((unlink.body.channel as { links: { policy_ids: number[] } }).links.policy_ids).not.toContain(policyId);
    expect(mutationsSent()).toBe(0);
  });
});
