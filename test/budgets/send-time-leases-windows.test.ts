import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { createBudgets, type BudgetLimits } from '../../src/budget/budgets.ts';
import { runWithRequestDue } from '../../src/upstream/request-due.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { defineWriteMapping, type Mapping } from '../../src/routes/mapping.ts';
import { DegradingState } from '../../src/state/degrading-state.ts';
import { MemoryState } from '../../src/state/memory-state.ts';
import { localState } from '../../src/state/open.ts';
import { RedisState } from '../../src/state/redis-state.ts';
import type { Lease, SharedState, WindowSpend } from '../../src/state/shared-state.ts';
import type { NerdGraph, NerdGraphBudget, UpstreamCall } from '../../src/upstream/client.ts';
import type { OperationDocument } from '../../src/upstream/documents.ts';
import { OverBudget, UpstreamError } from '../../src/upstream/errors.ts';
import { NO_PARAMS } from '../../src/v2/param-schema.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { loadDocuments } from '../../src/upstream/documents.ts';
import { listenOnLoopback } from '../support/http.ts';
import { redisAvailable, startRedis, type TestRedis } from '../support/redis.ts';
import { stateBackends, untilAnswering } from '../support/state.ts';

/**
 * What the review of the budgets found, each pinned by a test that failed before its fix:
 * a call admitted with no time left to be answered, a stalled shared state carrying a call
 * past its deadline, windows spent by calls never sent, a chained write's held-back step
 * answered 5xx, leases left in Redis by a timed-out acquire, and every release waking every
 * waiter. Plus leases all given back after refusals and departures, and the window queue.
 */
const KEY = 'NRAK-BUDGET-REVIEW';
const read: OperationDocument = { name: 'Read', text: 'query Read { actor { user { id } } }', kind: 'query' };
const write: OperationDocument = { name: 'Write', text: 'mutation Write { noop }', kind: 'mutation' };
const nrqlRead: OperationDocument = {
  name: 'Nrql',
  text: 'query Nrql($accountId: Int!, $q: Nrql!) { actor { account(id: $accountId) { nrql(query: $q) { results } } } }',
  kind: 'query',
};
const LIMITS: BudgetLimits = { concurrencyPerKey: 1, nrqlPerAccountPerMinute: 100, identicalQueryPerMinute: 100 };
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const call = (apiKey = KEY, variables: Record<string, unknown> = {}): UpstreamCall => ({ operation: 'Op', variables, apiKey });

function budgetsOn(shared: ReturnType<typeof localState>, limits: Partial<BudgetLimits> = {}, extra: { windowMs?: number; state?: SharedState; metrics?: GatewayMetrics } = {}): NerdGraphBudget {
  return createBudgets({
    ...shared,
    ...(extra.state ? { state: extra.state } : {}),
    limits: { ...LIMITS, ...limits },
    metrics: extra.metrics ?? createMetrics(),
    callBoundMs: 10_000,
    ...(extra.windowMs ? { windowMs: extra.windowMs } : {}),
  });
}

/** admit's outcome in words: 'admitted' (released at once), or the refusal's title, or the error. */
async function outcome(admitting: Promise<() => void>): Promise<string> {
  return admitting.then(
    (release) => {
      release();
      return 'admitted';
    },
    (error: unknown) => (error instanceof OverBudget ? `refused: ${error.title}` : error instanceof UpstreamError ? `${error.errorClass}` : String(error)),
  );
}

/** Another call of the same key holds the only slot. */
async function holdSlot(shared: ReturnType<typeof localState>, apiKey = KEY): Promise<Lease> {
  const lease = await shared.state.acquireLease(shared.keyOf('concurrency', shared.identityOf(apiKey)), 1, 60_000);
  if (lease === undefined) throw new Error('slot already held');
  return lease;
}

const leasesOf = (shared: ReturnType<typeof localState>, apiKey = KEY, state: SharedState = shared.state): Promise<number> =>
  state.leaseCount(shared.keyOf('concurrency', shared.identityOf(apiKey)));

