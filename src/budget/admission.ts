import type { GatewayMetrics } from '../ops/metrics.ts';
import type { Lease, SharedState, StateKeyer, WindowSpend } from '../state/shared-state.ts';
import type { UpstreamCall } from '../upstream/client.ts';
import type { OverBudget } from '../upstream/errors.ts';
import { fairShareOf, floorOf, UNLIMITED, type AccountPresence } from './fair-share.ts';
import { beforeTime, nextTurn, stopped, type SlotWaiters } from './slot-waiters.ts';

/**
 * The steps of one call's admission (budgets.ts runs them, in its admit): the windows it will
 * spend (planWindows), a concurrency lease taken in time, queueing for it (leaseInTime), and
 * every window spent at once, the account's reserve only for a caller within its fair share
 * (spendWindows), and for a caller over it, what the others are likely to ask held back. Each step gives up with a refusal (v2's 429) once the call could no longer
 * be sent in time, or with a cancellation when its client left.
 */

/** The budgets, as the refusal (OverBudget) names them. */
export type BudgetName = OverBudget['budget'];
export type BudgetWindow = WindowSpend & { budget: Exclude<BudgetName, 'concurrency'> };
/** A spend refused: by which budget, and when it may be tried again. */
export interface WindowRefusal {
  budget: BudgetWindow['budget'];
  retryAfterMs: number;
}

/** Lease polling: starts fast (a slot frees within one NerdGraph call), backs off to this. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 100;
/** Other callers whose parts an over-share call reads (the share of each beyond is small anyway). */
const MAX_CLAIMS_READ = 200;
/** Retry-After when a lease is what was missing (a slot frees within one call), or time was. */
export const CONCURRENCY_RETRY_AFTER_S = 1;

/** What every admission shares: the budgets' state and settings (createBudgets). */
export interface BudgetsContext {
  state: SharedState;
  metrics: GatewayMetrics;
  slots: SlotWaiters;
  presence: AccountPresence;
  leaseTtlMs: number;
  /** An account's NRQL budget per window, and the reserve kept of it (fair-share.ts). */
  accountBudget: number;
  reserve: number;
  /** The concurrency limit a call under `identity` may fill now (budgets.ts). */
  limitNow(apiKey: string, identity: string): Promise<number>;
}

/** One call's admission: what its waits, spends and refusals share. */
export interface Admission {
  call: UpstreamCall;
  /** The caller every budget counts: the key's user once known, else the key. */
  identity: string;
  leaseKey: string;
  /** The last moment (performance.now() time) the call may be admitted and still be sent in time. */
  sendBy: number;
  deadline: AbortSignal;
  /** The budgets the call had to wait for. */
  queued: Set<BudgetName>;
  /** Set once the call asks for the account's reserve: its fair share decided it. */
  askedReserve: boolean;
  /** Set once the call, refused within its share, was counted as demand (once, however often it is refused). */
  countedDemand: boolean;
  refuse(budget: BudgetName, retryAfterMs: number): OverBudget;
  /** Refused because there was no time left to send it. */
  noTime(budget: BudgetName): OverBudget;
  /** `wait`, its time counted against `budget`. */
  timed<T>(budget: BudgetName, wait: Promise<T>): Promise<T>;
}

/** The windows a call spends (planWindows). */
export interface WindowPlan {
  /** The account whose NRQL window (and this caller's own part of it, for its fair share) the call spends. */
  nrqlAccount: number | undefined;
  identical: BudgetWindow[];
  /** The budgets that apply to the call, for the decisions counted once it is admitted. */
  applies: BudgetName[];
  /**
   * The call's windows, with the account's total up to `accountLimit` and the caller's part up
   * to `callerLimit`. A caller's part ends when the account's window does, so they reset
   * together: a part that reset on its own would let a heavy caller back into the reserve in
   * the middle of the account's window.
   */
  windowsUpTo(account: number, accountLimit: number, callerLimit: number): BudgetWindow[];
  /** The key of a caller's part of the account's window. */
  partKey(account: number, identity: string): string;
  /** The window counting the caller's demand this presence window: what it spent, and what it was refused within its share. */
  demand(account: number): BudgetWindow;
}

