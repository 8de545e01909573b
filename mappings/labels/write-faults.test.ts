import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { LabelTitles } from './label-rules.ts';
import { startFaultProxy, type Decision, type Exchange, type Fault, type FaultProxy } from '../../test/support/fault-proxy.ts';
import { DEMO_KEY, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * The label writes under the same faults as a deployment (test/routes/writes/faults.test.ts): a proxy
 * between the gateway and the sandbox's NerdGraph breaks one tagging mutation of a chained
 * PUT or DELETE (the first step or the second), before or after the sandbox applied it, and
 * the sandbox's own state and write counts say what really happened: every mutation sent once,
 * never a 2xx without the label really changed, and once anything may have been written, an
 * answer that says so (never "nothing was changed").
 */
type LabelFault = Fault | 'payload-refusal';

let fault: LabelFault = 'none';
/** Which label mutation of the request the fault hits (1-based), and how many went by. */
let faultStep = 1;
let mutationsSeen = 0;
let readFault = false;
/**
 * A stale read (entity search index lag, another replica's micro-cache): while `staleRead` is
 * on, the first LabelsTaggedEntities answer is kept and every later read is answered with it.
 */
let staleRead = false;
let frozenRead: string | undefined;
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let apps: SandboxApp[];
let proxy: FaultProxy;

function decide({ operation }: Exchange): Decision {
  const isRead = operation === 'LabelsTaggedEntities';
  if (readFault && isRead) return { status: 500, answer: '{"errors":[{"message":"proxy refused the read"}]}' };
  if (staleRead && isRead) {
    if (frozenRead !== undefined) return { answer: frozenRead };
    // The first read goes through and is kept as it was answered.
    return {
      rewrite: (text) => {
        frozenRead ??= text;
        return text;
      },
    };
  }
  if (operation !== 'LabelAdd' && operation !== 'LabelRemove') return 'none';
  mutationsSeen++;
  const active = mutationsSeen === faultStep ? fault : 'none';
  if (active !== 'payload-refusal') return active;
  const field = operation === 'LabelAdd' ? 'taggingAddTagsToEntity' : 'taggingDeleteTagValuesFromEntity';
  const refusal = { data: { [field]: { errors: [{ message: 'Tag key refused for NRAK-LEAKED0000000000000000000', type: 'INVALID_KEY' }] } } };
  return { answer: JSON.stringify(refusal) };
}

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  apps = sandbox.sandbox.data.apps.filter((a) => a.accountId === PRIMARY_ACCOUNT);
  proxy = await startFaultProxy(sandbox.graphqlUrl, decide);
  // Retries on: mutations must still go out once.
  // A silenced mutation waits for the deadline: a short one (ample for the rest) keeps six such cases from costing a minute.
  gateway = await createTestGateway({ nerdgraphUrl: proxy.url, retries: 3, timeoutMs: 1_000, deadlineMs: 4_000 });
});
afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

