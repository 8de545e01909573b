import { describe, expect, it } from 'vitest';
import { createBudgets } from '../../src/budget/budgets.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { localState } from '../../src/state/open.ts';
import type { UpstreamCall } from '../../src/upstream/client.ts';
import type { OperationDocument } from '../../src/upstream/documents.ts';

/**
 * NerdGraph counts concurrency per user. A key's first accounts look-up runs
 * under the key's own lease, before its user is known (on another replica, say); once this one
 * knows the user, the user's calls must leave room for that look-up while it may be in flight,
 * or the user has one call more in flight than NerdGraph allows (budgets-replicas saw 4 of 3).
 */
const KEY = 'NRAK-USER-LOOKUP';
const read: OperationDocument = { name: 'Read', text: 'query Read { actor { user { id } } }', kind: 'query' };
const call: UpstreamCall = { operation: 'Read', variables: {}, apiKey: KEY };

describe('a key whose user was just learned', () => {
  it("leaves room for the key's own accounts look-up still in flight, then uses the whole limit", async () => {
    const shared = localState();
    const budget = createBudgets({ ...shared, limits: { concurrencyPerKey: 2, nrqlPerAccountPerMinute: 100, identicalQueryPerMinute: 100 }, metrics: createMetrics(), callBoundMs: 10_000 });
    // Another replica's first look-up of the key, before the user was known: the key's own lease.
    const lookup = await shared.state.acquireLease(shared.keyOf('concurrency', shared.identityOf(KEY)), 2, 60_000);
    expect(lookup).toBeDefined();
    shared.keyUsers.remember(shared.identityOf(KEY), '42');
    const signal = AbortSignal.timeout(10_000);
    const first = await budget.admit(call, read, signal);
    let secondAdmitted = false;
    const second = budget.admit(call, read, signal).then((release) => {
      secondAdmitted = true;
      return release;
    });
    // Several polls later the second still waits: the user has the look-up and the first in flight.
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(secondAdmitted).toBe(false);
    await lookup?.release();
    (await second)();
    expect(secondAdmitted).toBe(true);
    first();
  });
});
