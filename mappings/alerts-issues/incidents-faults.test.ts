import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allIssuesOf } from '../../sandbox/ai-issues.ts';
import { startFaultProxy, type Exchange, type Fault, type FaultProxy } from '../../test/support/fault-proxy.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { alertV2Id } from './alert-id.ts';

/**
 * Acknowledge and close of an alert incident under faults: a proxy between the gateway and the
 * sandbox's NerdGraph breaks the mutation (or the read-back after it) before or after the
 * sandbox applied it, and the sandbox's own state and write counts say what really happened:
 * the mutation goes out once (retries on), and a 2xx only ever follows a confirmed write.
 */
type IncidentFault = Extract<Fault, 'none' | 'refuse-500' | 'reset-before' | 'applied-then-500' | 'applied-then-reset' | 'applied-then-silence'> | 'readback-500';

let fault: IncidentFault = 'none';
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let proxy: FaultProxy;
let openIds: number[] = [];

function decide({ operation, body }: Exchange): Fault {
  if (operation === 'AlertIncidentAcknowledge' || operation === 'AlertIncidentClose') return fault === 'readback-500' ? 'none' : fault;
  // The read-back names the issue by its NerdGraph id; the scan before the write does not.
  const isReadBack = operation === 'AlertIncidents' && /"ids"/.test(body);
  return isReadBack && fault === 'readback-500' ? 'refuse-500' : 'none';
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 60 });
  proxy = await startFaultProxy(sandbox.graphqlUrl, decide);
  // Each call bounded by 500 ms (silence is a timeout), the request by more: a scan is several
  // reads. 4 s holds a silenced read's retries; a silenced mutation waits for all of it.
  gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 3, timeoutMs: 500, deadlineMs: 4_000 });
  openIds = allIssuesOf(sandbox.sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW)
    .filter((issue) => issue.closedAt === null)
    .map((issue) => alertV2Id(issue.issueId));
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

function stateOf(id: number): { closed: boolean; acknowledged: boolean } {
  const issue = allIssuesOf(sandbox.sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).find((candidate) => alertV2Id(candidate.issueId) === id);
  return { closed: issue?.closedAt !== null, acknowledged: issue?.acknowledgedAt !== null };
}

async function act(action: 'acknowledge' | 'close', id: number): Promise<{ status: number; title?: string }> {
  const response = await gateway.app.request(`/v2/alerts_incidents/${id}/${action}.json`, { method: 'PUT', headers: { 'X-Api-Key': DEMO_KEY } });
  const body = (await response.json()) as { error?: { title: string } };
  return { status: response.status, ...(body.error ? { title: body.error.title } : {}) };
}

const operationOf = { acknowledge: 'AlertIncidentAcknowledge', close: 'AlertIncidentClose' } as const;
const unknownTitle = (action: 'acknowledge' | 'close'): string =>
  `The incident may have been ${action === 'acknowledge' ? 'acknowledged' : 'closed'}, but New Relic did not confirm it: list the incidents before retrying`;

describe.each(['acknowledge', 'close'] as const)('%s of an alert incident under faults', (action) => {
  const next = (): number => {
    const id = openIds.shift();
    if (id === undefined) throw new Error('the sandbox has too few open incidents for this test');
    return id;
  };
  const applied = (id: number): boolean => (action === 'close' ? stateOf(id).closed : stateOf(id).acknowledged);

  it('without a fault: 200, the incident as read back, one write', async () => {
    fault = 'none';
    const id = next();
    const before = sandbox.sandbox.writes().total;
    const response = await gateway.app.request(`/v2/alerts_incidents/${id}/${action}.json`, { method: 'PUT', headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { incident: { id: number; closed_at?: number } };
    expect(body.incident.id).toBe(id);
    expect(body.incident.closed_at !== undefined).toBe(action === 'close');
    expect(sandbox.sandbox.writes().total - before).toBe(1);
    expect(applied(id)).toBe(true);
  });

  it.each([
    ['refuse-500', false, 502],
    ['reset-before', false, 502],
    ['applied-then-500', true, 502],
    ['applied-then-reset', true, 502],
    ['applied-then-silence', true, 504],
    ['readback-500', true, 502],
  ] as const)('%s: never a 2xx, the mutation sent once, applied: %s', async (which, expected, status) => {
    fault = which;
    const id = next();
    const sentBefore = await gateway.upstreamCount(operationOf[action]);
    const answer = await act(action, id);
    expect((await gateway.upstreamCount(operationOf[action])) - sentBefore).toBe(1);
    expect(answer).toEqual({ status, title: unknownTitle(action) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(applied(id)).toBe(expected);
  });

  it('an unknown id is 404 and a closed incident 422, with nothing sent', async () => {
    fault = 'none';
    const sentBefore = await gateway.upstreamCount(operationOf[action]);
    expect(await act(action, 123)).toEqual({ status: 404, title: 'No Incident found with the given ID' });
    const closed = allIssuesOf(sandbox.sandbox.data, PRIMARY_ACCOUNT, FIXED_NOW).find((issue) => issue.closedAt !== null)!;
    expect(await act(action, alertV2Id(closed.issueId))).toEqual({ status: 422, title: 'Incident already closed' });
    expect((await gateway.upstreamCount(operationOf[action])) - sentBefore).toBe(0);
  });
});
