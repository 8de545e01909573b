/**
 * The world's two accounts and its API keys (data.ts): the default keys and which user owns
 * them (NerdGraph limits concurrency per user, not per key), the check that every key names a
 * known account, and the `SANDBOX_API_KEYS` parser.
 */
import type { SandboxAccount } from '../model.ts';
export const PRIMARY_ACCOUNT: SandboxAccount = { id: 1000001, name: 'Sandbox Primary' };
export const SECONDARY_ACCOUNT: SandboxAccount = { id: 1000002, name: 'Sandbox Secondary' };

export function defaultApiKeys(): Map<string, number[]> {
  return new Map([
    ['NRAK-SANDBOX-DEMO', [PRIMARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-MULTI', [PRIMARY_ACCOUNT.id, SECONDARY_ACCOUNT.id]],
    ['NRAK-SANDBOX-SECONDARY', [SECONDARY_ACCOUNT.id]],
    // A second key of the DEMO key's user (defaultKeyUsers), e.g. a CI job's.
    ['NRAK-SANDBOX-DEMO-CI', [PRIMARY_ACCOUNT.id]],
  ]);
}

/** The user who owns both default primary-account keys (NRAK-SANDBOX-DEMO and NRAK-SANDBOX-DEMO-CI). */
export const SANDBOX_DEMO_USER_ID = 1_000_042;

/**
 * Which user owns which key in the default world: NerdGraph limits concurrency per user, not
 * per key, so two keys of one user share one limit. The other default keys
 * are each a user of their own.
 */
export function defaultKeyUsers(): Map<string, number> {
  return new Map([
    ['NRAK-SANDBOX-DEMO', SANDBOX_DEMO_USER_ID],
    ['NRAK-SANDBOX-DEMO-CI', SANDBOX_DEMO_USER_ID],
  ]);
}

export function checkKeysReferToAccounts(keys: Map<string, number[]>, accounts: SandboxAccount[]): void {
  const known = new Set(accounts.map((account) => account.id));
  for (const [key, accountIds] of keys) {
    if (accountIds.length === 0) throw new Error(`API key ${key} has no accounts`);
    for (const accountId of accountIds) {
      if (!known.has(accountId)) {
        throw new Error(`API key ${key} refers to unknown account ${accountId} (sandbox accounts: ${[...known].join(', ')})`);
      }
    }
  }
}

/**
 * Parses SANDBOX_API_KEYS: `KEY=acct[,acct...];KEY2=acct`. Whitespace around parts and a
 * trailing `;` are tolerated; anything else malformed throws with the offending part quoted.
 */
export function parseApiKeys(spec: string): Map<string, number[]> {
  const keys = new Map<string, number[]>();
  const entries = spec.split(';').map((entry) => entry.trim());
  if (entries.at(-1) === '') entries.pop();
  if (entries.length === 0) throw new Error('API key list is empty; expected KEY=acct[,acct...];KEY2=acct');
  for (const entry of entries) {
    const match = /^([^=\s,;]+)\s*=\s*(.+)$/.exec(entry);
    if (!match) throw new Error(`Bad API key entry "${entry}": expected KEY=acct[,acct...]`);
    const [, key = '', accountList = ''] = match;
    if (keys.has(key)) throw new Error(`API key ${key} is listed twice`);
    const accountIds = accountList.split(',').map((part) => {
      const text = part.trim();
      if (!/^[1-9]\d{0,9}$/.test(text)) throw new Error(`Bad account id "${text}" for API key ${key}: expected a positive integer`);
      return Number(text);
    });
    keys.set(key, accountIds);
  }
  return keys;
}