async function send(method: 'PUT' | 'DELETE', path: string, body: unknown): Promise<{ status: number; title?: string }> {
  mutationsSeen = 0;
  const response = await gateway.app.request(path, {
    method,
    headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as { error?: { title: string } };
  return { status: response.status, ...(answer.error ? { title: answer.error.title } : {}) };
}

const labelled = (app: SandboxApp, category: string, name: string): boolean => app.userTags?.[category]?.includes(name) === true;
const writes = (field: string): number => sandbox.sandbox.writes().nerdgraph[field] ?? 0;
/** Let a silenced exchange finish on the sandbox's side before counting. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

describe('a label PUT (two applications, two chained mutations) under faults', () => {
  it('without a fault: 200, both applications labelled, two mutations', async () => {
    fault = 'none';
    const [a, b] = apps as [SandboxApp, SandboxApp];
    const before = writes('taggingAddTagsToEntity');
    const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Fault', name: 'clean', links: { applications: [a.id, b.id] } } });
    expect(answer.status).toBe(200);
    expect([labelled(a, 'Fault', 'clean'), labelled(b, 'Fault', 'clean')]).toEqual([true, true]);
    expect(writes('taggingAddTagsToEntity') - before).toBe(2);
  });

  // [fault, step it hits, status, first app labelled, second app labelled, mutations sent]
  it.each([
    ['refuse-500', 1, 502, false, false, 1],
    ['reset-before', 1, 502, false, false, 1],
    ['silence-before', 1, 504, false, false, 1],
    ['applied-then-500', 1, 502, true, false, 1],
    ['applied-then-reset', 1, 502, true, false, 1],
    ['applied-then-silence', 1, 504, true, false, 1],
    ['refuse-500', 2, 502, true, false, 2],
    ['reset-before', 2, 502, true, false, 2],
    ['silence-before', 2, 502, true, false, 2],
    ['applied-then-500', 2, 502, true, true, 2],
    ['applied-then-reset', 2, 502, true, true, 2],
    ['applied-then-silence', 2, 502, true, true, 2],
  ] as const)('%s at step %i: %i, never a 2xx, never resent', async (which, step, status, first, second, sent) => {
    fault = which;
    faultStep = step;
    const name = `${which}-${step}`;
    const [, , a, b] = apps as [SandboxApp, SandboxApp, SandboxApp, SandboxApp];
    const sentBefore = await gateway.upstreamCount('LabelAdd');
    const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Fault', name, links: { applications: [a.id, b.id] } } });
    expect(answer).toEqual({ status, title: LabelTitles.putUnconfirmed });
    // Each mutation went out once, whatever the fault, with retries switched on.
    expect((await gateway.upstreamCount('LabelAdd')) - sentBefore).toBe(sent);
    expect(mutationsSeen).toBe(sent);
    await settle();
    expect([labelled(a, 'Fault', name), labelled(b, 'Fault', name)]).toEqual([first, second]);
  });

  it('a refusal NerdGraph states for the first step is a refusal: 422, nothing changed, no key in the title', async () => {
    fault = 'payload-refusal';
    faultStep = 1;
    const [, , a, b] = apps as [SandboxApp, SandboxApp, SandboxApp, SandboxApp];
    const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Fault', name: 'refused-1', links: { applications: [a.id, b.id] } } });
    expect(answer).toEqual({ status: 422, title: 'New Relic refused the label: INVALID_KEY: Tag key refused for [redacted]' });
    expect(mutationsSeen).toBe(1);
    expect([labelled(a, 'Fault', 'refused-1'), labelled(b, 'Fault', 'refused-1')]).toEqual([false, false]);
  });

  it('a refusal of the second step, after the first was applied, is an unknown outcome', async () => {
    fault = 'payload-refusal';
    faultStep = 2;
    const [, , a, b] = apps as [SandboxApp, SandboxApp, SandboxApp, SandboxApp];
    const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Fault', name: 'refused-2', links: { applications: [a.id, b.id] } } });
    expect(answer).toEqual({ status: 502, title: LabelTitles.putUnconfirmed });
    expect([labelled(a, 'Fault', 'refused-2'), labelled(b, 'Fault', 'refused-2')]).toEqual([true, false]);
  });

  it('a failed read before any write: nothing sent, nothing changed, not "unconfirmed"', async () => {
    fault = 'none';
    readFault = true;
    try {
      const [a] = apps as [SandboxApp];
      const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Fault', name: 'read', links: { applications: [a.id] } } });
      expect(answer.status).toBeGreaterThanOrEqual(500);
      expect(answer.title).not.toBe(LabelTitles.putUnconfirmed);
      expect(mutationsSeen).toBe(0);
      expect(labelled(a, 'Fault', 'read')).toBe(false);
    } finally {
      readFault = false;
    }
  });
});

describe('a label DELETE (two applications, two chained mutations) under faults', () => {
  const prepare = async (name: string, pair: readonly [SandboxApp, SandboxApp]): Promise<void> => {
    fault = 'none';
    const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Gone', name, links: { applications: pair.map((app) => app.id) } } });
    expect(answer.status).toBe(200);
  };

  it('without a fault: 200 and the label is gone from both', async () => {
    const pair = [apps[4], apps[5]] as [SandboxApp, SandboxApp];
    await prepare('clean', pair);
    const before = writes('taggingDeleteTagValuesFromEntity');
    const answer = await send('DELETE', '/v2/labels/Gone:clean.json', undefined);
    expect(answer.status).toBe(200);
    expect(pair.map((app) => labelled(app, 'Gone', 'clean'))).toEqual([false, false]);
    expect(writes('taggingDeleteTagValuesFromEntity') - before).toBe(2);
  });

  // [fault, step, status, first still labelled, second still labelled, mutations sent]
  it.each([
    ['refuse-500', 1, 502, true, true, 1],
    ['reset-before', 1, 502, true, true, 1],
    ['applied-then-500', 1, 502, false, true, 1],
    ['applied-then-silence', 1, 504, false, true, 1],
    ['refuse-500', 2, 502, false, true, 2],
    ['reset-before', 2, 502, false, true, 2],
    ['applied-then-reset', 2, 502, false, false, 2],
    ['applied-then-silence', 2, 502, false, false, 2],
  ] as const)('%s at step %i: %i, never a 2xx, never resent', async (which, step, status, first, second, sent) => {
    const name = `${which}-${step}`;
    const pair = [apps[6], apps[7]] as [SandboxApp, SandboxApp];
    await prepare(name, pair);
    fault = which;
    faultStep = step;
    const sentBefore = await gateway.upstreamCount('LabelRemove');
    const answer = await send('DELETE', `/v2/labels/Gone:${encodeURIComponent(name)}.json`, undefined);
    expect(answer).toEqual({ status, title: LabelTitles.deleteUnconfirmed });
    expect((await gateway.upstreamCount('LabelRemove')) - sentBefore).toBe(sent);
    expect(mutationsSeen).toBe(sent);
    await settle();
    // The chain removes in ascending application id order.
    const [low, high] = [...pair].sort((x, y) => x.id - y.id) as [SandboxApp, SandboxApp];
    expect([labelled(low, 'Gone', name), labelled(high, 'Gone', name)]).toEqual([first, second]);
  });
});

describe('a stale read never turns into a 2xx with nothing sent', () => {
  beforeEach(() => {
    fault = 'none';
  });
  const withStaleRead = async (run: () => Promise<void>): Promise<void> => {
    fault = 'none';
    staleRead = true;
    frozenRead = undefined;
    try {
      await run();
    } finally {
      staleRead = false;
      frozenRead = undefined;
    }
  };

  it('PUT: an application the stale read says carries the label still gets its mutation', async () => {
    const [a, b] = [apps[8], apps[9]] as [SandboxApp, SandboxApp];
    expect((await send('PUT', '/v2/labels.json', { label: { category: 'Stale', name: 'put', links: { applications: [a.id, b.id] } } })).status).toBe(200);
    await withStaleRead(async () => {
      // The read is taken (and frozen) while both carry it; then it goes from a behind its back.
      expect((await send('PUT', '/v2/labels.json', { label: { category: 'Stale', name: 'put', links: { applications: [b.id] } } })).status).toBe(200);
      expect(frozenRead).toBeDefined();
      delete a.userTags?.Stale;
      expect(labelled(a, 'Stale', 'put')).toBe(false);
      const before = writes('taggingAddTagsToEntity');
      const answer = await send('PUT', '/v2/labels.json', { label: { category: 'Stale', name: 'put', links: { applications: [a.id, b.id] } } });
      expect(answer.status).toBe(200);
      // Both named applications were written, although the read said both carried it.
      expect(mutationsSeen).toBe(2);
      expect(writes('taggingAddTagsToEntity') - before).toBe(2);
      expect([labelled(a, 'Stale', 'put'), labelled(b, 'Stale', 'put')]).toEqual([true, true]);
    });
  });

  it('DELETE naming applications: one the stale read says does not carry it still gets its mutation', async () => {
    const [a, b] = [apps[10], apps[11]] as [SandboxApp, SandboxApp];
    expect((await send('PUT', '/v2/labels.json', { label: { category: 'Stale', name: 'delete', links: { applications: [b.id] } } })).status).toBe(200);
    await withStaleRead(async () => {
      // Frozen while only b carries it; then a gets it behind the read's back.
      expect((await send('PUT', '/v2/labels.json', { label: { category: 'Stale', name: 'delete', links: { applications: [b.id] } } })).status).toBe(200);
      a.userTags = { ...(a.userTags ?? {}), Stale: ['delete'] };
      const before = writes('taggingDeleteTagValuesFromEntity');
      const answer = await send('DELETE', '/v2/labels/Stale:delete.json', { label: { links: { applications: [a.id] } } });
      expect(answer.status).toBe(200);
      expect(mutationsSeen).toBe(1);
      expect(writes('taggingDeleteTagValuesFromEntity') - before).toBe(1);
      expect([labelled(a, 'Stale', 'delete'), labelled(b, 'Stale', 'delete')]).toEqual([false, true]);
    });
  });
});