/** The windows of a call of `identity` running `texts` (NRQL) that cost `cost` queries of `account`. */
export function planWindows(plan: {
  keyOf: StateKeyer;
  identity: string;
  account: number | undefined;
  cost: number;
  texts: readonly string[];
  identicalLimit: number;
  windowMs: number;
  /** The window counting the caller's spend of the account in this presence window (fair-share.ts). */
  spentWindow: (account: number, identity: string) => { key: string; windowMs: number };
}): WindowPlan {
  const { keyOf, identity, account, cost, texts, windowMs } = plan;
  // Every window the call spends, with the budget it belongs to (repeated texts spend their count).
  const repeats = new Map<string, number>();
  for (const text of texts) repeats.set(text, (repeats.get(text) ?? 0) + 1);
  const identical: BudgetWindow[] = [...repeats].map(([text, times]) => ({
    budget: 'identical_query',
    key: keyOf('identical', identity, text),
    cost: times,
    limit: plan.identicalLimit,
    windowMs,
  }));
  const nrqlAccount = cost > 0 ? account : undefined;
  return {
    nrqlAccount,
    identical,
    applies: ['concurrency', ...(nrqlAccount !== undefined ? (['nrql_account'] as const) : []), ...(texts.length > 0 ? (['identical_query'] as const) : [])],
    windowsUpTo: (account, accountLimit, callerLimit) => [
      ...identical,
      { budget: 'nrql_account', key: keyOf('nrql-account', account), cost, limit: accountLimit, windowMs },
      // Created ending when the account's window ends (expiresWith: the window just before it).
      { budget: 'nrql_fair_share', key: keyOf('nrql-account', account, identity), cost, limit: callerLimit, windowMs, expiresWith: identical.length },
      // What the caller spent this presence window: only counted, it tells the next window what to hold back for it.
      { budget: 'nrql_fair_share', ...plan.spentWindow(account, identity), cost, limit: UNLIMITED },
    ],
    partKey: (account, caller) => keyOf('nrql-account', account, caller),
    demand: (account) => ({ budget: 'nrql_fair_share', ...plan.spentWindow(account, identity), cost, limit: UNLIMITED }),
  };
}

/** A concurrency lease for the call, waiting for one in this process's queue while there is time. */
export async function leaseInTime(budgets: BudgetsContext, admission: Admission): Promise<Lease> {
  const { slots, state, metrics } = budgets;
  const { call, identity, leaseKey, sendBy, deadline, queued } = admission;
  let poll = FIRST_POLL_MS;
  // A slot freed in this process was handed to this call (it must use it or pass it on).
  let woken = false;
  // Counted in the slot queue while it waits.
  let waiting = false;
  try {
    for (;;) {
      // A call that waited takes its slot only once the I/O already received has been
      // handled: clients that hung up together are all known to have left before then. A
      // newcomer while others wait does too, so a slot handed to a woken waiter stays its.
      if (queued.size > 0 || slots.othersWaiting(leaseKey)) await nextTurn();
      if (woken) slots.handoverTaken(leaseKey);
      if (deadline.aborted) {
        if (woken) slots.wakeOne(leaseKey);
        throw stopped(deadline, () => admission.refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
      }
      woken = false;
      const acquiring = budgets.limitNow(call.apiKey, identity).then((limit) => state.acquireLease(leaseKey, limit, budgets.leaseTtlMs));
      const acquired = await beforeTime(acquiring, sendBy, deadline);
      if (acquired === 'late') {
        // Whatever the state answers later is given back at once, and the slot passed on.
        void acquiring
          .then(async (lease) => {
            if (lease === undefined) return;
            await lease.release().catch(() => undefined);
            slots.wakeOne(leaseKey);
          })
          .catch(() => undefined);
        if (deadline.aborted) throw stopped(deadline, () => admission.noTime('concurrency'));
        throw queued.has('concurrency') ? admission.refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000) : admission.noTime('concurrency');
      }
      if (acquired.answer !== undefined) return acquired.answer;
      queued.add('concurrency');
      if (!waiting) {
        waiting = true;
        slots.queued(leaseKey, 1);
        metrics.nerdgraphQueued.inc();
      }
      if (deadline.aborted) throw stopped(deadline, () => admission.refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000));
      const left = sendBy - performance.now();
      if (left <= 0) throw admission.refuse('concurrency', CONCURRENCY_RETRY_AFTER_S * 1000);
      woken = await admission.timed('concurrency', slots.waitForSlot(leaseKey, Math.min(poll, left), deadline));
      poll = Math.min(poll * 2, MAX_POLL_MS);
    }
  } finally {
    if (waiting) {
      slots.queued(leaseKey, -1);
      metrics.nerdgraphQueued.dec();
    }
  }
}

/** Spends every window at once, in time; the refusal, or undefined once spent. */
async function spendInTime(budgets: BudgetsContext, admission: Admission, spending: readonly BudgetWindow[]): Promise<WindowRefusal | undefined> {
  const { sendBy, deadline } = admission;
  const first = (spending[0] as BudgetWindow).budget;
  // A call that will not go spends nothing.
  if (deadline.aborted) throw stopped(deadline, () => admission.noTime(first));
  const spent = await beforeTime(budgets.state.spendAll(spending), sendBy, deadline);
  if (spent === 'late' || performance.now() > sendBy) {
    if (deadline.aborted) throw stopped(deadline, () => admission.noTime(first));
    throw admission.noTime(first);
  }
  if (spent.answer.spent) return undefined;
  return { budget: spending[spent.answer.refused]?.budget ?? first, retryAfterMs: spent.answer.retryAfterMs };
}

