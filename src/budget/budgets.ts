import type { IdentityOf } from '../caller/identity.ts';
import type { KeyUsers } from '../caller/key-users.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { SharedState, StateKeyer } from '../state/shared-state.ts';
import type { NerdGraphBudget, UpstreamCall } from '../upstream/client.ts';
import type { OperationDocument } from '../upstream/documents.ts';
import { OverBudget } from '../upstream/errors.ts';
import { CONCURRENCY_RETRY_AFTER_S, leaseInTime, planWindows, spendWindows, type Admission, type BudgetName, type BudgetsContext, type WindowRefusal } from './admission.ts';
import { AccountPresence, reserveOf } from './fair-share.ts';
import { accountOf, createNrqlProfiles, nrqlSpentBy } from './nrql-cost.ts';
import { requestDue } from '../upstream/request-due.ts';
import { SlotWaiters, stopped } from './slot-waiters.ts';
import { pause } from '../upstream/pause.ts';

/**
 * NerdGraph's limits, applied before NerdGraph would, across every replica sharing the state
 * (Redis; without it this process's memory, so one replica alone keeps them too):
 * - concurrency: at most `concurrencyPerKey` calls in flight per caller (a lease each; a dead
 *   replica's leases expire after the longest call could last);
 * - NRQL per account per minute: each call spends the number of `nrql` fields it runs, shared
 *   fairly between the account's callers (below);
 * - identical query per minute: per caller and identical NRQL text. That is what NerdGraph
 *   counts ("the same query repeated by the same user"): entity reads have no such limit, and
 *   an NRQL text shared by two operations (or two routes) is still one query to NerdGraph.
 *
 * The caller is the key's NerdGraph user once known (`user:<id>`, src/caller/key-users.ts), else
 * the key's HMAC identity: NerdGraph tracks and enforces concurrency "per user, not per user key"
 * ("NerdGraph usage limits"), so every key of one user shares one set of budgets, on every
 * replica (the user comes with the key's accounts, in shared state too). A key's first accounts
 * look-up runs before its user is known, under the key's own lease; while it may still be in
 * flight, the user's calls leave room for it (limitNow). Known limit: a look-up that starts after
 * the user's calls filled the limit on another replica may pass it by one (per key being
 * verified, at most once per key a day: src/caller/key-users.ts keeps users a day).
 *
 * Each attempt actually sent is admitted (a retry too; a micro-cache hit never asks). A call
 * over a budget is queued: it polls for a lease (a release in this process wakes one waiter
 * per freed slot at once; the others keep polling), or sleeps until the spent window resets;
 * then it is refused, not sent: v2's 429 with Retry-After (OverBudget).
 *
 * Fair share of an account's NRQL budget B (callers as above: users, or keys not known yet): a
 * caller's share is B divided by the account's callers seen this presence window or the last
 * (windows of the same length, on the clock), itself counted, and never by fewer than two (a
 * caller not seen yet, a CI job's one deployment, has a share too). The last FAIR_SHARE_RESERVE
 * of B (10%, rounded down: none under 10 queries) is a reserve, for callers with no recent
 * history. A caller within its share, this call included, spends while the account has budget
 * at all (the reserve included). A caller over its share spends only what is left once the
 * reserve and the other seen callers' likely asks are held back: each one's spend of the
 * account in the previous presence window, up to its share, and at least a floor (the reserve
 * divided between the other callers, fair-share.ts), less what it has spent of its part this
 * window. So a lone caller spends B less the reserve, one among many at least B less twice the
 * reserve and the others' recent demand, a caller asking steadily under its share is served
 * however hard another one asks, and so is one in its first window (no spend the window before)
 * up to its floor and the reserve; what it was refused within its share once the account was
 * spent counts as spent, so the next window holds it back too. The price: a caller that asked
 * once holds back its floor while it is seen (two windows). A caller over its share is refused
 * (`nrql_fair_share`) until the account's window (with its own part) resets, or the others'
 * likely asks shrink. Across replicas: each caller's part is one more window (`nrql-account`
 * with the caller's identity) spent in the same spendAll, and so is its spend per presence
 * window (keyed by the window, kept two, never refusing); the others' parts are read at once
 * (windowTotals, only for a call over its share), their previous windows' spends once a window
 * per account and replica, and presence is a hash per account and presence window (written
 * once a window per replica, read at most once a second per account and replica,
 * fair-share.ts). A caller's part is created ending when the account's window does
 * (WindowSpend.expiresWith), so they reset together. Approximate on purpose: presence and
 * spend windows are on the clock while the account's window starts with its first spend, a
 * caller nobody has seen for two windows is not counted, one first seen on another replica is
 * counted here within a second, and an account's callers beyond the first 200 have nothing
 * held back for them but the reserve.
 *
 * Clients that leave: a call whose request signal has fired takes no lease and spends no
 * window (checked before each, and again before it is sent). A queued call takes its slot only
 * after the event loop has handled the I/O already received: clients that hung up together
 * (the slot freed by one of them) are then all known to have left, and none of their queued
 * calls is sent. A waiter woken for a slot whose client left hands the wake-up to the next one.
 *
 * Time to send: a call is admitted only while at least a minimum time to send is left before
 * it must leave (LEAVE_MARGIN_MS before its request's due time, or its own bound): 250 ms or 5%
 * of the call bound for a read, 1 s or 20% for a mutation (whose cut-short answer is an
 * "outcome unknown"), whichever is more; but never more than half the time the call had when
 * it asked, so a short deadline alone never refuses a call nobody held back. A call that would
 * be admitted later than that is refused (429) rather than sent to time out (504). Every call
 * to the shared state is raced against that moment too: a stalled Redis (up to
 * STATE_TIMEOUT_MS a call) cannot carry a call past its deadline; a lease that arrives late is
 * given back, a window spend that arrives late stays spent (over-counting, the safe way).
 *
 * Spend order: the lease first, then every window at once (SharedState.spendAll: all or none),
 * so a call refused by one window, or that gives up waiting for a lease, has spent nothing.
 *
 * Known limits: the queue is not FIFO (waiters poll, at most every 100 ms, and the first to
 * find a free slot takes it); while Redis is unreachable a replica keeps the budgets in its own
 * memory (src/state/degrading-state.ts), starting from empty: what was spent in Redis is not
 * known there, so N degraded replicas may together send N times a limit, and a replica that
 * degrades mid-minute may send a full window again. Windows are fixed (they start with their
 * first spend), so up to twice a limit may go across a window's end (the end of one window and
 * the start of the next). A call costing more NRQL than the whole per-minute budget is always
 * refused. Decisions are counted as immediate, queued or refused; a call whose client left
 * while it was queued is not a decision (it is the request's cancellation, counted there). A
 * client whose hang-up the gateway has not read yet is still there for it: its call may go.
 *
 * Its parts: admission.ts (the steps of one call's admission: its windows, its lease, its
 * spends), slot-waiters.ts (the queue for a slot in this process, and the timing helpers),
 * fair-share.ts (the reserve, a caller's share, and presence).
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
  /**
   * Which user owns which key (src/caller/key-users.ts): every budget counts a call against the
   * key's user once the accounts look-up has told it, so keys of one user share their budgets, as
   * NerdGraph counts them. Absent, or the user not known yet: the key's own identity.
   */
  keyUsers?: KeyUsers;
  limits: BudgetLimits;
  metrics: GatewayMetrics;
  /**
   * The longest one call may last (the client's per-call bound): a lease lives a margin past
   * it, and a call whose request deadline is unknown waits no longer.
   */
  callBoundMs: number;
  /** The NRQL windows' length: a minute, as NerdGraph's; shorter in tests. */
  windowMs?: number;
  /** The clock presence windows are counted on (Date.now); a test's own with a MemoryState on it. */
  now?: () => number;
}

