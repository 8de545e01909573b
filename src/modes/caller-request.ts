import { KEY_HEADERS } from '../caller/identity.ts';
import type { GatewayContext } from '../routes/context.ts';
import type { ResolvedRoute } from '../routes/resolved-route.ts';
import type { ShadowRequest } from '../routes/shadow-translation.ts';
import type { LegacyBody } from './passthrough.ts';

/** The caller's request as the mode strategies read it: its target, its body, its key. */

export const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

export function publicOriginOf(c: GatewayContext, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? new URL(c.req.url).origin;
}

/** Path and raw query as the client sent them (Node's request target when served over HTTP). */
export function targetOf(c: GatewayContext): string {
  const raw = c.env?.incoming?.url;
  if (raw !== undefined && raw.startsWith('/')) return raw;
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

/** A GET with a body (v2 read metric-data parameters from one); its body lives on the raw Node request (see form-body.ts). */
export function hasReadBody(c: GatewayContext): boolean {
  if (c.req.method !== 'GET') return false;
  const incoming = c.env?.incoming;
  return incoming !== undefined && (Number(incoming.headers['content-length'] ?? 0) > 0 || incoming.headers['transfer-encoding'] !== undefined);
}

/** The request body to forward as a stream; never one on a HEAD (a pooled connection could read it as the next request). */
export function streamedBody(c: GatewayContext): LegacyBody {
  if (c.req.method === 'HEAD') return null;
  if (c.req.method === 'GET') return hasReadBody(c) ? (c.env?.incoming ?? null) : null;
  return c.req.raw.body;
}

export async function bufferedBody(c: GatewayContext): Promise<Uint8Array | null> {
  if (READ_METHODS.has(c.req.method)) return null;
  // Hono keeps the bytes read here, so a translation running after this reads them again.
  return new Uint8Array(await c.req.arrayBuffer());
}

export function apiKeyOf(c: GatewayContext): string | undefined {
  for (const name of KEY_HEADERS) {
    const value = c.req.header(name)?.trim();
    if (value) return value;
  }
  return undefined;
}

/** Headers of a shadow request: what the answer depends on, the key in the header it came in. */
export function shadowHeaders(c: GatewayContext): Headers {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'user-agent', 'x-account-id']) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  // The gateway's id for the request (the caller's only when it was safe), never the raw header.
  headers.set('x-request-id', c.get('requestId'));
  const keyHeader = KEY_HEADERS.find((name) => (c.req.header(name) ?? '').trim() !== '');
  if (keyHeader !== undefined) headers.set(keyHeader, c.req.header(keyHeader) as string);
  return headers;
}

/** The caller's request again, as the gateway's own: it carries the caller's route, so it is not matched again. */
export function shadowRequestOf(c: GatewayContext, body: Uint8Array | null, route: ResolvedRoute): ShadowRequest {
  const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
  const request = new Request(c.req.url, { method, headers: shadowHeaders(c), ...(body === null ? {} : { body }) });
  return { request, route, requestId: c.get('requestId') };
}
