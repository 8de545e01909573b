import type { IdentityOf } from '../caller/identity.ts';
import type { KeyUsers } from '../caller/key-users.ts';
import type { GatewayMetrics } from '../ops/metrics.ts';
import type { Lease, SharedState, StateKeyer, WindowSpend } from '../state/shared-state.ts';
import type { NerdGraphBudget, UpstreamCall } from '../upstream/client.ts';
import type { OperationDocument } from '../upstream/documents.ts';
import { OverBudget, UpstreamError } from '../upstream/errors.ts';
import { accountOf, createNrqlProfiles, nrqlTextsOf } from './nrql-cost.ts';
import { requestDue } from './request-due.ts';
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
 * Fair share of an account's NRQL budget B (callers as above: users, or keys not known yet): the last
 * FAIR_SHARE_RESERVE of it (10%, rounded down: none under 10 queries) is a reserve. Any caller
 * spends while the account has more than the reserve left. The reserve goes only to a caller
 * whose own spend, this call included, stays within its fair share: B divided by the account's
 * callers seen this presence window or the last (windows of the same length, on the clock),
 * itself counted, and never by fewer than two: the reserve is kept for a caller not seen yet (a
 * CI job's one deployment, a script run now and then), so a lone caller spends B less the
 * reserve. A heavy caller is refused (`nrql_fair_share`) once the reserve is all that is left,
 * until the account's window or its own resets, while a light one, known or new, still spends
 * the reserve. Across replicas: each caller's part is one more window (`nrql-account` with the
 * caller's identity) spent in the same spendAll, the open part and the reserve are the same
 * account window checked against two limits, and presence is a hash per account and presence
 * window (written once a window per replica, read only when the reserve is asked for).
 * A caller's part is created ending when the account's window does (WindowSpend.expiresWith),
 * so they reset together. Approximate on purpose: a caller nobody has seen for two windows is
 * not counted.
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
}

type BudgetName = 'concurrency' | 'nrql_account' | 'nrql_fair_share' | 'identical_query';
type BudgetWindow = WindowSpend & { budget: Exclude<BudgetName, 'concurrency'> };
/** A spend refused: by which budget, and when it may be tried again. */
interface WindowRefusal {
  budget: BudgetWindow['budget'];
  retryAfterMs: number;
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
/** Lease polling: starts fast (a slot frees within one NerdGraph call), backs off to this. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;
/** Retry-After when a lease is what was missing (a slot frees within one call), or time was. */
const CONCURRENCY_RETRY_AFTER_S = 1;
/** The share of an account's NRQL budget kept for callers within their fair share (see above). */
const FAIR_SHARE_RESERVE = 0.1;
/** A caller's own window while the account has more than the reserve left: it only counts. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;
/** (account, caller) pairs whose presence this process wrote this window; beyond, it starts afresh. */
const MAX_PRESENCE_MEMO = 10_000;

/**
 * The shared state's answer, or 'late' when `by` (performance.now() time) or the deadline
 * comes first: a stalled Redis must not hold a call past the time it could still be sent.
 */
async function beforeTime<T>(work: Promise<T>, by: number, signal: AbortSignal): Promise<{ answer: T } | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, by - performance.now()));
    onAbort = () => resolve('late');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work.then((answer) => ({ answer })), late]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Resolves once the event loop has handled the I/O it has already received (setImmediate runs
 * after the poll phase): a client's hang-up that arrived in the same turn as a freed slot is
 * known before the slot is taken.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Why a queued call stops: its deadline (429: it could not be admitted in time) or its caller left. */
