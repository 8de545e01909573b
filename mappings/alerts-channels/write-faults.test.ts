import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import createMapping from './create.ts';
import { notificationsOf } from '../../sandbox/notifications/store.ts';
import { startFaultProxy, type Decision, type Exchange, type Fault, type FaultProxy } from '../../test/support/fault-proxy.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * The chained channel create (destination, channel, then a workflow per policy) under faults:
 * a proxy between the gateway and the sandbox's NerdGraph breaks one step's exchange, before or
 * after the sandbox applied it, or answers a payload refusal. Whatever step fails after the
 * first was sent, the answer is the unconfirmed title (never "nothing was changed", never a
 * 2xx), and no mutation reaches NerdGraph twice.
 */
type ChannelFault = Extract<Fault, 'none' | 'refuse-500' | 'reset-before' | 'applied-then-500' | 'applied-then-reset'> | 'payload-refusal';

let fault: { operation: string; kind: ChannelFault } = { operation: '', kind: 'none' };
const arrivals = new Map<string, number>();
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let proxy: FaultProxy;

const REFUSALS: Record<string, string> = {
  ChannelDestinationCreate: '{"data":{"aiNotificationsCreateDestination":{"destination":null,"error":{"description":"no","type":"INVALID_PARAMETER"}}}}',
  ChannelCreate: '{"data":{"aiNotificationsCreateChannel":{"channel":null,"error":{"description":"no","type":"INVALID_PARAMETER"}}}}',
  PolicyWorkflowCreate: '{"data":{"aiWorkflowsCreateWorkflow":{"workflow":null,"errors":[{"description":"no","type":"VALIDATION_ERROR"}]}}}',
};

function decide({ operation }: Exchange): Decision {
  arrivals.set(operation, (arrivals.get(operation) ?? 0) + 1);
  const active = operation === fault.operation ? fault.kind : 'none';
  return active === 'payload-refusal' ? { answer: REFUSALS[operation] ?? '' } : active;
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  proxy = await startFaultProxy(sandbox.graphqlUrl, decide);
  // Retries on: mutations must still go out once.
  gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 3, timeoutMs: 1_000 });
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});
beforeEach(() => {
  arrivals.clear();
  fault = { operation: '', kind: 'none' };
});

let n = 0;
async function create(withPolicy: boolean): Promise<{ status: number; title: string | undefined; text: string }> {
  const store = notificationsOf(sandbox.sandbox.data);
  const bound = new Set(store.workflows.flatMap((w) => w.predicates.flatMap((p) => p.values.map(Number))));
  const bare = sandbox.sandbox.data.alerts.policies.find((p) => p.accountId === PRIMARY_ACCOUNT && !bound.has(p.id));
  const query = withPolicy ? `?policy_ids=${bare?.id}` : '';
  const response = await gateway.app.request(`/v2/alerts_channels.json${query}`, {
    method: 'POST',
    headers: { 'x-api-key': DEMO_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ channel: { name: `fault ${++n}`, type: 'pagerduty', configuration: { service_key: 'fault-secret-key' } } }),
  });
  const text = await response.text();
  const title = (JSON.parse(text) as { error?: { title?: string } }).error?.title;
  return { status: response.status, title, text };
}

const counts = () => {
  const store = notificationsOf(sandbox.sandbox.data);
  return { destinations: store.destinations.length, channels: store.channels.length, workflows: store.workflows.length };
};

describe('chained channel create under faults', () => {
  it('without a fault: destination, channel and workflow, each sent once, 201', async () => {
    const before = counts();
    const answer = await create(true);
    expect(answer.status, answer.text).toBe(201);
    expect(counts()).toEqual({ destinations: before.destinations + 1, channels: before.channels + 1, workflows: before.workflows + 1 });
    expect([arrivals.get('ChannelDestinationCreate'), arrivals.get('ChannelCreate'), arrivals.get('PolicyWorkflowCreate')]).toEqual([1, 1, 1]);
    expect(answer.text).not.toContain('fault-secret-key');
  });

  it('a payload refusal of the first step: 422, nothing else sent', async () => {
    fault = { operation: 'ChannelDestinationCreate', kind: 'payload-refusal' };
    const before = counts();
    const answer = await create(false);
    expect(answer.status).toBe(422);
    expect(answer.title).toContain("New Relic refused the channel's destination");
    expect(arrivals.get('ChannelCreate')).toBeUndefined();
    expect(counts()).toEqual(before);
  });

  const later: Array<[string, ChannelFault, boolean]> = [
    ['ChannelCreate', 'refuse-500', false],
    ['ChannelCreate', 'reset-before', false],
    ['ChannelCreate', 'applied-then-500', false],
    ['ChannelCreate', 'applied-then-reset', false],
    ['PolicyWorkflowCreate', 'refuse-500', true],
    ['PolicyWorkflowCreate', 'applied-then-reset', true],
  ];
  it.each(later)('%s fails (%s) after the destination was created: the unconfirmed title, no step resent', async (operation, kind, withPolicy) => {
    fault = { operation, kind };
    const answer = await create(withPolicy);
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.title).toBe(createMapping.kind === 'write' ? createMapping.unconfirmedTitle : '');
    expect(answer.text).not.toContain('nothing was changed');
    for (const step of ['ChannelDestinationCreate', 'ChannelCreate', 'PolicyWorkflowCreate', 'PolicyWorkflowUpdate']) expect(arrivals.get(step) ?? 0, step).toBeLessThanOrEqual(1);
    expect(arrivals.get(operation)).toBe(1);
  });

  // A refusal New Relic stated at a later step: the earlier steps are known applied, this one not.
  // 409 (newrelic-client-go does not retry it, so no second destination and channel), never
  // "nothing was changed", no step resent.
  it.each([
    ['ChannelCreate', false],
    ['PolicyWorkflowCreate', true],
  ] as const)('%s refused in its payload after the destination was created: 409 with the partial title, no step resent', async (operation, withPolicy) => {
    fault = { operation, kind: 'payload-refusal' };
    const answer = await create(withPolicy);
    expect(answer.status).toBe(409);
    const partialTitle = createMapping.kind === 'write' ? (createMapping.partialTitle ?? '') : '';
    expect(partialTitle).not.toBe('');
    expect(answer.title?.startsWith(`${partialTitle}: New Relic refused`)).toBe(true);
    expect(answer.text).not.toContain('nothing was changed');
    for (const step of ['ChannelDestinationCreate', 'ChannelCreate', 'PolicyWorkflowCreate', 'PolicyWorkflowUpdate']) expect(arrivals.get(step) ?? 0, step).toBeLessThanOrEqual(1);
    expect(arrivals.get(operation)).toBe(1);
  });

  it('never logs the secret', () => {
    expect(gateway.logs.join('\n')).not.toContain('fault-secret-key');
  });
});
