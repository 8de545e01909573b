import { describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/budget/budgets.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { MemoryState } from '../../src/state/memory-state.ts';
import { localState } from '../../src/state/open.ts';
import type { SharedState } from '../../src/state/shared-state.ts';
import type { NerdGraphBudget } from '../../src/upstream/client.ts';
import type { OperationDocument } from '../../src/upstream/documents.ts';
import { OverBudget } from '../../src/upstream/errors.ts';
import { stateBackends, untilAnswering } from '../support/state.ts';

/**
 * An account's NRQL budget shared fairly between its callers: a heavy caller over its share
 * is refused once what the others are likely to ask (their spend the minute before, up to their
 * shares, and at least a floor, the reserve divided between them, less what they spent already)
 * and the reserve are all that is left, so a light caller that has been asking steadily keeps
 * getting its queries through, one in its first minute too, and a caller that asked once holds
 * back its floor; a caller alone spends all but the reserve. Two budgets over one shared
 * state are two replicas; the minute before is reached on a test clock (memory state).
 */
const HEAVY = 'NRAK-FAIR-SHARE-HEAVY';
const LIGHT = 'NRAK-FAIR-SHARE-LIGHT';
const ACCOUNT = 7;
const BUDGET = 100;
const nrqlRead: OperationDocument = {
  name: 'Nrql',
  text: 'query Nrql($accountId: Int!, $q: Nrql!) { actor { account(id: $accountId) { nrql(query: $q) { results } } } }',
  kind: 'query',
};

const backends = stateBackends();

/** Two replicas of one gateway: same state, same secrets, a budget each. */
function replicas(state: SharedState, metrics: GatewayMetrics): [NerdGraphBudget, NerdGraphBudget] {
  const shared = { ...localState(), state };
  const limits = { concurrencyPerKey: 25, nrqlPerAccountPerMinute: BUDGET, identicalQueryPerMinute: 1_000 };
  return [createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 }), createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 })];
}

let query = 0;
/** One NRQL query of the account (a new text each time: the identical-query budget stays out of it). */
async function ask(budget: NerdGraphBudget, apiKey: string): Promise<string> {
  query++;
  return budget.admit({ operation: 'Nrql', variables: { accountId: ACCOUNT, q: `SELECT ${query} FROM Transaction` }, apiKey }, nrqlRead, AbortSignal.timeout(5_000)).then(
    (release) => {
      release();
      return 'admitted';
    },
    (error: unknown) => (error instanceof OverBudget ? `refused: ${error.title}` : String(error)),
  );
}

const decisions = async (metrics: GatewayMetrics, budget: string, result: string): Promise<number> =>
  (await metrics.budgetDecisions.get()).values.filter((v) => v.labels.budget === budget && v.labels.result === result).reduce((sum, v) => sum + v.value, 0);

/** Asks `budget` for `apiKey` until refused (at most `most` times): how many were admitted, and the refusal. */
async function untilRefused(budget: NerdGraphBudget, apiKey: string, most: number): Promise<{ admitted: number; refusal: string }> {
  let admitted = 0;
  for (let i = 0; i < most; i++) {
    const answer = await ask(budget, apiKey);
    if (answer !== 'admitted') return { admitted, refusal: answer };
    admitted++;
  }
  return { admitted, refusal: '' };
}

const NEARLY_SPENT = /^refused: .* is nearly spent, and the rest is kept for callers that used less of it than this API key/;

