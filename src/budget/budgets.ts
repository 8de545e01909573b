import type { IdentityOf } from '../caller/identity.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { Lease, SharedState, StateKeyer } from '../state/shared-state.ts';
import type { NerdGraphBudget, UpstreamCall } from '../upstream/client.ts';
import type { OperationDocument } from '../upstream/documents.ts';
import { OverBudget, UpstreamError } from '../upstream/errors.ts';
import { accountOf, createNrqlProfiles, nrqlTextsOf } from './nrql-cost.ts';
import { requestDue } from './request-due.ts';

/**
 * NerdGraph's limits, applied before NerdGraph would, across every replica sharing the state
 * (Redis; without it this process's memory, so one replica alone keeps them too):
 * - concurrency: at most `concurrencyPerKey` calls in flight per caller (a lease each, by the
 *   key's HMAC identity; a dead replica's leases expire after the longest call could last);
 * - NRQL per account per minute: each call spends the number of `nrql` fields it runs;
 * - identical query per minute: per caller and identical NRQL text. That is what NerdGraph
 *   counts ("the same query repeated by the same user"): entity reads have no such limit, and
 *   an NRQL text shared by two operations (or two routes) is still one query to NerdGraph.
 *
 * Each attempt actually sent is admitted (a retry too; a micro-cache hit never asks). A call
 * over a budget is queued: it polls for a lease (woken at once by a release in this process),
 * or sleeps until the spent window resets, as long as the request's deadline leaves time to
 * answer; then it is refused, not sent: v2's 429 with Retry-After (OverBudget).
 *
 * Spend order: the lease first, the windows only once it is held, so a call that gives up
 * waiting for a lease has spent no window. Windows are spent one key at a time (identical
 * texts, then the account): when a later one refuses, what the earlier ones spent stays spent,
 * and is spent again if the call retries after the reset. That over-counts (at most one call's
 * cost per wait), the safe way round: never more than NerdGraph allows.
 *
 * Known limits: the queue is not FIFO (waiters poll, at most every 100 ms, and the first to
 * find a free slot takes it); while Redis is unreachable a replica keeps the budgets in its own
 * memory (src/state/degrading-state.ts), so N degraded replicas may together send N times a
 * limit; a call costing more NRQL than the whole per-minute budget is always refused. Decisions
 * are counted as immediate, queued or refused; a call whose client left while it was queued is
 * not a decision (it is the request's cancellation, counted there).
 */
export interface BudgetLimits {
  concurrencyPerKey: number;
  nrqlPerAccountPerMinute: number;
  identicalQueryPerMinute: number;
}

export interface BudgetOptions {
  state: SharedState;
  keyOf: StateKeyer;
  identityOf: IdentityOf;
  limits: BudgetLimits;
  metrics: GatewayMetrics;
  /**
   * The longest one call may last (the client's per-call bound): a lease lives a margin past
   * it, and a call whose request deadline is unknown waits no longer.
   */
  callBoundMs: number;
}

type BudgetName = 'concurrency' | 'nrql_account' | 'identical_query';

const WINDOW_MS = 60_000;
/** A lease outlives its call's bound by this much: a slow release is not a second slot. */
const LEASE_MARGIN_MS = 5_000;
/** A queued call leaves this long before its request's deadline, to answer 429 itself. */
const LEAVE_MARGIN_MS = 100;
/** Lease polling: starts fast (a slot frees within one NerdGraph call), backs off to this. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;
/** Retry-After when a lease is what was missing: a slot frees within one call. */
const CONCURRENCY_RETRY_AFTER_S = 1;

interface WindowRefusal {
  budget: Exclude<BudgetName, 'concurrency'>;
  retryAfterMs: number;
}

/** Resolves after `ms`, when `signal` fires, or when `wake` is called, whichever is first. */
function pause(ms: number, signal: AbortSignal, waiters?: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      waiters?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
    waiters?.add(done);
  });
}

