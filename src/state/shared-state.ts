import { createHmac } from 'node:crypto';
import { boundedMemo } from '../v2/bounded-memo.ts';

/**
 * State that replicas share: page cursors, accounts and refused keys, the read micro-cache,
 * NerdGraph budgets, parity events. Two backends with the same semantics: Redis (REDIS_URL,
 * redis-state.ts) and this process's memory (memory-state.ts, also what a replica falls back
 * to while Redis is slow or gone: degrading-state.ts). Consumers see only this interface.
 *
 * Every key is built by `stateKey`: a purpose and an HMAC of the parts with STATE_SECRET, so
 * no API key and no user text is ever a Redis key. Values are the consumers' business; none
 * of them holds a key (identities are HMACs, answers are NerdGraph's data, records redacted).
 */
export interface Lease {
  /** Gives the slot back (idempotent). A lease nobody releases expires by its TTL. */
  release(): Promise<void>;
}

/** One budget window of a multi-window spend (spendAll). */
export interface WindowSpend {
  key: string;
  cost: number;
  limit: number;
  windowMs: number;
  /**
   * The index of an earlier window of the same spend: a window this spend creates ends when that
   * one does, not `windowMs` from now (a caller's part of an account's window resets with it).
   */
  expiresWith?: number;
}

/** spendAll's answer: all spent, or none, with the refusing window (its index) that resets last. */
export type SpendAll = { spent: true } | { spent: false; retryAfterMs: number; refused: number };

export interface StreamEntry {
  id: string;
  data: string;
}

export interface SharedState {
  /** 'redis' or 'memory': where this state lives when all is well. */
  readonly backend: 'redis' | 'memory';

  get(key: string): Promise<string | undefined>;
  /** `onlyIfAbsent`: set only when no value is there (a lock); answers whether it was set. */
  set(key: string, value: string, ttlMs: number, options?: { onlyIfAbsent?: boolean }): Promise<boolean>;
  delete(key: string): Promise<void>;

  /** A small map under one key; its TTL starts when the key is created and is not renewed by later writes. */
  hashGetAll(key: string): Promise<Record<string, string>>;
  hashSet(key: string, fields: Record<string, string>, ttlMs: number): Promise<void>;
  /** Removes fields of a hash (absent ones are no error); its TTL stays as it was. */
  hashDelete(key: string, fields: readonly string[]): Promise<void>;

  /**
   * One of `limit` slots under `key`, held for at most `ttlMs` (a replica that dies never
   * frees its slots otherwise). Undefined when all are taken.
   */
  acquireLease(key: string, limit: number, ttlMs: number): Promise<Lease | undefined>;
  /** Slots currently held under `key`. */
  leaseCount(key: string): Promise<number>;

  /**
   * Spends `cost` of each window's budget of `limit` per `windowMs` (a window starts with its
   * first spend), over several windows (distinct keys) at once, atomically: every window is
   * checked first, then all are spent, or none (a call refused by one window has spent nothing
   * of the others). Refused: the refusing window whose reset comes last, and the time until then.
   */
  spendAll(windows: readonly WindowSpend[]): Promise<SpendAll>;
  /** What each window (spendAll's keys) has spent so far: 0 for one not started or reset. */
  windowTotals(keys: readonly string[]): Promise<number[]>;

  /** Appends to a stream kept to about `maxLength` entries. */
  append(stream: string, data: string, maxLength: number): Promise<void>;
  /** Entries after `afterId` ('0': from the start), oldest first, at most `count`. */
  readAfter(stream: string, afterId: string, count: number): Promise<StreamEntry[]>;

  /** Fire and forget to every replica (this one included). */
  publish(channel: string, message: string): Promise<void>;
  /** Called for every message on `channel`; answers an unsubscribe. */
  subscribe(channel: string, onMessage: (message: string) => void): () => void;

  close(): Promise<void>;
}

/** A state's health as /readyz shows it (degrading-state.ts: Redis, or this replica's memory while Redis fails). */
export interface SharedStateStatus {
  backend: 'redis' | 'memory';
  /**
   * 'shared' (Redis answers), 'connecting' (start-up, before Redis first answered: memory),
   * 'degraded' (Redis failing: this replica's memory), 'local' (no Redis configured).
   */
  state: 'shared' | 'connecting' | 'degraded' | 'local';
  /** When the current degradation began (ISO time), if degraded. */
  degradedSince?: string;
  /** Operations served from memory since start. */
  fallbacks: number;
  /** Why Redis was last given up on (an error class, never a message that could quote data). */
  lastError?: string;
}

export interface StatusReporting {
  status(): SharedStateStatus;
}

/** What a key is for: the first segment of its name (`v2b:<purpose>:<hmac>`), readable in redis-cli. */
export type StatePurpose =
  | 'cursors'
  | 'accounts'
  | 'refused'
  | 'micro'
  | 'micro-lock'
  | 'writes'
  | 'concurrency'
  | 'nrql-account'
  | 'identical'
  | 'parity'
  | 'recent-writes';

export type StateKeyer = (purpose: StatePurpose, ...parts: readonly (string | number)[]) => string;

/**
 * The one function that names shared state. Parts are joined unambiguously and HMAC'd with the
 * replicas' common secret: equal on every replica, meaningless without the secret.
 */
/** Names remembered per keyer: requests name the same few again and again (their caller's lease, their account's window); an NRQL text can be a few KB, so the bound stays small. */
const KEY_MEMO_MAX = 1024;

export function createStateKeyer(secret: string | Buffer): StateKeyer {
  // One HMAC per distinct name, not per use (several per NerdGraph call), like the identity memo
  // (src/caller/identity.ts). Keyed `<purpose>\n<encoded parts>`: a purpose holds no newline.
  const nameOf = boundedMemo(KEY_MEMO_MAX, (memoKey: string): string => {
    const cut = memoKey.indexOf('\n');
    return `v2b:${memoKey.slice(0, cut)}:${createHmac('sha256', secret).update(memoKey.slice(cut + 1)).digest('base64url').slice(0, 32)}`;
  });
  return (purpose, ...parts) => {
    let encoded = '';
    for (const part of parts) {
      const text = String(part);
      encoded += `${text.length}:${text}\n`;
    }
    return nameOf(`${purpose}\n${encoded}`);
  };
}