describe('a minimum time to send', () => {
  it('refuses a queued call whose slot frees too close to its deadline, and holds a write to a larger minimum than a read', async () => {
    const shared = localState();
    const budget = budgetsOn(shared);
    const readSlot = await holdSlot(shared, `${KEY}-R`);
    const writeSlot = await holdSlot(shared, `${KEY}-W`);
    // 2.9 s to leave by: a read needs 500 ms left (5% of the 10 s bound), a write 1.45 s (20%, at most half the time it had).
    const due = performance.now() + 3_000;
    const signal = AbortSignal.timeout(10_000);
    const asking = (apiKey: string, document: OperationDocument): Promise<string> => outcome(runWithRequestDue(() => due, () => budget.admit(call(apiKey), document, signal)));
    const readOutcome = asking(`${KEY}-R`, read);
    const writeOutcome = asking(`${KEY}-W`, write);
    // Both slots free with ~0.9 s left to leave by: enough for the read, not for the write.
    await sleep(2_000);
    await readSlot.release();
    await writeSlot.release();
    expect(await readOutcome).toBe('admitted');
    expect(await writeOutcome).toBe("refused: NerdGraph's limit of 1 concurrent requests for this API key is in use; nothing was sent, retry later");
    expect(signal.aborted).toBe(false);
  });

  it('admits a call nobody holds back whatever its deadline, as long as it is not already due', async () => {
    const shared = localState();
    const budget = budgetsOn(shared);
    const due = performance.now() + 300;
    expect(await outcome(runWithRequestDue(() => due, () => budget.admit(call(), write, AbortSignal.timeout(1_000))))).toBe('admitted');
  });
});

/** Memory state whose chosen operation answers only after `stallMs` (a stalled Redis). */
class StalledState extends MemoryState {
  private readonly stalled: 'acquireLease' | 'spendAll';
  private readonly stallMs: number;

  constructor(
    stalled: 'acquireLease' | 'spendAll',
    stallMs: number,
  ) {
    super();
    this.stalled = stalled;
    this.stallMs = stallMs;
  }
  override async acquireLease(key: string, limit: number, ttlMs: number): Promise<Lease | undefined> {
    if (this.stalled === 'acquireLease') await sleep(this.stallMs);
    return super.acquireLease(key, limit, ttlMs);
  }
  override async spendAll(windows: readonly WindowSpend[]) {
    if (this.stalled === 'spendAll') await sleep(this.stallMs);
    return super.spendAll(windows);
  }
}

describe('a stalled shared state', () => {
  it.each(['acquireLease', 'spendAll'] as const)('cannot carry a call past its deadline (%s stalls): 429 in time, and no slot left held', async (stalled) => {
    const shared = localState();
    const state = new StalledState(stalled, 1_500);
    const budget = budgetsOn(shared, {}, { state });
    // The request's deadline: its signal fires when it is due.
    const signal = AbortSignal.timeout(1_000);
    const due = performance.now() + 1_000;
    const answer = await outcome(runWithRequestDue(() => due, () => budget.admit(call(KEY, { accountId: 1, q: 'SELECT 1' }), nrqlRead, signal)));
    expect(answer).toBe("refused: NerdGraph's limits could not be checked in time to send this call before the request's deadline; nothing was sent, retry later");
    expect(signal.aborted).toBe(false);
    // The lease the stalled state hands out late is given back.
    await sleep(1_300);
    expect(await leasesOf(shared, KEY, state)).toBe(0);
  });
});