/** Callers of the account seen in this presence window or the last, this one included (fair-share.ts memoises the read). */
async function callersInTime(budgets: BudgetsContext, admission: Admission, account: number): Promise<string[]> {
  const { sendBy, deadline } = admission;
  const seen = await beforeTime(budgets.presence.callers(account), sendBy, deadline);
  if (seen === 'late') {
    if (deadline.aborted) throw stopped(deadline, () => admission.noTime('nrql_fair_share'));
    throw admission.noTime('nrql_fair_share');
  }
  return [...new Set([admission.identity, ...seen.answer])];
}

/**
 * What the account's other callers are likely to ask of it still this window, within their
 * shares: each one's spend in the previous presence window, up to its share, and at least the
 * floor (fair-share.ts), less what it has spent of its part this window. Their parts are read
 * at once; their previous spends once a window (fair-share.ts).
 */
async function claimsInTime(budgets: BudgetsContext, admission: Admission, plan: WindowPlan, account: number, callers: readonly string[], share: number): Promise<number> {
  const floor = floorOf(budgets.reserve, share, callers.length);
  const { sendBy, deadline } = admission;
  const others = callers.filter((identity) => identity !== admission.identity).slice(0, MAX_CLAIMS_READ);
  if (others.length === 0) return 0;
  const reading = Promise.all([budgets.state.windowTotals(others.map((identity) => plan.partKey(account, identity))), budgets.presence.previousSpend(account, others)]);
  const totals = await beforeTime(reading, sendBy, deadline);
  if (totals === 'late') {
    if (deadline.aborted) throw stopped(deadline, () => admission.noTime('nrql_fair_share'));
    throw admission.noTime('nrql_fair_share');
  }
  const [parts, previous] = totals.answer;
  return parts.reduce((sum, spent, index) => sum + Math.max(0, Math.max(floor, Math.min(share, previous[index] ?? 0)) - spent), 0);
}

/**
 * The call's windows, by the fair share (budgets.ts): within its share a caller spends the
 * account's whole budget (the reserve included); over it, only what is left once the reserve
 * and what the other callers are likely to ask still (claimsInTime) are held back.
 */
export async function spendWindows(budgets: BudgetsContext, admission: Admission, plan: WindowPlan): Promise<WindowRefusal | undefined> {
  const { nrqlAccount, identical } = plan;
  const { accountBudget, reserve } = budgets;
  if (nrqlAccount === undefined) return identical.length > 0 ? spendInTime(budgets, admission, identical) : undefined;
  // No reserve (a budget under 10, not shared): the account's refusal is the whole story.
  if (reserve === 0) return spendInTime(budgets, admission, plan.windowsUpTo(nrqlAccount, accountBudget, UNLIMITED));
  const callers = await callersInTime(budgets, admission, nrqlAccount);
  // At least two: a caller this account has not seen yet has a share too.
  const share = fairShareOf(accountBudget, callers.length);
  const open = await spendInTime(budgets, admission, plan.windowsUpTo(nrqlAccount, accountBudget - reserve, share));
  if (open === undefined || open.budget === 'identical_query') return open;
  admission.askedReserve = true;
  if (open.budget === 'nrql_account') {
    // The open part is spent: the reserve, to a caller within its share.
    const reserved = await spendInTime(budgets, admission, plan.windowsUpTo(nrqlAccount, accountBudget, share));
    if (reserved?.budget === 'nrql_account' && !admission.countedDemand) {
      // Refused within its share, the account spent: what it asked is held back for it next window, as if spent.
      admission.countedDemand = true;
      void budgets.state.spendAll([plan.demand(nrqlAccount)]).catch(() => undefined);
    }
    return reserved?.budget === 'nrql_fair_share' ? { budget: 'nrql_fair_share', retryAfterMs: Math.min(open.retryAfterMs, reserved.retryAfterMs) } : reserved;
  }
  // Over its share: what the reserve (for callers with no history) and the others' likely asks leave.
  const claims = await claimsInTime(budgets, admission, plan, nrqlAccount, callers, share);
  const over = await spendInTime(budgets, admission, plan.windowsUpTo(nrqlAccount, accountBudget - reserve - claims, UNLIMITED));
  // Refused by the account's window below its budget: by what it holds back for the others.
  return over?.budget === 'nrql_account' ? { budget: 'nrql_fair_share', retryAfterMs: Math.min(open.retryAfterMs, over.retryAfterMs) } : over;
}
