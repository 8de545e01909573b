/**
 * Which NerdGraph user owns which API key, by the key's identity (its HMAC, never the key).
 *
 * NerdGraph limits concurrent requests per user, not per key: "Concurrency is tracked and
 * enforced per user, not per user key. Requests made by the same user using multiple user keys
 * will all contribute to that user's total concurrent requests" (New Relic, "NerdGraph usage
 * limits", https://docs.newrelic.com/docs/apis/nerdgraph/nerdgraph-usage-limits/). Its NRQL
 * limit on identical queries counts "the same query repeated by the same user" too. So the
 * budgets (src/budget/budgets.ts) key by the user once it is known: the accounts look-up reads
 * `actor { user { id } }` with the key's accounts (src/caller/accounts.ts) and remembers it here.
 *
 * A key's user never changes, so it is kept longer than its accounts (USER_TTL_MS): an accounts
 * look-up after their TTL already runs under the user's budget. Bounded: oldest first out.
 * In this process's memory; other replicas learn it from the accounts entry in shared state.
 */
const USER_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEYS = 100_000;

export class KeyUsers {
  private readonly users = new Map<string, { user: string; expiresAt: number; learnedAt: number }>();

  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(ttlMs = USER_TTL_MS, max = MAX_KEYS, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.max = max;
    this.now = now;
  }

  /** The key (by identity) belongs to NerdGraph user `user` (its `actor.user.id`). */
  remember(identity: string, user: string): void {
    const known = this.users.get(identity);
    this.users.delete(identity);
    if (this.users.size >= this.max) this.users.delete(this.users.keys().next().value as string);
    // A refresh keeps when the user was first learned (learnedWithin).
    const learnedAt = known !== undefined && known.user === user && known.expiresAt > this.now() ? known.learnedAt : this.now();
    this.users.set(identity, { user, expiresAt: this.now() + this.ttlMs, learnedAt });
  }

  /** Whether this process learned the key's user less than `ms` ago (a look-up made without it may still be in flight). */
  learnedWithin(identity: string, ms: number): boolean {
    const known = this.users.get(identity);
    return known !== undefined && this.now() - known.learnedAt < ms;
  }

  /** The user of the key, when a look-up in this process (or another replica's, read here) told it. */
  userOf(identity: string): string | undefined {
    const known = this.users.get(identity);
    if (known === undefined) return undefined;
    if (known.expiresAt <= this.now()) {
      this.users.delete(identity);
      return undefined;
    }
    return known.user;
  }

  /**
   * Whom NerdGraph's per-user limits count a call of this key against: its user once known
   * (`user:<id>`, shared by every key of the user), else the key's own identity.
   */
  callerOf(identity: string): string {
    const user = this.userOf(identity);
    return user === undefined ? identity : `user:${user}`;
  }
}