describe('windows spent all or none', () => {
  const backends = stateBackends();

  it.each(backends)('in %s: a spend refused by one window spends nothing of the others, and names the window that resets last', async (_name, open) => {
    const state = open();
    try {
      await untilAnswering(state);
      const a = `test:a:${Math.random()}`;
      const b = `test:b:${Math.random()}`;
      const c = `test:c:${Math.random()}`;
      const windows = (limitB: number): WindowSpend[] => [
        { key: a, cost: 1, limit: 3, windowMs: 60_000 },
        { key: b, cost: 1, limit: limitB, windowMs: 60_000 },
      ];
      expect(await state.spendAll(windows(1))).toEqual({ spent: true });
      const refused = await state.spendAll(windows(1));
      expect(refused).toMatchObject({ spent: false, refused: 1 });
      if (!refused.spent) expect(refused.retryAfterMs).toBeGreaterThan(50_000);
      // `a` holds 1 still: two more fit, a third does not.
      expect(await state.spendAll([{ key: a, cost: 2, limit: 3, windowMs: 60_000 }])).toEqual({ spent: true });
      expect(await state.spendAll([{ key: a, cost: 1, limit: 3, windowMs: 60_000 }])).toMatchObject({ spent: false, refused: 0 });
      // Both refuse: the later reset is named.
      expect(await state.spendAll([{ key: c, cost: 1, limit: 1, windowMs: 1_000 }])).toEqual({ spent: true });
      expect(await state.spendAll([{ key: c, cost: 1, limit: 1, windowMs: 1_000 }, { key: b, cost: 1, limit: 1, windowMs: 60_000 }])).toMatchObject({ spent: false, refused: 1 });
    } finally {
      await state.close();
    }
  });

  it("the reviewer's probe: identical limit 3, account limit 1, four identical calls: one sent, every other refused by the account's budget", async () => {
    const shared = localState();
    const budget = budgetsOn(shared, { identicalQueryPerMinute: 3, nrqlPerAccountPerMinute: 1 });
    const answers: string[] = [];
    for (let i = 0; i < 4; i++) answers.push(await outcome(budget.admit(call(KEY, { accountId: 7, q: 'SELECT count(*) FROM Transaction' }), nrqlRead, AbortSignal.timeout(5_000))));
    expect(answers[0]).toBe('admitted');
    for (const answer of answers.slice(1)) expect(answer).toBe("refused: NerdGraph's budget of 1 NRQL queries per minute for account 7 is spent; nothing was sent, retry later");
  });

  it('queues a call on a spent window, then admits it once the window resets', async () => {
    const shared = localState();
    const metrics = createMetrics();
    const budget = budgetsOn(shared, { identicalQueryPerMinute: 1 }, { windowMs: 300, metrics });
    const same = (): UpstreamCall => call(KEY, { accountId: 7, q: 'SELECT 1' });
    expect(await outcome(budget.admit(same(), nrqlRead, AbortSignal.timeout(5_000)))).toBe('admitted');
    expect(await outcome(budget.admit(same(), nrqlRead, AbortSignal.timeout(5_000)))).toBe('admitted');
    const decisions = (await metrics.budgetDecisions.get()).values;
    const count = (budget: string, result: string): number => decisions.filter((v) => v.labels.budget === budget && v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
    expect(count('identical_query', 'immediate')).toBe(1);
    expect(count('identical_query', 'queued')).toBe(1);
    expect(count('identical_query', 'refused')).toBe(0);
    expect(await leasesOf(shared)).toBe(0);
  });
});

describe('leases given back', () => {
  it('after refusals (by the slot, by a window) and after a client leaves mid-queue, no slot stays held', async () => {
    const shared = localState();
    const budget = budgetsOn(shared, { identicalQueryPerMinute: 1 });
    // Refused by a window once it held the slot: the slot goes back.
    const same = (): UpstreamCall => call(KEY, { accountId: 7, q: 'SELECT 1' });
    expect(await outcome(budget.admit(same(), nrqlRead, AbortSignal.timeout(5_000)))).toBe('admitted');
    expect(await outcome(budget.admit(same(), nrqlRead, AbortSignal.timeout(5_000)))).toMatch(/^refused: This NRQL query was already sent 1 times/);
    expect(await leasesOf(shared)).toBe(0);
    const first = await budget.admit(call(), read, AbortSignal.timeout(10_000));
    const due = performance.now() + 400;
    const refused = Array.from({ length: 3 }, () => outcome(runWithRequestDue(() => due, () => budget.admit(call(), read, AbortSignal.timeout(10_000)))));
    const leaving = new AbortController();
    const left = outcome(budget.admit(call(), read, leaving.signal));
    await sleep(50);
    leaving.abort(new Error('client left'));
    expect(await left).toBe('cancelled');
    for (const answer of await Promise.all(refused)) expect(answer).toMatch(/^refused: NerdGraph's limit of 1 concurrent/);
    expect(await leasesOf(shared)).toBe(1);
    first();
    await sleep(10);
    expect(await leasesOf(shared)).toBe(0);
  });
});

describe('waking waiters', () => {
  it('a freed slot wakes one local waiter, not all of them', async () => {
    const shared = localState();
    let acquires = 0;
    const counting = Object.assign(Object.create(shared.state) as SharedState, {
      acquireLease: (key: string, limit: number, ttlMs: number) => {
        acquires++;
        return shared.state.acquireLease(key, limit, ttlMs);
      },
    });
    const budget = budgetsOn(shared, {}, { state: counting });
    const holder = await budget.admit(call(), read, AbortSignal.timeout(10_000));
    const waiters = Array.from({ length: 20 }, () => budget.admit(call(), read, AbortSignal.timeout(10_000)));
    // Long enough for every waiter's polling to back off to its slowest.
    await sleep(400);
    acquires = 0;
    holder();
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    // One woken waiter asks (a poll falling due in these few microseconds may add one).
    expect(acquires).toBeGreaterThanOrEqual(1);
    expect(acquires).toBeLessThanOrEqual(2);
    // Then each one in turn gets the slot.
    for (const waiter of waiters) (await waiter)();
  });
});

describe.skipIf(!redisAvailable())('leases left in Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('an acquire that timed out here but ran in Redis is released once Redis answers again', async () => {
    const metrics = createMetrics();
    const state = new DegradingState(new RedisState({ url: redis.url, commandTimeoutMs: 200 }), metrics, { probeMs: 50, timeoutMs: 200 });
    try {
      // Until Redis first answered, memory serves: wait for the shared state.
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await sleep(20);
      expect(state.status().state).toBe('shared');
      const key = `test:lease:${Math.random()}`;
      // Redis holds every write (the lease script included) for 800 ms: the acquire times out here, then runs there.
      await redis.inspect().call('CLIENT', 'PAUSE', '800', 'WRITE');
      const lease = await state.acquireLease(key, 5, 60_000);
      expect(lease).toBeDefined();
      expect(state.status().state).toBe('degraded');
      await lease?.release();
      for (let i = 0; i < 100 && state.status().state !== 'shared'; i++) await sleep(20);
      expect(state.status().state).toBe('shared');
      // The script ran after the pause; the lease it took is given back rather than held for a minute.
      let held = -1;
      for (let i = 0; i < 50; i++) {
        held = await redis.inspect().zcard(key);
        if (held === 0) break;
        await sleep(20);
      }
      expect(held).toBe(0);
    } finally {
      await state.close();
    }
  });
});