/** Why a queued call stops: its deadline (429: it could not be admitted in time) or its caller left. */
function stopped(signal: AbortSignal, refusal: () => OverBudget): UpstreamError {
  const reason: unknown = signal.reason;
  const name = reason !== null && typeof reason === 'object' ? (reason as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError') return refusal();
  return new UpstreamError('cancelled', 'the request was cancelled while queued for a NerdGraph budget', { sent: false });
}

export function createBudgets(options: BudgetOptions): NerdGraphBudget {
  const { state, keyOf, identityOf, limits, metrics } = options;
  const profileOf = createNrqlProfiles();
  const leaseTtlMs = options.callBoundMs + LEASE_MARGIN_MS;
  /** This process's calls waiting for a lease, by lease key: a release here wakes them at once. */
  const leaseWaiters = new Map<string, Set<() => void>>();

  const titles: Record<BudgetName, (account?: number) => string> = {
    concurrency: () => `NerdGraph's limit of ${limits.concurrencyPerKey} concurrent requests for this API key is in use; nothing was sent, retry later`,
    nrql_account: (account) =>
      `NerdGraph's budget of ${limits.nrqlPerAccountPerMinute} NRQL queries per minute for account ${account ?? ''} is spent; nothing was sent, retry later`,
    identical_query: () =>
      `This NRQL query was already sent ${limits.identicalQueryPerMinute} times this minute with this API key (NerdGraph's limit for identical queries); nothing was sent, retry later`,
  };

  function waitersOf(key: string): Set<() => void> {
    let waiters = leaseWaiters.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      leaseWaiters.set(key, waiters);
    }
    return waiters;
  }

  function wakeWaiters(key: string): void {
    const waiters = leaseWaiters.get(key);
    if (waiters === undefined) return;
    leaseWaiters.delete(key);
    for (const wake of waiters) wake();
  }

  /** Spends each window the call uses; the first refusal, or undefined when all were spent. */
  async function spendWindows(identity: string, account: number | undefined, cost: number, texts: readonly string[]): Promise<WindowRefusal | undefined> {
    const repeats = new Map<string, number>();
    for (const text of texts) repeats.set(text, (repeats.get(text) ?? 0) + 1);
    for (const [text, times] of repeats) {
      const spent = await state.spend(keyOf('identical', identity, text), times, limits.identicalQueryPerMinute, WINDOW_MS);
      if (!spent.spent) return { budget: 'identical_query', retryAfterMs: spent.retryAfterMs };
    }
    if (account !== undefined && cost > 0) {
      const spent = await state.spend(keyOf('nrql-account', account), cost, limits.nrqlPerAccountPerMinute, WINDOW_MS);
      if (!spent.spent) return { budget: 'nrql_account', retryAfterMs: spent.retryAfterMs };
    }
    return undefined;
  }

  return {
    async admit(call: UpstreamCall, document: OperationDocument, deadline: AbortSignal): Promise<() => void> {
      const started = performance.now();
      // Leave the queue in time to answer before the request's deadline (or the call's own bound).
      const leaveAt = Math.min(started + options.callBoundMs, requestDue() ?? Number.POSITIVE_INFINITY) - LEAVE_MARGIN_MS;
      const identity = identityOf(call.apiKey);
      const profile = profileOf(document);
      const account = accountOf(call.variables);
      const cost = account === undefined ? 0 : profile.queries;
      const texts = nrqlTextsOf(profile, call.variables);
      const applies: BudgetName[] = ['concurrency', ...(cost > 0 ? (['nrql_account'] as const) : []), ...(texts.length > 0 ? (['identical_query'] as const) : [])];
      const waitedMs: Record<BudgetName, number> = { concurrency: 0, nrql_account: 0, identical_query: 0 };
      const queued = new Set<BudgetName>();
      const leaseKey = keyOf('concurrency', identity);

      const refuse = (budget: BudgetName, retryAfterMs: number): OverBudget => {
        metrics.budgetDecisions.inc({ budget, result: 'refused' });
        metrics.budgetWaitSeconds.observe({ budget }, waitedMs[budget] / 1000);
        return new OverBudget(titles[budget](account), retryAfterMs / 1000);
      };
      const timed = async (budget: BudgetName, wait: Promise<void>): Promise<void> => {
        const from = performance.now();
        await wait;
        waitedMs[budget] += performance.now() - from;
      };

      async function leaseInTime(): Promise<Lease> {
        let poll = FIRST_POLL_MS;
        for (;;) {
          const lease = await state.acquireLease(leaseKey, limits.concurrencyPerKey, leaseTtlMs);
          if (lease !== undefined) return lease;
          queued.add('concurrency');
          if (deadline.aborted) throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
          const left = leaveAt - performance.now();
          if (left <= 0) throw refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000);
          const waiters = waitersOf(leaseKey);
          await timed('concurrency', pause(Math.min(poll, left), deadline, waiters));
          if (waiters.size === 0 && leaseWaiters.get(leaseKey) === waiters) leaseWaiters.delete(leaseKey);
          poll = Math.min(poll * 2, MAX_POLL_MS);
        }
      }

      for (;;) {
        const lease = await leaseInTime();
        let refusal: WindowRefusal | undefined;
        try {
          // Fired while the lease was taken: spend no window for a call that will not go.
          if (deadline.aborted) throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
          refusal = await spendWindows(identity, account, cost, texts);
        } catch (error) {
          await lease.release().catch(() => undefined);
          throw error;
        }
        if (refusal === undefined) {
          for (const budget of applies) {
            metrics.budgetDecisions.inc({ budget, result: queued.has(budget) ? 'queued' : 'immediate' });
            metrics.budgetWaitSeconds.observe({ budget }, waitedMs[budget] / 1000);
          }
          metrics.nerdgraphInFlight.inc();
          let released = false;
          return () => {
            if (released) return;
            released = true;
            metrics.nerdgraphInFlight.dec();
            void lease
              .release()
              .catch(() => undefined)
              .finally(() => wakeWaiters(leaseKey));
          };
        }
        // A spent window: give the slot back while waiting for the window to reset.
        await lease.release().catch(() => undefined);
        wakeWaiters(leaseKey);
        queued.add(refusal.budget);
        if (performance.now() + refusal.retryAfterMs > leaveAt) throw refuse(refusal.budget, refusal.retryAfterMs);
        const resetAt = performance.now() + refusal.retryAfterMs;
        await timed(refusal.budget, pause(refusal.retryAfterMs, deadline));
        const spent = refusal;
        if (deadline.aborted) throw stopped(deadline, () => refuse(spent.budget, resetAt - performance.now()));
      }
    },
  };
}
