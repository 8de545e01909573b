import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { GatewayEnv } from '../routes/context.ts';
import { V2Error } from '../v2/errors.ts';

/**
 * Who may read the /bridge/ parity pages. Their records hold data of callers' accounts (request
 * paths, answer values), so: with BRIDGE_TOKEN set, `Authorization: Bearer <token>` or HTTP
 * Basic with the token as password (any user name: a browser then prompts); without it, loopback
 * clients only, so a gateway started on a laptop shows its page and a deployed one shows nothing
 * until it is given a token. Without a token a request must also:
 * - name a loopback host (`localhost`, `127.x.x.x`, `[::1]`, any port) in Host: a web page the
 *   laptop's browser opened can point its own domain at 127.0.0.1 (DNS rebinding) and read the
 *   page as same-origin, but its Host then names that domain;
 * - not be `Sec-Fetch-Site: cross-site` (a browser sent it for another site's page);
 * - carry no header a proxy adds: a reverse proxy or sidecar on the same host connects from
 *   127.0.0.1 and would otherwise open the pages to everyone it serves. A proxy that adds none
 *   of them cannot be told from a local client: it needs BRIDGE_TOKEN (docs/security.md).
 */
const PROXY_HEADERS: ReadonlySet<string> = new Set(['forwarded', 'x-real-ip', 'via', 'cf-connecting-ip', 'true-client-ip', 'x-client-ip']);
/** X-Forwarded-For, -Host, -Proto, -Port, -Server...: any of the family. */
const PROXY_HEADER_PREFIX = 'x-forwarded-';

function relayedByProxy(headers: Headers): boolean {
  for (const name of headers.keys()) {
    if (PROXY_HEADERS.has(name) || name.startsWith(PROXY_HEADER_PREFIX)) return true;
  }
  return false;
}

export const BridgeTitles = {
  tokenRequired: 'Bridge pages require the BRIDGE_TOKEN: send Authorization: Bearer <token>, or Basic with the token as password',
  loopbackOnly: 'Bridge pages are served only to loopback clients: set BRIDGE_TOKEN on the gateway to serve them to others',
  loopbackHost: 'Bridge pages are served without BRIDGE_TOKEN only under a loopback host name (localhost, 127.0.0.1, [::1]): set BRIDGE_TOKEN on the gateway to serve them under another',
  crossSite: 'Bridge pages are not served to requests another site made: open the page directly, or set BRIDGE_TOKEN',
} as const;

/** 127.0.0.0/8 and ::1, plain or IPv4-mapped. */
export function isLoopbackAddress(address: string): boolean {
  const plain = address.toLowerCase().replace(/^::ffff:/, '');
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/**
 * Does this Host header value name the loopback interface (any port)? Parsed as a URL authority,
 * so case and numeric IPv4 spellings are normalised; user info, paths or anything else is refused.
 */
export function isLoopbackHost(host: string): boolean {
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Equal-time comparison of the presented secret with the token (hashes: equal lengths whatever was sent). */
function sameSecret(presented: string, token: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(token));
}

/** The secret an Authorization header presents: a Bearer token, or a Basic password. */
export function presentedSecret(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const [scheme, credentials, ...rest] = authorization.trim().split(/\s+/);
  if (!scheme || !credentials || rest.length > 0) return undefined;
  if (scheme.toLowerCase() === 'bearer') return credentials;
  if (scheme.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

export function bridgeAccess(bridgeToken: string | undefined): MiddlewareHandler<GatewayEnv> {
  const token = bridgeToken === undefined || bridgeToken === '' ? undefined : bridgeToken;
  return async (c, next) => {
    if (token !== undefined) {
      const presented = presentedSecret(c.req.header('authorization'));
      if (presented === undefined || !sameSecret(presented, token)) {
        throw new V2Error(401, BridgeTitles.tokenRequired, {
          kind: 'bridge_token',
          headers: { 'www-authenticate': 'Basic realm="v2-bridge", charset="UTF-8"' },
        });
      }
      return next();
    }
    // Under app.request() there is no socket: an in-process caller is this process. A socket
    // without an address (already closed) is not known to be loopback.
    const incoming = c.env?.incoming;
    const address = incoming?.socket?.remoteAddress;
    const remote = incoming !== undefined && (address === undefined || !isLoopbackAddress(address));
    const proxied = relayedByProxy(c.req.raw.headers);
    if (remote || proxied) throw new V2Error(403, BridgeTitles.loopbackOnly, { kind: 'bridge_not_loopback' });
    // No Host header (HTTP/1.0; in-process): the host the request URL was built on.
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    if (!isLoopbackHost(host)) throw new V2Error(403, BridgeTitles.loopbackHost, { kind: 'bridge_not_loopback' });
    if (c.req.header('sec-fetch-site')?.trim().toLowerCase() === 'cross-site') {
      throw new V2Error(403, BridgeTitles.crossSite, { kind: 'bridge_not_loopback' });
    }
    return next();
  };
}