function stopped(signal: AbortSignal, refusal: () => OverBudget): UpstreamError {
  const reason: unknown = signal.reason;
  const name = reason !== null && typeof reason === 'object' ? (reason as { name?: unknown }).name : undefined;
  if (name === 'TimeoutError') return refusal();
  return new UpstreamError('cancelled', 'the request was cancelled while queued for a NerdGraph budget', { sent: false });
}

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
  /** This process's calls waiting for a lease, by lease key: a release here wakes one at once. */
  const leaseWaiters = new Map<string, Set<() => void>>();
  /** Slots freed here and handed to a woken waiter that has not asked for them yet, by lease key. */
  const handovers = new Map<string, number>();
  /** Calls queued here for a slot, by lease key, between their polls too. */
  const queuedForSlot = new Map<string, number>();
  /** One more or one fewer under `key`; a key at zero is dropped (so `has` says "any"). */
  const count = (counts: Map<string, number>, key: string, change: 1 | -1): void => {
    const left = (counts.get(key) ?? 0) + change;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };
  /** Calls of this key wait here already: a newcomer goes behind them (a turn later), not ahead. */
  const othersWaiting = (key: string): boolean => handovers.has(key) || queuedForSlot.has(key);

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
  // None under 10 queries a minute: a budget that small is a test's or a trickle, not shared.
  const reserve = Math.floor(accountBudget * FAIR_SHARE_RESERVE);
  /** Windows of presence: a caller counts for an account in the one it was seen in, and the next. */
  const presenceWindowOf = (now: number): number => Math.floor(now / windowMs);
  const presenceKey = (account: number, window: number): string => keyOf('nrql-account', account, 'callers', window);
  /** `account\ncaller` -> the presence window this process last wrote it in (one write per window). */
  const presenceWritten = new Map<string, number>();

  /** This caller uses the account's NRQL: written once per window, never waited for (it only informs shares). */
  function notePresence(account: number, identity: string): void {
    const window = presenceWindowOf(Date.now());
    const memo = `${account}\n${identity}`;
    if (presenceWritten.get(memo) === window) return;
    if (presenceWritten.size >= MAX_PRESENCE_MEMO) presenceWritten.clear();
    presenceWritten.set(memo, window);
    // Kept two windows from its creation: read as "the previous window" throughout the next one.
    void state.hashSet(presenceKey(account, window), { [identity]: '1' }, 2 * windowMs).catch(() => presenceWritten.delete(memo));
  }

  function waitersOf(key: string): Set<() => void> {
    let waiters = leaseWaiters.get(key);
    if (waiters === undefined) {
      waiters = new Set();
      leaseWaiters.set(key, waiters);
    }
    return waiters;
  }

  /**
   * One slot freed: one waiter tries for it at once (the others keep polling, as other
   * replicas' do). A woken waiter that will not take the slot (its client left) wakes the next.
   */
  function wakeOne(key: string): void {
    const waiters = leaseWaiters.get(key);
    const first = waiters?.values().next().value;
    if (first !== undefined) {
      waiters?.delete(first);
      count(handovers, key, 1);
      first();
    }
    if (waiters !== undefined && waiters.size === 0) leaseWaiters.delete(key);
  }

  /** Waits up to `ms` for a slot under `key`; true when a slot freed in this process woke it. */
  async function waitForSlot(key: string, ms: number, deadline: AbortSignal): Promise<boolean> {
    const waiters = waitersOf(key);
    let woken = false;
    const ends = new Set<() => void>();
    const wake = (): void => {
      woken = true;
      for (const end of ends) end();
    };
    waiters.add(wake);
    try {
      await pause(ms, deadline, ends);
    } finally {
      waiters.delete(wake);
      if (waiters.size === 0 && leaseWaiters.get(key) === waiters) leaseWaiters.delete(key);
    }
    return woken;
  }

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
      const cost = account === undefined ? 0 : profile.queries;
      const texts = nrqlTextsOf(profile, call.variables);
      // Every window the call spends, with the budget it belongs to (repeated texts spend their count).
      const repeats = new Map<string, number>();
      for (const text of texts) repeats.set(text, (repeats.get(text) ?? 0) + 1);
      const identical: BudgetWindow[] = [...repeats].map(([text, times]) => ({
        budget: 'identical_query',
        key: keyOf('identical', identity, text),
        cost: times,
        limit: limits.identicalQueryPerMinute,
        windowMs,
      }));
      // The account whose NRQL window (and this caller's own part of it, for its fair share) the call spends.
      const nrqlAccount = cost > 0 ? account : undefined;
      if (nrqlAccount !== undefined) notePresence(nrqlAccount, identity);
      /**
       * The call's windows, with the account's total up to `accountLimit` and the caller's part up
       * to `callerLimit`. A caller's part ends when the account's window does, so they reset
       * together: a part that reset on its own would let a heavy caller back into the reserve in
       * the middle of the account's window.
       */
      const windowsUpTo = (account: number, accountLimit: number, callerLimit: number): BudgetWindow[] => [
        ...identical,
        { budget: 'nrql_account', key: keyOf('nrql-account', account), cost, limit: accountLimit, windowMs },
        // Created ending when the account's window ends (expiresWith: the window just before it).
        { budget: 'nrql_fair_share', key: keyOf('nrql-account', account, identity), cost, limit: callerLimit, windowMs, expiresWith: identical.length },
      ];
      const applies: BudgetName[] = ['concurrency', ...(nrqlAccount !== undefined ? (['nrql_account'] as const) : []), ...(texts.length > 0 ? (['identical_query'] as const) : [])];
      // Set once the call asks for the account's reserve: its fair share decided it.
      let askedReserve = false;
      const waitedMs: Record<BudgetName, number> = { concurrency: 0, nrql_account: 0, nrql_fair_share: 0, identical_query: 0 };
      const queued = new Set<BudgetName>();
      const leaseKey = keyOf('concurrency', identity);

      const refuse = (budget: BudgetName, retryAfterMs: number, title = titles[budget](account)): OverBudget => {
        metrics.budgetDecisions.inc({ budget, result: 'refused' });
        metrics.budgetWaitSeconds.observe({ budget }, waitedMs[budget] / 1000);
        return new OverBudget(title, retryAfterMs / 1000);
      };
      const noTime = (budget: BudgetName): OverBudget => refuse(budget, CONCURRENCY_RETRY_AFTER_S * 1000, NO_TIME_TITLE);
      const timed = async <T>(budget: BudgetName, wait: Promise<T>): Promise<T> => {
        const from = performance.now();
        const outcome = await wait;
        waitedMs[budget] += performance.now() - from;
        return outcome;
      };

      async function leaseInTime(): Promise<Lease> {
        let poll = FIRST_POLL_MS;
        // A slot freed in this process was handed to this call (it must use it or pass it on).
        let woken = false;
        // Counted in queuedForSlot while it waits.
        let waiting = false;
        try {
          for (;;) {
            // A call that waited takes its slot only once the I/O already received has been
            // handled: clients that hung up together are all known to have left before then. A
            // newcomer while others wait does too, so a slot handed to a woken waiter stays its.
            if (queued.size > 0 || othersWaiting(leaseKey)) await nextTurn();
            if (woken) count(handovers, leaseKey, -1);
            if (deadline.aborted) {
              if (woken) wakeOne(leaseKey);
              throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
            }
            woken = false;
            const acquiring = limitNow(call.apiKey, identity).then((limit) => state.acquireLease(leaseKey, limit, leaseTtlMs));
            const acquired = await beforeTime(acquiring, sendBy, deadline);
            if (acquired === 'late') {
              // Whatever the state answers later is given back at once, and the slot passed on.
              void acquiring
                .then(async (lease) => {
                  if (lease === undefined) return;
                  await lease.release().catch(() => undefined);
                  wakeOne(leaseKey);
                })
                .catch(() => undefined);
              if (deadline.aborted) throw stopped(deadline, () => noTime('concurrency'));
              throw queued.has('concurrency') ? refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000) : noTime('concurrency');
            }
            if (acquired.answer !== undefined) return acquired.answer;
            queued.add('concurrency');
            if (!waiting) {
              waiting = true;
              count(queuedForSlot, leaseKey, 1);
              metrics.nerdgraphQueued.inc();
            }
            if (deadline.aborted) throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
            const left = sendBy - performance.now();
            if (left <= 0) throw refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000);
            woken = await timed('concurrency', waitForSlot(leaseKey, Math.min(poll, left), deadline));
            poll = Math.min(poll * 2, MAX_POLL_MS);
          }
        } finally {
          if (waiting) {
            count(queuedForSlot, leaseKey, -1);
            metrics.nerdgraphQueued.dec();
          }
        }
      }

      /** Spends every window at once, in time; the refusal, or undefined once spent. */
      async function spendInTime(spending: readonly BudgetWindow[]): Promise<WindowRefusal | undefined> {
        const first = (spending[0] as BudgetWindow).budget;
        // A call that will not go spends nothing.
        if (deadline.aborted) throw stopped(deadline, () => noTime(first));
        const spent = await beforeTime(state.spendAll(spending), sendBy, deadline);
        if (spent === 'late' || performance.now() > sendBy) {
          if (deadline.aborted) throw stopped(deadline, () => noTime(first));
          throw noTime(first);
        }
        if (spent.answer.spent) return undefined;
        return { budget: spending[spent.answer.refused]?.budget ?? first, retryAfterMs: spent.answer.retryAfterMs };
      }

      /** Callers of the account seen in this presence window or the last, this one included. */
      async function callersInTime(account: number): Promise<number> {
        const window = presenceWindowOf(Date.now());
        const reading = Promise.all([state.hashGetAll(presenceKey(account, window)), state.hashGetAll(presenceKey(account, window - 1))]);
        const seen = await beforeTime(reading, sendBy, deadline);
        if (seen === 'late') {
          if (deadline.aborted) throw stopped(deadline, () => noTime('nrql_fair_share'));
          throw noTime('nrql_fair_share');
        }
        return new Set([identity, ...seen.answer.flatMap((callers) => Object.keys(callers))]).size;
      }

      /** The call's windows: the account's last reserve only for a caller within its fair share (see above). */
      async function spendWindows(): Promise<WindowRefusal | undefined> {
        if (nrqlAccount === undefined) return identical.length > 0 ? spendInTime(identical) : undefined;
        const open = await spendInTime(windowsUpTo(nrqlAccount, accountBudget - reserve, UNLIMITED));
        // No reserve (a budget under 10): the account's refusal is the whole story.
        if (open?.budget !== 'nrql_account' || reserve === 0) return open;
        askedReserve = true;
        // At least two: the reserve stays for a caller this account has not seen yet.
        const share = Math.floor(accountBudget / Math.max(2, await callersInTime(nrqlAccount)));
        const reserved = await spendInTime(windowsUpTo(nrqlAccount, accountBudget, share));
        // Over its share: it may spend again once the account's window resets, or its own does.
        return reserved?.budget === 'nrql_fair_share' ? { budget: 'nrql_fair_share', retryAfterMs: Math.min(open.retryAfterMs, reserved.retryAfterMs) } : reserved;
      }

      for (;;) {
        const lease = await leaseInTime();
        let refusal: WindowRefusal | undefined;
        try {
          // Fired, or no time left to send, while the lease was taken: spend no window for a call that will not go.
          if (deadline.aborted) throw stopped(deadline, () => refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
          if (performance.now() > sendBy) throw queued.has('concurrency') ? refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000) : noTime('concurrency');
          refusal = await spendWindows();
        } catch (error) {
          await lease.release().catch(() => undefined);
          wakeOne(leaseKey);
          throw error;
        }
        if (refusal === undefined) {
          for (const budget of askedReserve ? [...applies, 'nrql_fair_share' as const] : applies) {
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
              .finally(() => wakeOne(leaseKey));
          };
        }
        // A spent window: give the slot back while waiting for the window to reset.
        await lease.release().catch(() => undefined);
        wakeOne(leaseKey);
        const { budget } = refusal;
        queued.add(budget);
        if (performance.now() + refusal.retryAfterMs > sendBy) throw refuse(budget, refusal.retryAfterMs);
        const resetAt = performance.now() + refusal.retryAfterMs;
        await timed(budget, pause(refusal.retryAfterMs, deadline));
        if (deadline.aborted) throw stopped(deadline, () => refuse(budget, resetAt - performance.now()));
      }
    },
  };
}