const MINUTE_MS = 60_000;
/** A lease outlives its call's bound by this much: a slow release is not a second slot. */
const LEASE_MARGIN_MS = 5_000;
/** A queued call leaves this long before its request's deadline, to answer 429 itself. */
const LEAVE_MARGIN_MS = 100;
/** The least time to send a call once admitted (see above): a floor, and a share of the call bound. */
const MIN_SEND = {
  query: { floorMs: 250, share: 0.05 },
  mutation: { floorMs: 1_000, share: 0.2 },
} as const;

export function createBudgets(options: BudgetOptions): NerdGraphBudget {
  const { state, keyOf, identityOf, limits, metrics } = options;
  const windowMs = options.windowMs ?? MINUTE_MS;
  const profileOf = createNrqlProfiles();
  const leaseTtlMs = options.callBoundMs + LEASE_MARGIN_MS;
  /**
   * The concurrency limit a call under `identity` may fill now. A key's first accounts look-up
   * runs under the key's own lease, before its user is known (on any replica, which learn the
   * user about together): while a call of that look-up may still be in flight (a lease's life
   * since this process learned the user), the user's calls leave room for it, so the user never
   * has more than the limit in flight. A look-up started after the user's calls filled the limit
   * elsewhere is the known limit above.
   */
  const limitNow = async (apiKey: string, identity: string): Promise<number> => {
    const keyIdentity = identityOf(apiKey);
    if (identity === keyIdentity || !options.keyUsers?.learnedWithin(keyIdentity, leaseTtlMs)) return limits.concurrencyPerKey;
    return Math.max(0, limits.concurrencyPerKey - (await state.leaseCount(keyOf('concurrency', keyIdentity))));
  };

  const titles: Record<BudgetName, (account?: number) => string> = {
    concurrency: () => `NerdGraph's limit of ${limits.concurrencyPerKey} concurrent requests for this API key is in use; nothing was sent, retry later`,
    nrql_account: (account) =>
      `NerdGraph's budget of ${limits.nrqlPerAccountPerMinute} NRQL queries per minute for account ${account ?? ''} is spent; nothing was sent, retry later`,
    nrql_fair_share: (account) =>
      `NerdGraph's budget of ${limits.nrqlPerAccountPerMinute} NRQL queries per minute for account ${account ?? ''} is nearly spent, and the rest is kept for callers that used less of it than this API key; nothing was sent, retry later`,
    identical_query: () =>
      `This NRQL query was already sent ${limits.identicalQueryPerMinute} times this minute with this API key (NerdGraph's limit for identical queries); nothing was sent, retry later`,
  };
  /** The shared state answered too late (or the call came too close to its deadline) to send it in time. */
  const NO_TIME_TITLE = "NerdGraph's limits could not be checked in time to send this call before the request's deadline; nothing was sent, retry later";

  // Fair share: the account's last queries are kept for callers within their share (see above).
  const accountBudget = limits.nrqlPerAccountPerMinute;
  const budgets: BudgetsContext = {
    state,
    metrics,
    slots: new SlotWaiters(),
    presence: new AccountPresence(state, keyOf, windowMs, options.now),
    leaseTtlMs,
    accountBudget,
    reserve: reserveOf(accountBudget),
    limitNow,
  };
  const { slots } = budgets;

  /** The minimum time to send (see above), for a call that had `availableMs` when it asked. */
  function minimumSendMs(kind: OperationDocument['kind'], availableMs: number): number {
    const rule = kind === 'mutation' ? MIN_SEND.mutation : MIN_SEND.query;
    return Math.min(Math.max(rule.floorMs, rule.share * options.callBoundMs), Math.max(0, availableMs) / 2);
  }

  return {
    async admit(call: UpstreamCall, document: OperationDocument, deadline: AbortSignal): Promise<() => void> {
      const started = performance.now();
      // Leave the queue in time to answer before the request's deadline (or the call's own bound)...
      const leaveAt = Math.min(started + options.callBoundMs, requestDue() ?? Number.POSITIVE_INFINITY) - LEAVE_MARGIN_MS;
      // ...and admit only while the call can still be sent and answered before then.
      const sendBy = leaveAt - minimumSendMs(document.kind, leaveAt - started);
      // The caller every budget counts: the key's user once known (keys of one user share), else the key.
      const identity = options.keyUsers?.callerOf(identityOf(call.apiKey)) ?? identityOf(call.apiKey);
      const profile = profileOf(document);
      const account = accountOf(call.variables);
      const spent = nrqlSpentBy(profile, call.variables);
      const cost = account === undefined ? 0 : spent.queries;
      const texts = spent.texts;
      const plan = planWindows({ keyOf, identity, account, cost, texts, identicalLimit: limits.identicalQueryPerMinute, windowMs, spentWindow: (on, caller) => budgets.presence.spentWindow(on, caller) });
      if (plan.nrqlAccount !== undefined) budgets.presence.note(plan.nrqlAccount, identity);
      const waitedMs: Record<BudgetName, number> = { concurrency: 0, nrql_account: 0, nrql_fair_share: 0, identical_query: 0 };
      const refuse = (budget: BudgetName, retryAfterMs: number, title = titles[budget](account)): OverBudget => {
        metrics.budgetDecisions.inc({ budget, result: 'refused' });
        metrics.budgetWaitSeconds.observe({ budget }, waitedMs[budget] / 1000);
        return new OverBudget(title, retryAfterMs / 1000, budget);
      };
      const admission: Admission = {
        call,
        identity,
        leaseKey: keyOf('concurrency', identity),
        sendBy,
        deadline,
        queued: new Set(),
        askedReserve: false,
        countedDemand: false,
        refuse: (budget, retryAfterMs) => refuse(budget, retryAfterMs),
        noTime: (budget) => refuse(budget, CONCURRENCY_RETRY_AFTER_S * 1000, NO_TIME_TITLE),
        async timed(budget, wait) {
          const from = performance.now();
          const outcome = await wait;
          waitedMs[budget] += performance.now() - from;
          return outcome;
        },
      };
      const { leaseKey, queued } = admission;

      for (;;) {
        const lease = await leaseInTime(budgets, admission);
        let refusal: WindowRefusal | undefined;
        try {
          // Fired, or no time left to send, while the lease was taken: spend no window for a call that will not go.
          if (deadline.aborted) throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
          if (performance.now() > sendBy) throw queued.has('concurrency') ? refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000) : admission.noTime('concurrency');
          refusal = await spendWindows(budgets, admission, plan);
        } catch (error) {
          await lease.release().catch(() => undefined);
          slots.wakeOne(leaseKey);
          throw error;
        }
        if (refusal === undefined) {
          for (const budget of admission.askedReserve ? [...plan.applies, 'nrql_fair_share' as const] : plan.applies) {
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
              .finally(() => slots.wakeOne(leaseKey));
          };
        }
        // A spent window: give the slot back while waiting for the window to reset.
        await lease.release().catch(() => undefined);
        slots.wakeOne(leaseKey);
        const { budget } = refusal;
        queued.add(budget);
        if (performance.now() + refusal.retryAfterMs > sendBy) throw refuse(budget, refusal.retryAfterMs);
        const resetAt = performance.now() + refusal.retryAfterMs;
        await admission.timed(budget, pause(refusal.retryAfterMs, deadline));
        if (deadline.aborted) throw stopped(deadline, () => refuse(budget, resetAt - performance.now()));
      }
    },
  };
}
