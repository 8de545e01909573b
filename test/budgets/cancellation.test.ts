import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/budget/budgets.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { localState } from '../../src/state/open.ts';
import type { SharedState } from '../../src/state/shared-state.ts';
import { createNerdGraphClient, type NerdGraphBudget } from '../../src/upstream/client.ts';
import type { OperationDocument, OperationDocuments } from '../../src/upstream/documents.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { json, startFakeUpstream } from '../support/fake-upstream.ts';

/**
 * Clients that leave while their calls wait in the concurrency queue: a call whose request
 * signal has fired never reaches NerdGraph, never takes a slot, and hands on any slot it was
 * woken for, so a client still waiting behind it gets that slot.
 */
const KEY = 'NRAK-BUDGET-CANCELLATION';
const read: OperationDocument = { name: 'Read', kind: 'query', text: 'query Read($id: Int) { actor { user { id } } }' };
const documents: OperationDocuments = new Map([['Read', read]]);

/** A client leaving: any reason but TimeoutError (the deadline) is a cancellation. */
const clientLeft = (): DOMException => new DOMException('the client closed the request', 'AbortError');
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/** Memory state that counts lease acquisitions (to know when every call has queued). */
function countingState(shared: ReturnType<typeof localState>): { state: SharedState; acquires: () => number } {
  let acquires = 0;
  const state = Object.assign(Object.create(shared.state) as SharedState, {
    acquireLease: (key: string, limit: number, ttlMs: number) => {
      acquires++;
      return shared.state.acquireLease(key, limit, ttlMs);
    },
  });
  return { state, acquires: () => acquires };
}

describe('clients that leave while queued for a slot', () => {
  it('are never sent, even when the slots their neighbours free come in the same turn; the live call behind them gets one', async () => {
    const LIVE = 999;
    const held: ServerResponse[] = [];
    // NerdGraph answers the live call at once; every other call hangs until the gateway hangs up.
    const upstream = await startFakeUpstream((request, res) => {
      if (request.variables.id === LIVE) json(res, 200, { data: { actor: { user: { id: 1 } } } });
      else held.push(res);
    });
    closers.push(upstream.close);
    const shared = localState();
    const { state, acquires } = countingState(shared);
    const metrics = createMetrics();
    const budget: NerdGraphBudget = createBudgets({ ...shared, state, limits: { concurrencyPerKey: 2, nrqlPerAccountPerMinute: 100, identicalQueryPerMinute: 100 }, metrics, callBoundMs: 10_000 });
    const client = createNerdGraphClient({ url: upstream.url, documents, metrics, timeoutMs: 10_000, retries: 0, budget });
    const callWith = (id: number, signal: AbortSignal): Promise<string> =>
      client.call({ operation: 'Read', variables: { id }, apiKey: KEY, signal }).then(
        () => 'answered',
        (error: unknown) => (error instanceof UpstreamError ? `${error.errorClass}, sent: ${error.sent}` : String(error)),
      );

    // Two calls hold the key's two slots; twenty more queue behind them, then one whose client stays.
    const leaving = Array.from({ length: 22 }, () => new AbortController());
    const outcomes = leaving.map((controller, id) => callWith(id, controller.signal));
    while (upstream.received.length < 2) await nextTurn();
    const live = callWith(LIVE, AbortSignal.timeout(10_000));
    while (acquires() < leaving.length + 1) await nextTurn();

    // Every client but the live one leaves in one turn of the event loop (as a server learns of
    // clients that hung up together): each hang-up in its own callback, those holding slots first.
    for (const controller of leaving) setImmediate(() => controller.abort(clientLeft()));

    expect(await live).toBe('answered');
    const results = await Promise.all(outcomes);
    expect(results.slice(0, 2)).toEqual(['cancelled, sent: true', 'cancelled, sent: true']);
    expect(results.slice(2)).toEqual(Array(20).fill('cancelled, sent: false'));
    // NerdGraph saw the two calls in flight before the clients left, and the live call: nothing else.
    expect(upstream.received.map((request) => request.variables.id)).toEqual([0, 1, LIVE]);
    expect(await state.leaseCount(shared.keyOf('concurrency', shared.identityOf(KEY)))).toBe(0);
  });

  it('a waiter woken for a freed slot whose client leaves in that same turn hands the slot to the next waiter', async () => {
    const shared = localState();
    const { state, acquires } = countingState(shared);
    const budget = createBudgets({ ...shared, state, limits: { concurrencyPerKey: 1, nrqlPerAccountPerMinute: 100, identicalQueryPerMinute: 100 }, metrics: createMetrics(), callBoundMs: 10_000 });
    const admit = (signal: AbortSignal): Promise<() => void> => budget.admit({ operation: 'Read', variables: {}, apiKey: KEY }, read, signal);
    const holder = await admit(AbortSignal.timeout(10_000));
    const leaving = new AbortController();
    const left = admit(leaving.signal).then(
      () => 'admitted',
      (error: unknown) => (error instanceof UpstreamError ? error.errorClass : String(error)),
    );
    let liveAdmitted = false;
    const live = admit(AbortSignal.timeout(10_000)).then((release) => {
      liveAdmitted = true;
      return release;
    });
    // Both wait; let their polling back off (to 100 ms), so only a wake-up can bring the slot at once.
    while (acquires() < 3) await nextTurn();
    await new Promise((resolve) => setTimeout(resolve, 300));

    holder();
    // The first waiter is woken for the slot; its client leaves in the same turn, before it takes it.
    setImmediate(() => leaving.abort(clientLeft()));
    for (let turn = 0; turn < 10 && !liveAdmitted; turn++) await nextTurn();

    expect(await left).toBe('cancelled');
    expect(liveAdmitted).toBe(true);
    (await live)();
  });
});

describe('a slot freed for a queued call', () => {
  it('goes to the call woken for it, not to a call that arrives in the same turn', async () => {
    const budget = createBudgets({ ...localState(), limits: { concurrencyPerKey: 1, nrqlPerAccountPerMinute: 100, identicalQueryPerMinute: 100 }, metrics: createMetrics(), callBoundMs: 10_000 });
    const admit = (): Promise<() => void> => budget.admit({ operation: 'Read', variables: {}, apiKey: KEY }, read, AbortSignal.timeout(10_000));
    const firsts: string[] = [];
    for (let round = 0; round < 10; round++) {
      const holder = await admit();
      const order: string[] = [];
      const waiter = admit().then((release) => (order.push('waiter'), release));
      // The waiter is queued (it polls, and waits to be woken).
      await new Promise((resolve) => setTimeout(resolve, 20));
      // The slot is freed, and a new call arrives, in one turn of the loop.
      let newcomer: Promise<() => void> | undefined;
      await new Promise<void>((resolve) => {
        setTimeout(() => holder(), 0);
        setTimeout(() => {
          newcomer = admit().then((release) => (order.push('newcomer'), release));
          resolve();
        }, 0);
      });
      if (newcomer === undefined) throw new Error('the newcomer was not sent');
      (await Promise.race([waiter, newcomer]))();
      (await (order[0] === 'waiter' ? newcomer : waiter))();
      firsts.push(order[0] as string);
    }
    expect(firsts).toEqual(Array(10).fill('waiter'));
  });
});
