import { KEY_HEADERS, type IdentityOf } from './identity.ts';
import { keyFinder } from './key-disguises.ts';

/**
 * Who called, as the /bridge/ page groups callers into integrations: the User-Agent and a
 * fingerprint of the key. The fingerprint is the first FINGERPRINT_CHARS characters of an HMAC
 * of the key under a secret of its own (OpenedState.fingerprintOf, src/state/open.ts): nothing
 * of the key itself, no prefix of it, and no way back to it without the secret. Read on every
 * /v2 request, so it stays cheap: two header reads and a memoised HMAC, no await. The
 * User-Agent is checked for the caller's key (plain or disguised, key-disguises.ts) only when
 * the store first meets an integration, through `agentCarriesKey`.
 */
export interface SeenCaller {
  /** The key's fingerprint, or NO_KEY_FINGERPRINT. */
  fingerprint: string;
  /** The User-Agent as sent ('' when absent); never kept as is: the store cleans and bounds it. */
  userAgent: string;
  /** Does this text carry the caller's key, or any New Relic key, plain or disguised? */
  agentCarriesKey(agent: string): boolean;
}

/** 12 base64url characters: 72 bits of the HMAC, enough to tell integrations apart. */
export const FINGERPRINT_CHARS = 12;
/** The fingerprint of requests that sent no key. */
export const NO_KEY_FINGERPRINT = '(no key)';

/** Without a caller's key: any New Relic key, plain or disguised. */
const anyKeyIn = keyFinder([]);

export function seenCaller(headers: Headers, fingerprintOf: IdentityOf): SeenCaller {
  // KEY_HEADERS, in their order, unrolled: this runs on every request.
  const key = headers.get(KEY_HEADERS[0])?.trim() || headers.get(KEY_HEADERS[1])?.trim() || undefined;
  const userAgent = headers.get('user-agent') ?? '';
  if (key === undefined) return { fingerprint: NO_KEY_FINGERPRINT, userAgent, agentCarriesKey: anyKeyIn };
  const found = key;
  return {
    fingerprint: fingerprintOf(found).slice(0, FINGERPRINT_CHARS),
    userAgent,
    agentCarriesKey: (agent) => keyFinder([found])(agent),
  };
}
