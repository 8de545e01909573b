import { createHmac, randomBytes } from 'node:crypto';
import { boundedMemo } from '../v2/bounded-memo.ts';
import { V2Error, V2Titles } from '../v2/errors.ts';

/**
 * Who is calling. The API key is kept only to be forwarded to NerdGraph; everything that
 * outlives the request (cache keys, coalescing keys) uses `identity`, an HMAC of the key with
 * a per-process secret, so no cache holds the key or a portable hash of it. The one exception is
 * the identity memo below (key -> identity, bounded, in this process's memory only, never
 * logged or exported), which saves an HMAC per request.
 */
export interface Caller {
  apiKey: string;
  identity: string;
  /** The client's socket address (limits key verifications); absent under app.request(). */
  address?: string;
}

/** REST v2 accepted both header names (client-behaviour.md §2). */
export const KEY_HEADERS = ['x-api-key', 'api-key'] as const;

// Printable ASCII only: anything else cannot be a New Relic key and must not reach a header.
const KEY_SHAPE = /^[\x21-\x7e]{1,256}$/;

export type IdentityOf = (apiKey: string) => string;

/** Keys whose identity is remembered; a busy gateway sees far fewer distinct keys than this. */
const MEMO_MAX = 1024;

/**
 * One HMAC per key, not per request: the last MEMO_MAX keys' identities are kept in this
 * process's memory (as the key itself is, for the request's lifetime); never logged or exported.
 */
export function createIdentityHasher(secret: Buffer = randomBytes(32), memoMax = MEMO_MAX): IdentityOf {
  return boundedMemo(memoMax, (apiKey: string) => createHmac('sha256', secret).update(apiKey).digest('base64url').slice(0, 32));
}

export function callerFrom(headers: Headers, identityOf: IdentityOf, address?: string): Caller {
  const raw = KEY_HEADERS.map((name) => headers.get(name)).find((value) => value !== null && value.trim() !== '');
  if (raw === undefined || raw === null) throw new V2Error(401, V2Titles.apiKeyRequired, { kind: 'missing_key' });
  const apiKey = raw.trim();
  if (!KEY_SHAPE.test(apiKey)) throw new V2Error(401, V2Titles.invalidApiKey, { kind: 'bad_key' });
  return { apiKey, identity: identityOf(apiKey), ...(address === undefined ? {} : { address }) };
}
