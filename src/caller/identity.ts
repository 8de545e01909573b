import { createHmac, randomBytes } from 'node:crypto';
import { V2Error, V2Titles } from '../v2/errors.ts';

/**
 * Who is calling. The API key is kept only to be forwarded to NerdGraph; everything that
 * outlives the request (cache keys, coalescing keys) uses `identity`, an HMAC of the key with
 * a per-process secret, so neither the key nor a portable hash of it is ever stored.
 */
export interface Caller {
  apiKey: string;
  identity: string;
  /** The client's socket address (limits key verifications); absent under app.request(). */
  address?: string;
}

/** REST v2 accepted both header names (client-behaviour.md §2). */
const KEY_HEADERS = ['x-api-key', 'api-key'] as const;

// Printable ASCII only: anything else cannot be a New Relic key and must not reach a header.
const KEY_SHAPE = /^[\x21-\x7e]{1,256}$/;

export type IdentityOf = (apiKey: string) => string;

export function createIdentityHasher(secret: Buffer = randomBytes(32)): IdentityOf {
  return (apiKey) => createHmac('sha256', secret).update(apiKey).digest('base64url').slice(0, 32);
}

export function callerFrom(headers: Headers, identityOf: IdentityOf, address?: string): Caller {
  const raw = KEY_HEADERS.map((name) => headers.get(name)).find((value) => value !== null && value.trim() !== '');
  if (raw === undefined || raw === null) throw new V2Error(401, V2Titles.apiKeyRequired, { kind: 'missing_key' });
  const apiKey = raw.trim();
  if (!KEY_SHAPE.test(apiKey)) throw new V2Error(401, V2Titles.invalidApiKey, { kind: 'bad_key' });
  return { apiKey, identity: identityOf(apiKey), ...(address === undefined ? {} : { address }) };
}