describe.each(backends)('the NRQL budget of one account (%s)', (_name, open) => {
  it('gives a poller all but the reserve and the others\' floors after four callers asked once each (a budget of 3000)', async () => {
    const state = open();
    try {
      await untilAnswering(state);
      const shared = { ...localState(), state };
      const limits = { concurrencyPerKey: 25, nrqlPerAccountPerMinute: 3000, identicalQueryPerMinute: 1_000 };
      const metrics = createMetrics();
      const [replicaA, replicaB] = [createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 }), createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 })];
      // Four colleagues open one page each; none of them asked the minute before.
      for (const [i, replica] of [replicaA, replicaB, replicaA, replicaB].entries()) expect(await ask(replica, `NRAK-FAIR-SHARE-ONCE-${i}`)).toBe('admitted');
      // A dashboard poller of the same account: held back for callers with no demand the minute before, the
      // reserve (300) and each one's floor (the reserve over the four: 75, less the one it asked).
      const poller = await untilRefused(replicaA, 'NRAK-FAIR-SHARE-POLLER', 3000);
      expect(poller.admitted).toBe(3000 - 300 - 4 - 4 * (75 - 1));
      expect(poller.refusal).toMatch(NEARLY_SPENT);
      // The reserve is still there for a caller within its share.
      expect(await ask(replicaB, 'NRAK-FAIR-SHARE-ONCE-0')).toBe('admitted');
    } finally {
      await state.close();
    }
  });

  it('spends all but the reserve and the floor for a heavy caller when the light one has no recent demand, and both serve the light one', async () => {
    const state = open();
    try {
      await untilAnswering(state);
      const metrics = createMetrics();
      const [replicaA, replicaB] = replicas(state, metrics);
      expect(await ask(replicaB, LIGHT)).toBe('admitted');
      // Two callers seen (a share of 50 each), but the light one asked nothing the window before: the reserve (10)
      // and the light one's floor (the whole reserve, the only other caller: 10, less the one it asked) are kept.
      const heavy = await untilRefused(replicaA, HEAVY, BUDGET);
      const floor = BUDGET / 10;
      expect(heavy.admitted).toBe(BUDGET - BUDGET / 10 - (floor - 1) - 1);
      expect(heavy.refusal).toBe(
        `refused: NerdGraph's budget of ${BUDGET} NRQL queries per minute for account ${ACCOUNT} is nearly spent, and the rest is kept for callers that used less of it than this API key; nothing was sent, retry later`,
      );
      // The light caller, within its share, spends its floor and the reserve on either replica; then the account's budget is spent.
      const light: string[] = [];
      for (let i = 0; i <= floor - 1 + BUDGET / 10; i++) light.push(await ask(i % 2 === 0 ? replicaB : replicaA, LIGHT));
      expect(light.slice(0, floor - 1 + BUDGET / 10)).toEqual(Array(floor - 1 + BUDGET / 10).fill('admitted'));
      expect(light.at(-1)).toMatch(/^refused: .* for account 7 is spent;/);
      // What an operator sees: the heavy caller refused by its fair share; decided by it, the heavy caller's
      // calls past its share of 50 and the light one's from the reserve.
      expect(await decisions(metrics, 'nrql_fair_share', 'refused')).toBe(1);
      expect(await decisions(metrics, 'nrql_fair_share', 'immediate')).toBe(heavy.admitted - BUDGET / 2 + BUDGET / 10);
      expect(await decisions(metrics, 'nrql_account', 'refused')).toBe(1);
    } finally {
      await state.close();
    }
  });

  it('keeps the reserve for a caller that comes only after a heavy one spent all it may', async () => {
    const state = open();
    try {
      await untilAnswering(state);
      const [replicaA, replicaB] = replicas(state, createMetrics());
      const heavy: string[] = [];
      // Alone on the account, the heavy caller spends all but the reserve (10%), on both replicas.
      for (let i = 0; i <= BUDGET; i++) heavy.push(await ask(i % 2 === 0 ? replicaA : replicaB, HEAVY));
      const reserve = BUDGET / 10;
      expect(heavy.slice(0, BUDGET - reserve)).toEqual(Array(BUDGET - reserve).fill('admitted'));
      expect(new Set(heavy.slice(BUDGET - reserve))).toEqual(new Set([expect.stringMatching(/^refused: .* is nearly spent, and the rest is kept/)]));
      // A caller the account had not seen (a CI job's deployment) still gets the reserve.
      const light: string[] = [];
      for (const replica of [replicaA, replicaB, replicaA]) light.push(await ask(replica, LIGHT));
      expect(light).toEqual(Array(3).fill('admitted'));
    } finally {
      await state.close();
    }
  });
});

