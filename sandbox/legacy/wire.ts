/**
 * The legacy face's wire: what every REST v2 answer looks like on the way out (JSON or XML,
 * content type, error body, timestamps) and how a form body is read on the way in. Written
 * from the v2 documentation as `../shared/reference/` records it, for the sandbox alone:
 * - formats: the path suffix picks JSON or XML (rest-v2.md §3.1);
 * - errors: `{"error":{"title":...}}`, `messages` inside `error` when there are details
 *   (rest-v2.md §3.10, New Relic's Go client `DefaultErrorResponse`);
 * - times: `YYYY-MM-DDTHH:MM:SS+00:00`, UTC, no fraction (rest-v2-shapes.md, conventions);
 * - XML: no v2 XML sample is documented (rest-v2.md §3.12, UNCONFIRMED); the v1 XML API used
 *   Rails' conventions and a .NET client reads dotted link names as elements, so the face
 *   writes the JSON body as Rails' `to_xml` would: `type="array"` lists of singular elements,
 *   `type="integer"|"float"|"boolean"`, `nil="true"`, under one `<response>` root.
 */
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type V2Body = { [key: string]: JsonValue };
export type V2Format = 'json' | 'xml';

export const CONTENT_TYPES: Readonly<Record<V2Format, string>> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};

/** `error` XML 1.0 cannot hold these characters at all: they are written as U+FFFD. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;
const XML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function escapeXmlText(text: string): string {
  return text.replace(FORBIDDEN_IN_XML, '\ufffd').replace(/[&<>"']/g, (c) => XML_ENTITIES[c] as string);
}

/** Rails' singularize for the names v2 uses (`policies` -> `policy`, `metrics` -> `metric`). */
function itemName(listName: string): string {
  if (/ies$/.test(listName)) return listName.replace(/ies$/, 'y');
  if (/[^s]s$/.test(listName)) return listName.slice(0, -1);
  return listName;
}

function writeXml(name: string, value: JsonValue, out: string[]): void {
  if (value === null) return void out.push(`<${name} nil="true"/>`);
  if (Array.isArray(value)) {
    out.push(`<${name} type="array">`);
    for (const item of value) writeXml(itemName(name), item, out);
    return void out.push(`</${name}>`);
  }
  switch (typeof value) {
    case 'object':
      out.push(`<${name}>`);
      for (const key of Object.keys(value)) writeXml(key, value[key] as JsonValue, out);
      return void out.push(`</${name}>`);
    case 'number':
      // Whole numbers as Ruby's Integer#to_s writes them (never in exponent form).
      if (Number.isInteger(value)) return void out.push(`<${name} type="integer">${BigInt(value)}</${name}>`);
      return void out.push(`<${name} type="float">${value}</${name}>`);
    case 'boolean':
      return void out.push(`<${name} type="boolean">${value}</${name}>`);
    default:
      out.push(`<${name}>${escapeXmlText(value)}</${name}>`);
  }
}

/** The body as the format writes it. */
export function serialise(body: V2Body, format: V2Format): string {
  if (format === 'json') return JSON.stringify(body);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  writeXml('response', body, out);
  return out.join('');
}

/** v2's error body (rest-v2.md §3.10). */
export function errorBody(title: string, messages: readonly string[] = []): V2Body {
  return { error: messages.length === 0 ? { title } : { title, messages: [...messages] } };
}

export type V2Status = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 422 | 429 | 500;

/** A v2 error answer, thrown by a route and written by the dispatcher (face.ts) in the request's format. */
export class V2Error extends Error {
  readonly headers: Record<string, string>;
  readonly messages: readonly string[];

  readonly status: V2Status;
  readonly title: string;

  constructor(
    status: V2Status,
    title: string,
    options: { headers?: Record<string, string>; messages?: readonly string[] } = {},
  ) {
    super(title);
    this.status = status;
    this.title = title;
    this.name = 'LegacyV2Error';
    this.headers = options.headers ?? {};
    this.messages = options.messages ?? [];
  }
}

export const notFound = (title = 'Resource not found'): V2Error => new V2Error(404, title);
export const invalidParameter = (title: string): V2Error => new V2Error(422, title);

/** A v2 time (rest-v2-shapes.md, conventions): UTC, whole seconds, `+00:00`. */
export function isoSeconds(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', '+00:00');
}

/** The largest body the face reads (its own bound; v2's is not documented). */
export const MAX_BODY_BYTES = 1 << 20;

export const tooLarge = (): V2Error => new V2Error(413, REQUEST_RULE_TITLES.bodyTooLarge(MAX_BODY_BYTES), { headers: { connection: 'close' } });

/**
 * A form-encoded body's text, or undefined when the request carries none. Clients send v2
 * parameters as a form body, GET included (`curl -X GET -d`, client-behaviour.md §3); a Fetch
 * Request has no GET body, so under Node the raw request (`incoming`) is read, up to the bound.
 */
export async function readFormBody(request: Request, incoming: AsyncIterable<Buffer> | undefined): Promise<string | undefined> {
  const media = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (media !== 'application/x-www-form-urlencoded') return undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD') return request.text();
  if (!incoming) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  // By hand rather than for-await: leaving that loop early would destroy the request before
  // the 413 is written.
  const reader = incoming[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await reader.next();
      if (next.done === true) break;
      size += next.value.length;
      if (size > MAX_BODY_BYTES) throw tooLarge();
      chunks.push(next.value);
    }
  } catch (error) {
    if (error instanceof V2Error) throw error;
    throw new V2Error(400, REQUEST_RULE_TITLES.bodyUnreadable);
  }
  return Buffer.concat(chunks).toString('utf8');
}
