import { randomUUID } from 'node:crypto';
import { V2Error } from '../v2/errors.ts';
import { KEY_HEADERS } from './identity.ts';
import { keyFinder } from './key-disguises.ts';

/**
 * The request id a request is logged and answered under. An incoming `X-Request-Id` is kept
 * only when it is an honest id (a UUID, a trace id, a short token): it is echoed in a
 * response header and written to every log line, so anything that may be a credential is
 * replaced by a fresh UUID, never echoed or logged. Replacing an honest id costs only
 * correlation; echoing a key would leak it, so doubtful ids are replaced.
 */
const SHAPE = /^[A-Za-z0-9._-]{1,64}$/;
/** JWTs and other base64 JSON (`{"` is `eyJ`), and auth scheme words (`Bearer-...`). */
// `eyJ` only in that case (`heyjude` is no JWT); the scheme words in any case.
const TOKEN_MARKERS = /eyJ|(?:^|[._-])(?:[Bb][Ee][Aa][Rr][Ee][Rr]|[Bb][Aa][Ss][Ii][Cc])(?:[._-]|$)/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]+$/i;
/** ULIDs: a 48-bit time then 80 random bits, Crockford base32 (no I, L, O, U). */
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/**
 * Unmistakably key-like: the caller's key or a New Relic key (a prefix or a license suffix),
 * plain or encoded (src/caller/key-disguises.ts), a token marker, or one run of characters
 * longer than any trace id (40- and 47-character REST and license keys, base64 blobs).
 */
function looksLikeKey(text: string, callerKeys: readonly string[]): boolean {
  if (keyFinder(callerKeys)(text)) return true;
  if (UUID.test(text)) return false;
  if (TOKEN_MARKERS.test(text)) return true;
  return text.split(/[._:-]/).some((segment) => segment.length > 32);
}

/** Is this id-shaped text possibly a secret? Exported for the property tests. */
export function looksSecret(id: string, callerKeys: readonly string[] = []): boolean {
  if (looksLikeKey(id, callerKeys)) return true;
  if (UUID.test(id) || ULID.test(id)) return false;
  // Random tokens (base64, base62, a key body without its prefix) mix letters with digits or
  // cases over many characters; hex trace ids (with or without separators) are left alone.
  const alnum = id.replace(/[._-]/g, '');
  if (alnum.length < 24 || HEX.test(alnum)) return false;
  return (/[0-9]/.test(alnum) && /[A-Za-z]/.test(alnum)) || (/[a-z]/.test(alnum) && /[A-Z]/.test(alnum));
}

/** What the caller sent as its key, in either header. */
export function callerKeysOf(headers: Headers): string[] {
  return KEY_HEADERS.flatMap((name) => {
    const value = headers.get(name)?.trim();
    return value ? [value] : [];
  });
}

/** The id for this request: the incoming one when it is safe, else a fresh UUID. */
export function requestIdFor(headers: Headers): string {
  const incoming = headers.get('x-request-id');
  if (incoming === null || !SHAPE.test(incoming)) return randomUUID();
  return looksSecret(incoming, callerKeysOf(headers)) ? randomUUID() : incoming;
}

/**
 * The other request header the gateway reflects: without PUBLIC_BASE_URL, Link URLs are
 * built on the Host the request named. A Host that carries a key is refused rather than
 * written into a Link header. Only the caller's own key or a New Relic key shape (plain or
 * encoded) counts: real
 * host names hold words like `basic`, long labels, and letters mixed with digits
 * (`my-lb-1234567890.us-west-2.elb.amazonaws.com`). With PUBLIC_BASE_URL set, Host is never
 * reflected and this is not called.
 */
export function refuseSecretHost(headers: Headers): void {
  const host = headers.get('host');
  // Shorter than any key: the common case, checked on every request.
  if (host === null || host.length < 16) return;
  if (keyFinder(callerKeysOf(headers))(host)) {
    throw new V2Error(400, 'Invalid Host header', { kind: 'bad_host' });
  }
}