describe('a chained write whose later step a budget holds back', () => {
  const UNCONFIRMED = 'The change may have been applied in part; list before retrying';
  const chain: Mapping = defineWriteMapping({
    kind: 'write',
    id: 'test.budget-chain',
    method: 'DELETE',
    route: '/v2/budget_chain.{format}',
    operation: 'DeploymentCreate',
    stepOperations: ['ApplicationDelete'],
    summary: 'a test write in two steps, no partialTitle',
    fidelity: 'approximate',
    successStatus: 200,
    unconfirmedTitle: UNCONFIRMED,
    parameters: NO_PARAMS,
    fields: [],
    knownGaps: [],
    assumptions: [],
    async plan() {
      return { variables: { step: 1 }, next: () => ({ operation: 'ApplicationDelete', variables: { step: 2 }, answer: () => ({ done: true }) }) };
    },
  });

  async function remove(heldBackStep: number): Promise<{ status: number; body: { error?: { title: string } }; sent: number }> {
    let sent = 0;
    let steps = 0;
    const nerdgraph: NerdGraph = {
      async call<T>(upstream: UpstreamCall): Promise<T> {
        if (upstream.operation === 'AccessibleAccounts') return { actor: { accounts: [{ id: 1, name: 'one' }] } } as T;
        steps++;
        if (steps === heldBackStep) throw new OverBudget("NerdGraph's limit of 1 concurrent requests for this API key is in use; nothing was sent, retry later", 1);
        sent++;
        return { step: steps } as T;
      },
    };
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1000, accountsCacheTtlMs: 1000, metricNamesLookbackMs: 1000, requestDeadlineMs: 5000 },
      nerdgraph,
      nerdgraphUrl: 'http://127.0.0.1:9/graphql',
      mappings: [chain],
      metrics: createMetrics(),
      logger: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
      now: () => 0,
    });
    const response = await app.request('/v2/budget_chain.json', { method: 'DELETE', headers: { 'x-api-key': KEY } });
    return { status: response.status, body: (await response.json()) as { error?: { title: string } }, sent };
  }

  it('answers the 409 partial outcome (the route has no partialTitle: its unconfirmed title), never a 5xx', async () => {
    const second = await remove(2);
    expect(second.status).toBe(409);
    expect(second.body.error?.title).toBe(`${UNCONFIRMED}: the next step was held back to stay within NerdGraph's limits, so it was not sent`);
    expect(second.sent).toBe(1);
    // The first step held back: nothing was sent, v2's 429.
    const first = await remove(1);
    expect(first.status).toBe(429);
    expect(first.sent).toBe(0);
  });
});

describe('a retry held back by a budget', () => {
  it('fails the call as its earlier attempt did (what NerdGraph said), not as a refusal of a call that was in fact sent', async () => {
    let received = 0;
    const upstream = await listenOnLoopback(
      createServer((_req, res) => {
        received++;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"errors":[{"message":"try again"}]}');
      }),
    );
    try {
      let admits = 0;
      const budget: NerdGraphBudget = {
        async admit() {
          admits++;
          if (admits > 1) throw new OverBudget('held back', 1);
          return () => undefined;
        },
      };
      const client = createNerdGraphClient({ url: `${upstream.origin}/graphql`, documents: loadDocuments(), metrics: createMetrics(), timeoutMs: 5_000, retries: 2, budget });
      const error: unknown = await client.call({ operation: 'ApplicationByGuid', variables: { guid: 'x' }, apiKey: KEY, signal: AbortSignal.timeout(5_000) }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).not.toBeInstanceOf(OverBudget);
      expect((error as UpstreamError).sent).toBe(true);
      // Held back once, no further attempt.
      expect(received).toBe(1);
      expect(admits).toBe(2);
    } finally {
      await upstream.close();
    }
  });
});