describe('a caller\'s part of the account resets with the account', () => {
  it('so a heavy caller that started later in the window cannot take the reserve back mid-window', async () => {
    const windowMs = 800;
    const limits = { concurrencyPerKey: 25, nrqlPerAccountPerMinute: BUDGET, identicalQueryPerMinute: 1_000 };
    const budget = createBudgets({ ...localState(), limits, metrics: createMetrics(), callBoundMs: 500, windowMs });
    const started = Date.now();
    const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    // The light caller uses the account from the start; the heavy one comes half a window later, flat out.
    expect(await ask(budget, LIGHT)).toBe('admitted');
    await pause(windowMs / 2);
    let stop = false;
    const heavy = (async () => {
      while (!stop) {
        await ask(budget, HEAVY);
        await pause(2);
      }
    })();
    // Within the reserve (10 a window), asked through two and a half windows: every one goes.
    const light: string[] = [];
    while (Date.now() - started < 3 * windowMs) {
      light.push(await ask(budget, LIGHT));
      await pause(windowMs / 8);
    }
    stop = true;
    await heavy;
    expect(light.filter((answer) => answer !== 'admitted')).toEqual([]);
    expect(light.length).toBeGreaterThan(10);
  });
});

describe('what an account holds back for a caller follows its demand (memory state on a test clock)', () => {
  const MINUTE = 60_000;
  /** Two replicas over one MemoryState, all on `clock` (the presence windows, the state's windows). */
  function onClock(clock: () => number, nrqlPerAccountPerMinute: number): [NerdGraphBudget, NerdGraphBudget] {
    const shared = { ...localState(), state: new MemoryState(clock), now: clock };
    const limits = { concurrencyPerKey: 25, nrqlPerAccountPerMinute, identicalQueryPerMinute: 1_000 };
    const metrics = createMetrics();
    return [createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 }), createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 })];
  }

  it('serves a light caller far under its share that has been asking steadily, however hard a heavy one asks (a budget of 300)', async () => {
    let now = 28_000_000 * MINUTE;
    const [replicaA, replicaB] = onClock(() => now, 300);
    // The minute before: the light caller asks 55 times, about once a second.
    for (let i = 0; i < 55; i++) {
      expect(await ask(i % 2 === 0 ? replicaB : replicaA, LIGHT)).toBe('admitted');
      now += 1_000;
    }
    now = 28_000_001 * MINUTE;
    expect(await ask(replicaB, LIGHT)).toBe('admitted');
    // The heavy caller, flat out on one replica, ten queries for each of the light caller's.
    let heavyAdmitted = 0;
    for (let i = 0; i < 270; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
    const light: string[] = [];
    for (let round = 0; round < 54; round++) {
      now += 500;
      light.push(await ask(round % 2 === 0 ? replicaB : replicaA, LIGHT));
      for (let i = 0; i < 10; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
    }
    // 55 queries, as the minute before (a third of its share of 150): every one served.
    expect(light).toEqual(Array(54).fill('admitted'));
    // The heavy caller had all but the reserve and the light caller's 55.
    expect(heavyAdmitted).toBe(300 - 30 - 55);
  });

  it('serves every ask of a light caller in its first minute on the account, while a heavy one floods, until the account is spent (a budget of 300)', async () => {
    const now = 28_000_000 * MINUTE;
    const [replicaA, replicaB] = onClock(() => now, 300);
    expect(await ask(replicaB, LIGHT)).toBe('admitted');
    let heavyAdmitted = 0;
    for (let i = 0; i < 270; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
    const light: string[] = [];
    for (let round = 0; round < 54; round++) {
      light.push(await ask(round % 2 === 0 ? replicaB : replicaA, LIGHT));
      for (let i = 0; i < 10; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
    }
    // No spend the minute before: held back for it, its floor (the reserve, the only other caller: 30) and the reserve (30).
    expect(light).toEqual(Array(54).fill('admitted'));
    expect(heavyAdmitted).toBe(300 - 30 - 30);
    // It asks on until the account's budget is spent: refused only then, never by what the heavy caller took.
    const rest = await untilRefused(replicaB, LIGHT, 300);
    expect(rest.admitted).toBe(300 - heavyAdmitted - 55);
    expect(rest.refusal).toMatch(/^refused: .* for account 7 is spent;/);
  });

  it('holds back for a light caller the next minute what it asked in its first, the asks refused once the account was spent included', async () => {
    let now = 28_000_000 * MINUTE;
    const [replicaA, replicaB] = onClock(() => now, 300);
    expect(await ask(replicaB, LIGHT)).toBe('admitted');
    for (let i = 0; i < 270; i++) await ask(replicaA, HEAVY);
    // It asks 70 more: its floor and the reserve serve 59 of them, then the account is spent.
    const light: string[] = [];
    for (let i = 0; i < 70; i++) light.push(await ask(i % 2 === 0 ? replicaB : replicaA, LIGHT));
    expect(light.filter((answer) => answer === 'admitted')).toHaveLength(59);
    expect(light.slice(59)).toEqual(Array(11).fill(expect.stringMatching(/^refused: .* for account 7 is spent;/)));
    // The next minute, before it asks again: held back for it, the 71 it asked (under its share of 150), and the reserve.
    now = 28_000_001 * MINUTE;
    const heavy = await untilRefused(replicaA, HEAVY, 300);
    expect(heavy.admitted).toBe(300 - 30 - 71);
    expect(heavy.refusal).toMatch(NEARLY_SPENT);
  });

  it('holds back for a caller what it spent the minute before, up to its share and at least its floor, less what it spent already', async () => {
    let now = 28_000_000 * MINUTE;
    const [replicaA, replicaB] = onClock(() => now, 300);
    // The minute before: one caller asks 20 times, another 200 (over its share of 150), a third once.
    for (let i = 0; i < 20; i++) expect(await ask(replicaA, LIGHT)).toBe('admitted');
    for (let i = 0; i < 200; i++) expect(await ask(replicaB, 'NRAK-FAIR-SHARE-BUSY')).toBe('admitted');
    expect(await ask(replicaA, 'NRAK-FAIR-SHARE-ONCE')).toBe('admitted');
    now = 28_000_001 * MINUTE;
    // This minute the light caller has asked 5 times already; the others not yet.
    for (let i = 0; i < 5; i++) expect(await ask(replicaB, LIGHT)).toBe('admitted');
    // Four callers seen (a share of 75, a floor of 30 / 3 = 10): held back, the reserve (30), the light caller's 15 to come,
    // the busy one's 75 (its share), the one-shot's floor of 10 (more than the 1 it asked).
    const heavy = await untilRefused(replicaA, HEAVY, 300);
    expect(heavy.admitted).toBe(300 - 30 - 15 - 75 - 10 - 5);
    expect(heavy.refusal).toMatch(NEARLY_SPENT);
  });

  it('holds nothing back for callers that asked nothing the minute before but the reserve, whatever they asked longer ago', async () => {
    let now = 28_000_000 * MINUTE;
    const [replicaA, replicaB] = onClock(() => now, 300);
    for (let i = 0; i < 100; i++) expect(await ask(replicaB, LIGHT)).toBe('admitted');
    // Two minutes later the light caller is no longer seen, and nothing is held back for it.
    now = 28_000_002 * MINUTE;
    const heavy = await untilRefused(replicaA, HEAVY, 300);
    expect(heavy.admitted).toBe(300 - 30);
  });
});
