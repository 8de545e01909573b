import { describe, expect, it } from 'vitest';
import type { SandboxBehaviours } from '../behaviours.ts';
import type { SandboxApp } from '../model.ts';
import { answerWidth, effectiveTimeoutSeconds, nrqlCostSeconds, NRQL_TIMEOUT_MESSAGE } from '../nrql/cost.ts';
import { createSandbox } from '../server.ts';
import { metricsOf } from '../timeslices.ts';

/**
 * NRQL timeouts, the sandbox's side: an NRQL query costs simulated time that grows with its
 * window and its FACET/uniques width; past its `timeout` (default 5 s, clamped to 5–120 s) the
 * nrql field fails with NerdGraph's TIMEOUT error, and only that field (partial data).
 */
const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const DEMO = 'NRAK-SANDBOX-DEMO';
const PRIMARY = 1000001;

function sandboxWith(behave: Partial<SandboxBehaviours>) {
  return createSandbox({ seed: 7, apmApps: 20, now: () => FIXED, behave: { nrqlClockScale: 1, ...behave } });
}

interface Answer {
  data?: { actor: { entity: { guid: string } | null; account: { fast: { results: unknown[] } | null; slow: { results: unknown[] } | null } } };
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }>;
}

/** Two NRQL fields in one document, as the gateway's metric-data documents have them. */
const TWO_QUERIES = `query Two($accountId: Int!, $guid: EntityGuid!, $fast: Nrql!, $slow: Nrql!, $timeout: Seconds) {
  actor {
    entity(guid: $guid) { guid }
    account(id: $accountId) {
      fast: nrql(query: $fast, timeout: $timeout) { results }
      slow: nrql(query: $slow, timeout: $timeout) { results }
    }
  }
}`;

async function post(sandbox: ReturnType<typeof createSandbox>, variables: Record<string, unknown>): Promise<Answer> {
  const response = await sandbox.app.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': DEMO },
    body: JSON.stringify({ query: TWO_QUERIES, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
}

/** A reporting app of the primary account with a few dozen metric names (not the bulk one). */
function appOf(sandbox: ReturnType<typeof createSandbox>): SandboxApp {
  return sandbox.data.apps.find((candidate) => candidate.accountId === PRIMARY && candidate.reporting && metricsOf(candidate, sandbox.data).length < 100) as SandboxApp;
}

function queriesFor(app: SandboxApp, lookbackDays: number) {
  const until = Math.floor(FIXED / 60_000) * 60_000;
  return {
    fast: `SELECT count(newrelic.timeslice.value) FROM Metric WHERE appId = ${app.id} SINCE ${until - 30 * 60_000} UNTIL ${until}`,
    slow: `SELECT uniques(metricTimesliceName, 10000) AS names FROM Metric WHERE appId = ${app.id} SINCE ${until - lookbackDays * 86_400_000} UNTIL ${until}`,
  };
}

describe('sandbox: NRQL query cost and timeout', () => {
  it('the cost grows with the window and the width; the timeout defaults to 5 s within 5–120 s', () => {
    const day = 86_400_000;
    expect(nrqlCostSeconds({ windowMs: 7 * day, width: 0 })).toBeGreaterThan(nrqlCostSeconds({ windowMs: day, width: 0 }));
    expect(nrqlCostSeconds({ windowMs: day, width: 2000 })).toBeGreaterThan(nrqlCostSeconds({ windowMs: day, width: 10 }));
    expect(answerWidth([{ facet: 'a', x: 1 }, { facet: 'a', x: 2 }, { facet: 'b', x: 3 }])).toBe(2);
    expect(answerWidth([{ names: ['a', 'b', 'c'] }])).toBe(3);
    expect(effectiveTimeoutSeconds(undefined)).toBe(5);
    expect(effectiveTimeoutSeconds(1)).toBe(5);
    expect(effectiveTimeoutSeconds(30)).toBe(30);
    expect(effectiveTimeoutSeconds(600)).toBe(120);
  });

  it('a query past its timeout fails that nrql field only, with NerdGraph TIMEOUT error; the rest of the answer stands', async () => {
    const sandbox = sandboxWith({});
    const app = appOf(sandbox);
    // 600 days cost 6 s simulated: past the default 5 s.
    const answer = await post(sandbox, { accountId: PRIMARY, guid: app.guid, ...queriesFor(app, 600) });
    expect(answer.data?.actor.entity?.guid).toBe(app.guid);
    expect(answer.data?.actor.account.fast?.results).toHaveLength(1);
    expect(answer.data?.actor.account.slow).toBeNull();
    expect(answer.errors).toEqual([
      expect.objectContaining({ message: NRQL_TIMEOUT_MESSAGE, path: ['actor', 'account', 'slow'], extensions: { errorClass: 'TIMEOUT' } }),
    ]);
  });

  it('a timeout long enough lets the same query finish', async () => {
    const sandbox = sandboxWith({});
    const app = appOf(sandbox);
    const answer = await post(sandbox, { accountId: PRIMARY, guid: app.guid, ...queriesFor(app, 600), timeout: 30 });
    expect(answer.errors).toBeUndefined();
    expect((answer.data?.actor.account.slow?.results[0] as { names: unknown[] }).names.length).toBeGreaterThan(0);
  });

  it('with nrqlTimeouts off, every query answers at once whatever its window', async () => {
    const sandbox = sandboxWith({ nrqlTimeouts: false });
    const app = appOf(sandbox);
    const answer = await post(sandbox, { accountId: PRIMARY, guid: app.guid, ...queriesFor(app, 600) });
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.actor.account.slow).not.toBeNull();
  });
});
