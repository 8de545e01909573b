import { describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/budget/budgets.ts';
import { createMetrics, type GatewayMetrics } from '../../src/ops/metrics.ts';
import { localState } from '../../src/state/open.ts';
import type { SharedState } from '../../src/state/shared-state.ts';
import type { NerdGraphBudget } from '../../src/upstream/client.ts';
import type { OperationDocument } from '../../src/upstream/documents.ts';
import { OverBudget } from '../../src/upstream/errors.ts';
import { stateBackends, untilAnswering } from '../support/state.ts';

/**
 * An account's NRQL budget shared fairly between its callers: a heavy caller over its share
 * is refused first, so a light caller of the same account keeps getting its queries through,
 * whether it was seen before the heavy one spent the open part or only after; a caller alone
 * spends all but the reserve. Two budgets over one shared state are two replicas.
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

describe.each(backends)('the NRQL budget of one account (%s)', (_name, open) => {
  it('keeps serving a light caller after a heavy caller on another replica has spent all it may', async () => {
    const state = open();
    try {
      await untilAnswering(state);
      const metrics = createMetrics();
      const [replicaA, replicaB] = replicas(state, metrics);
      // The light caller uses the account now and then; the heavy one asks until it is refused.
      expect(await ask(replicaB, LIGHT)).toBe('admitted');
      let heavyAdmitted = 0;
      let heavyRefusal = '';
      while (heavyRefusal === '' && heavyAdmitted <= BUDGET) {
        const answer = await ask(replicaA, HEAVY);
        if (answer === 'admitted') heavyAdmitted++;
        else heavyRefusal = answer;
      }
      // Two callers seen: a share of half the budget each. The heavy one had its share; what the
      // light one has not spent of its own stays its, on either replica, to the last query.
      expect(heavyAdmitted).toBe(BUDGET / 2);
      expect(heavyRefusal).toBe(
        `refused: NerdGraph's budget of ${BUDGET} NRQL queries per minute for account ${ACCOUNT} is nearly spent, and the rest is kept for callers that used less of it than this API key; nothing was sent, retry later`,
      );
      const light: string[] = [];
      for (let i = 0; i < BUDGET / 2; i++) {
        light.push(await ask(i % 2 === 0 ? replicaB : replicaA, LIGHT));
        if (i % 10 === 0) expect(await ask(replicaB, HEAVY)).toMatch(/^refused: .* is nearly spent/);
      }
      expect(light.slice(0, BUDGET / 2 - 1)).toEqual(Array(BUDGET / 2 - 1).fill('admitted'));
      // Its share spent too, and with it the account's whole budget: refused as the account's.
      expect(light.at(-1)).toMatch(/^refused: .* for account 7 is spent;/);
      // What an operator sees: the heavy caller refused by its fair share, the light one served from the reserve.
      expect(await decisions(metrics, 'nrql_fair_share', 'refused')).toBe(1 + BUDGET / 20);
      expect(await decisions(metrics, 'nrql_fair_share', 'immediate')).toBe(BUDGET / 10);
      expect(await decisions(metrics, 'nrql_account', 'refused')).toBe(1);
    } finally {
      await state.close();
    }
  });

  it('serves a light caller far under its share to the end of the minute, however hard a heavy one asks (a budget of 300)', async () => {
    const state = open();
    try {
      await untilAnswering(state);
      const shared = { ...localState(), state };
      const limits = { concurrencyPerKey: 25, nrqlPerAccountPerMinute: 300, identicalQueryPerMinute: 1_000 };
      const metrics = createMetrics();
      const [replicaA, replicaB] = [createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 }), createBudgets({ ...shared, limits, metrics, callBoundMs: 10_000 })];
      expect(await ask(replicaB, LIGHT)).toBe('admitted');
      // The heavy caller, flat out on one replica, ten queries for each of the light caller's.
      let heavyAdmitted = 0;
      for (let i = 0; i < 270; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
      const light: string[] = [];
      for (let round = 0; round < 54; round++) {
        light.push(await ask(round % 2 === 0 ? replicaB : replicaA, LIGHT));
        for (let i = 0; i < 10; i++) if ((await ask(replicaA, HEAVY)) === 'admitted') heavyAdmitted++;
      }
      // 55 queries, a third of its share of 150: every one served.
      expect(light).toEqual(Array(54).fill('admitted'));
      expect(heavyAdmitted).toBe(150);
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
