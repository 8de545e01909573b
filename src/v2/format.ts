import { createHash } from 'node:crypto';
import { toXml, type JsonValue } from './xml.ts';

/** The two REST v2 representations, chosen by the path suffix. */
export type V2Format = 'json' | 'xml';

/** The format an error should use when the path did not match any route (or reached no app). */
export function formatOfPath(path: string): V2Format {
  return path.endsWith('.xml') ? 'xml' : 'json';
}

export const CONTENT_TYPES: Record<V2Format, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};

export type V2Body = { [key: string]: JsonValue };

/**
 * What writing an answer reads of the request's context: its id (for x-request-id), its method
 * and one header. Narrow, so the wire sits below the router whose context (a Hono Context with
 * the gateway's variables) provides it.
 */
export interface AnswerContext {
  get(key: 'requestId'): string;
  req: { readonly method: string; header(name: string): string | undefined };
}

export function serialise(body: V2Body, format: V2Format): string {
  return format === 'xml' ? toXml(body) : JSON.stringify(body);
}

/** Writes a v2 body with the right content type; `headers` are added as given. */
export function respond(
  c: AnswerContext,
  format: V2Format,
  status: number,
  body: V2Body,
  headers: Record<string, string> = {},
): Response {
  return respondText(c, format, status, serialise(body, format), headers);
}

/** As respond, for a body already serialised (shared by coalesced requests). */
export function respondText(
  c: AnswerContext,
  format: V2Format,
  status: number,
  text: string | Uint8Array,
  headers: Record<string, string> = {},
): Response {
  return new Response(text, {
    status,
    headers: { 'content-type': CONTENT_TYPES[format], 'x-request-id': c.get('requestId'), ...headers },
  });
}

/** v2's error body: `{"error":{"title"}}`, with `messages` when there are details to give. */
export function errorBody(title: string, messages?: readonly string[]): V2Body {
  return { error: messages && messages.length > 0 ? { title, messages: [...messages] } : { title } };
}

/**
 * A 200 answer with v2's caching headers (metric responses carried `etag` and
 * `cache-control`): a strong ETag over the body, and 304 with no body when the client's
 * If-None-Match already names it.
 */
export function respondCacheable(c: AnswerContext, format: V2Format, body: V2Body, headers: Record<string, string> = {}): Response {
  return respondRendered(c, format, renderCacheable(body, format), headers);
}

/** A body serialised once with its strong ETag: callers sharing one answer share this too. */
export interface Rendered {
  /** The body as sent: encoded once, so a shared answer is neither re-encoded nor re-measured per caller. */
  bytes: Uint8Array;
  etag: string;
}

export function renderCacheable(body: V2Body, format: V2Format): Rendered {
  const bytes = Buffer.from(serialise(body, format), 'utf8');
  return { bytes, etag: `"${createHash('sha1').update(bytes).digest('base64url')}"` };
}

/** As respondCacheable, for a body already rendered (shared by coalesced requests). */
export function respondRendered(c: AnswerContext, format: V2Format, rendered: Rendered, headers: Record<string, string> = {}): Response {
  const { bytes, etag } = rendered;
  const cacheHeaders = { etag, 'cache-control': 'max-age=0, private, must-revalidate', ...headers };
  // RFC 9110: 304 answers only safe methods (a POST read of metric data gets the full body).
  const safe = c.req.method === 'GET' || c.req.method === 'HEAD';
  if (safe && matchesEtag(c.req.header('if-none-match'), etag)) {
    return new Response(null, { status: 304, headers: { 'x-request-id': c.get('requestId'), ...cacheHeaders } });
  }
  return respondText(c, format, 200, bytes, cacheHeaders);
}

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}
