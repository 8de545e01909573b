import { randomUUID } from 'node:crypto';
import { V2Error } from '../v2/errors.ts';

/**
 * The request id a request is logged and answered under. An incoming `X-Request-Id` is kept
 * only when it is an honest id (a UUID, a trace id, a short token): it is echoed in a
 * response header and written to every log line, so anything that may be a credential is
 * replaced by a fresh UUID, never echoed or logged. Replacing an honest id costs only
 * correlation; echoing a key would leak it, so doubtful ids are replaced.
 */
const SHAPE = /^[A-Za-z0-9._-]{1,64}$/;

/** New Relic key prefixes: user, admin, ingest/insert, browser, query, and their kin. */
const KEY_PREFIX = /NR(?:AK|AA|II|JS|IQ|SP|AL)-/i;
/** New-style license keys end in NRAL (36 hex + NRAL). */
const LICENSE_SUFFIX = /[0-9a-f]{20,}NRAL/i;
/** JWTs and other base64 JSON (`{"` is `eyJ`), and auth scheme words (`Bearer-...`). */
const TOKEN_MARKERS = /eyJ|(?:^|[._-])(?:bearer|basic)(?:[._-]|$)/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]+$/i;

/** What the caller sent as a key (either header), so an id that carries it is refused. */
const KEY_HEADERS = ['x-api-key', 'api-key'] as const;

/** Is this id-shaped text possibly a secret? Exported for the property tests. */
export function looksSecret(id: string, callerKeys: readonly string[] = []): boolean {
  for (const key of callerKeys) {
    // The key, any part of it long enough to matter, or the key inside the id.
    if (key.length > 0 && (id.includes(key) || (id.length >= 8 && key.includes(id)))) return true;
  }
  if (UUID.test(id)) return false;
  if (KEY_PREFIX.test(id) || LICENSE_SUFFIX.test(id) || TOKEN_MARKERS.test(id)) return true;
  // 40- and 47-character REST and license keys, base64 blobs: longer than any trace id (32 hex).
  if (id.split(/[._-]/).some((segment) => segment.length > 32)) return true;
  // Random tokens (base64, base62, a key body without its prefix) mix letters with digits or
  // cases over many characters; hex trace ids (with or without separators) are left alone.
  const alnum = id.replace(/[._-]/g, '');
  if (alnum.length < 24 || HEX.test(alnum)) return false;
  return (/[0-9]/.test(alnum) && /[A-Za-z]/.test(alnum)) || (/[a-z]/.test(alnum) && /[A-Z]/.test(alnum));
}

/** The id for this request: the incoming one when it is safe, else a fresh UUID. */
export function requestIdFor(headers: Headers): string {
  const incoming = headers.get('x-request-id');
  if (incoming === null || !SHAPE.test(incoming)) return randomUUID();
  const keys = KEY_HEADERS.flatMap((name) => {
    const value = headers.get(name)?.trim();
    return value ? [value] : [];
  });
  return looksSecret(incoming, keys) ? randomUUID() : incoming;
}

/**
 * The other request header the gateway reflects: without PUBLIC_BASE_URL, Link URLs are
 * built on the Host the request named. A Host that looks like a key is refused rather than
 * written into a Link header (no real host name looks like one).
 */
export function refuseSecretHost(headers: Headers): void {
  const host = headers.get('host');
  // Shorter than any key (the common case, checked per request); then label by label, since
  // a long host name is many short honest labels.
  if (host === null || host.length < 24) return;
  if (host.replace(/:\d+$/, '').split('.').some((label) => looksSecret(label))) {
    throw new V2Error(400, 'Invalid Host header', { kind: 'bad_host' });
  }
}
