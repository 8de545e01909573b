import type { SharedState, StateKeyer } from '../state/shared-state.ts';

/**
 * The fair share of an account's NRQL budget (the rule is in budgets.ts's comment): the reserve
 * kept of it, a caller's share of it, the presence the share is counted from, and each caller's
 * recent spend that says how much of its share is held back for it. Presence is a hash per
 * account and presence window (windows of the budget's length, on the clock), written once a
 * window per replica and caller, never waited for, and read by a call of the account at most
 * once per PRESENCE_MEMO_SHARE of a window (a caller this process notes anew reads it at once):
 * a caller counts for an account in the window it was seen in, and the next. A caller's spend
 * per presence window is one more window of the call's spendAll (its key names the presence
 * window), and a call refused within its share once the account is spent adds to it (once):
 * it is the caller's demand. The previous window's, closed, is read once a window per account
 * and caller.
 */

/** The share of an account's NRQL budget kept for callers within their fair share. */
const FAIR_SHARE_RESERVE = 0.1;
/** A caller's own window while the account has more than the reserve left: it only counts. */
export const UNLIMITED = Number.MAX_SAFE_INTEGER;
/** (account, caller) pairs whose presence this process wrote this window; beyond, it starts afresh. */
const MAX_PRESENCE_MEMO = 10_000;
/** An account's callers, as last read, are reused for this share of a window (a second of a minute). */
const PRESENCE_MEMO_SHARE = 1 / 60;
/** Accounts whose callers are remembered; beyond, the memo starts afresh. */
const MAX_ACCOUNTS_MEMO = 10_000;

/** The reserve kept of an account's budget: none under 10 queries a minute (a budget that small is a test's or a trickle, not shared). */
export function reserveOf(accountBudget: number): number {
  return Math.floor(accountBudget * FAIR_SHARE_RESERVE);
}

/** A caller's share of the budget: divided by the callers seen, and never by fewer than two (the reserve stays for a caller this account has not seen yet). */
export function fairShareOf(accountBudget: number, callers: number): number {
  return Math.floor(accountBudget / Math.max(2, callers));
}

/**
 * What is held back at least for each other caller seen this presence window or the last, less
 * what it spent already this window: the reserve divided between them (a caller in its first
 * window, or one asking less than once a window, has no spend the window before to show its
 * demand). Together the floors hold back at most one more reserve; never more than a share.
 */
export function floorOf(reserve: number, share: number, callers: number): number {
  return Math.min(share, Math.floor(reserve / Math.max(1, callers - 1)));
}

/** Which callers use which account's NRQL, per presence window, across replicas. */
export class AccountPresence {
  /** `account\ncaller` -> the presence window this process last wrote it in (one write per window). */
  private readonly written = new Map<string, number>();
  /** account -> its callers as last read, and when (this.now()). */
  private readonly read = new Map<number, { at: number; callers: Promise<string[]> }>();

  private readonly state: SharedState;
  private readonly keyOf: StateKeyer;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    state: SharedState,
    keyOf: StateKeyer,
    windowMs: number,
    now: () => number = Date.now,
  ) {
    this.state = state;
    this.keyOf = keyOf;
    this.windowMs = windowMs;
    this.now = now;
  }

  /** account -> each caller's spend in the presence window before `window`, as read (closed: it no longer changes). */
  private readonly previous = new Map<number, { window: number; spent: Map<string, Promise<number>> }>();

  private windowOf(now: number): number {
    return Math.floor(now / this.windowMs);
  }

  private spentKey(account: number, identity: string, window: number): string {
    return this.keyOf('nrql-account', account, identity, 'spent', window);
  }

  /**
   * The window counting what `identity` spends of the account in this presence window: spent in
   * the call's spendAll, never refusing, kept two windows from its creation (read as "the
   * previous window" throughout the next one).
   */
  spentWindow(account: number, identity: string): { key: string; windowMs: number } {
    return { key: this.spentKey(account, identity, this.windowOf(this.now())), windowMs: 2 * this.windowMs };
  }

  /** What each of `identities` spent of the account in the previous presence window: read once a window per caller, a failed read not kept. */
  async previousSpend(account: number, identities: readonly string[]): Promise<number[]> {
    const window = this.windowOf(this.now());
    let known = this.previous.get(account);
    if (known === undefined || known.window !== window) {
      if (this.previous.size >= MAX_ACCOUNTS_MEMO) this.previous.clear();
      known = { window, spent: new Map() };
      this.previous.set(account, known);
    }
    const { spent } = known;
    const missing = identities.filter((identity) => !spent.has(identity));
    if (missing.length > 0) {
      const read = this.state.windowTotals(missing.map((identity) => this.spentKey(account, identity, window - 1)));
      missing.forEach((identity, index) => {
        const one = read.then((totals) => totals[index] ?? 0);
        spent.set(identity, one);
        one.catch(() => {
          if (spent.get(identity) === one) spent.delete(identity);
        });
      });
    }
    return Promise.all(identities.map((identity) => spent.get(identity) ?? 0));
  }

  private keyFor(account: number, window: number): string {
    return this.keyOf('nrql-account', account, 'callers', window);
  }

  /** This caller uses the account's NRQL: written once per window, never waited for (it only informs shares). */
  note(account: number, identity: string): void {
    const window = this.windowOf(this.now());
    const memo = `${account}\n${identity}`;
    if (this.written.get(memo) === window) return;
    if (this.written.size >= MAX_PRESENCE_MEMO) this.written.clear();
    this.written.set(memo, window);
    // A caller new to this process: the account's callers are read again, with it.
    this.read.delete(account);
    // Kept two windows from its creation: read as "the previous window" throughout the next one.
    void this.state.hashSet(this.keyFor(account, window), { [identity]: '1' }, 2 * this.windowMs).catch(() => this.written.delete(memo));
  }

  /** The account's callers seen in this presence window and the last, as the shared state holds them. */
  seen(account: number): Promise<Array<Record<string, string>>> {
    const window = this.windowOf(this.now());
    return Promise.all([this.state.hashGetAll(this.keyFor(account, window)), this.state.hashGetAll(this.keyFor(account, window - 1))]);
  }

  /** The account's callers (seen), read at most once per PRESENCE_MEMO_SHARE of a window; a failed read is not kept. */
  callers(account: number): Promise<string[]> {
    const now = this.now();
    const known = this.read.get(account);
    if (known !== undefined && now - known.at < this.windowMs * PRESENCE_MEMO_SHARE && this.windowOf(known.at) === this.windowOf(now)) return known.callers;
    const callers = this.seen(account).then((windows) => [...new Set(windows.flatMap((callers) => Object.keys(callers)))]);
    if (this.read.size >= MAX_ACCOUNTS_MEMO) this.read.clear();
    this.read.set(account, { at: now, callers });
    callers.catch(() => {
      if (this.read.get(account)?.callers === callers) this.read.delete(account);
    });
    return callers;
  }
}
