/**
 * Request bodies as the legacy face's writes read them (docs/write-rules.md §1): JSON, XML
 * (Rails' `to_xml` form) or form data, bounded in size and nesting, decoded into one parameter
 * tree as Rails' params would be; a body of another type carries no parameters, and a broken one
 * is 400. Also the small readers of that tree (own keys only, text, "given", characters).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { V2Error, MAX_BODY_BYTES, type JsonValue } from './wire.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

const MAX_NESTING = 32;
export type Params = { [key: string]: JsonValue };

export const isObject = (value: JsonValue | undefined): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An own key only: a body's keys never reach Object.prototype. */
export function field(holder: JsonValue | undefined, key: string): JsonValue | undefined {
  return isObject(holder) && Object.hasOwn(holder, key) ? holder[key] : undefined;
}

/** A string, or a number read as its text; anything else is undefined. */
export function textOf(value: JsonValue | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
export const OUTSIDE_BMP = /[\u{10000}-\u{10FFFF}]/u;

/** Characters (code points). */
export const characters = (text: string): number => text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);
/** Absent and null both mean "not given". */
export const given = (value: JsonValue | undefined): value is Exclude<JsonValue, null> => value !== undefined && value !== null;

// ---------------------------------------------------------------------------------------------
// Request bodies (rules §1)

type BodyKind = 'json' | 'xml' | 'form';

const NOT_VALID: Record<BodyKind, string> = {
  json: 'The request body is not valid JSON',
  xml: 'The request body is not valid XML',
  form: 'The request body is not valid form data',
};

function kindOf(contentType: string | null, bytes: Uint8Array): BodyKind | undefined {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === 'application/json' || media.endsWith('+json')) return 'json';
  if (media === 'application/xml' || media === 'text/xml' || media.endsWith('+xml')) return 'xml';
  if (media === 'application/x-www-form-urlencoded') return 'form';
  if (media === '') {
    // No type: JSON when the body starts with `{` (after any BOM or white space).
    for (const byte of bytes) {
      if (byte === 0x7b) return 'json';
      if (![0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf].includes(byte)) return undefined;
    }
  }
  // Any other type carries no parameters (as Rails ignores bodies it cannot parse).
  return undefined;
}

async function readBytes(request: Request): Promise<Uint8Array> {
  const tooLarge = (): V2Error =>
    new V2Error(413, REQUEST_RULE_TITLES.bodyTooLarge(MAX_BODY_BYTES), { headers: { connection: 'close' } });
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof V2Error) throw error;
    throw new V2Error(400, REQUEST_RULE_TITLES.bodyUnreadable);
  }
  return Buffer.concat(chunks);
}

/** The body's parameters as one tree; a body without parameters gives `{}`. */
export async function bodyParams(request: Request): Promise<Params> {
  const bytes = await readBytes(request);
  const kind = kindOf(request.headers.get('content-type'), bytes);
  if (kind === undefined) return {};
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new V2Error(400, NOT_VALID[kind]);
  }
  // A blank body carries no parameters, whatever its type says.
  if (text.trim() === '') return {};
  try {
    if (kind === 'json') {
      const value = JSON.parse(text) as JsonValue;
      return isObject(value) ? value : {};
    }
    if (kind === 'xml') return xmlParams(text);
    return formParams(formPairs(text));
  } catch {
    throw new V2Error(400, NOT_VALID[kind]);
  }
}

/** `a=1&b=2`, with `+` as a space; a broken escape or invalid UTF-8 throws. */
function formPairs(text: string): Array<[string, string]> {
  const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '));
  return text
    .split('&')
    .filter((piece) => piece !== '')
    .map((piece) => {
      const at = piece.indexOf('=');
      return at === -1 ? [decode(piece), ''] : [decode(piece.slice(0, at)), decode(piece.slice(at + 1))];
    });
}

/**
 * Rack-style nesting: `deployment[revision]=x` is `{deployment: {revision: "x"}}`, `a[]=x`
 * appends. Keys of another shape are ignored; a key that is both a value and a hash throws.
 */
export function formParams(pairs: Array<[string, string]>): Params {
  const root: Params = Object.create(null) as Params;
  for (const [key, value] of pairs) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) continue;
    const path = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
    if (path.length > MAX_NESTING) throw new Error('nested too deeply');
    const appends = path.at(-1) === '';
    if (path.slice(0, -1).includes('')) continue;
    const keys = appends ? path.slice(0, -1) : path;
    let holder = root;
    for (const step of keys.slice(0, -1)) {
      const next = Object.hasOwn(holder, step) ? holder[step] : undefined;
      if (next === undefined) holder = holder[step] = Object.create(null) as Params;
      else if (isObject(next)) holder = next;
      else throw new Error(`parameter ${step} is both a value and a hash`);
    }
    const last = keys.at(-1) as string;
    const existing = Object.hasOwn(holder, last) ? holder[last] : undefined;
    if (appends) {
      if (existing === undefined) holder[last] = [value];
      else if (Array.isArray(existing)) existing.push(value);
      else throw new Error(`parameter ${last} is both a list and another value`);
    } else if (existing !== undefined && typeof existing !== 'string') {
      throw new Error(`parameter ${last} is both a value and a hash`);
    } else {
      holder[last] = value;
    }
  }
  return root;
}

const xmlParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Entities are decoded below (the five XML ones and character references only): nothing a
  // document declares is ever expanded.
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
});

type XmlNode = { [key: string]: XmlNode[] | string | Record<string, string> | undefined } & { ':@'?: Record<string, string> };

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXmlText(text: string): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new Error('bare &');
    const named = XML_ENTITIES[name];
    if (named !== undefined) return named;
    const numeric = /^#(?:x([0-9a-f]{1,6})|([0-9]{1,7}))$/i.exec(name);
    if (!numeric) throw new Error(`undeclared entity &${name};`);
    const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : Number(numeric[2]);
    const allowed = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) throw new Error(`character reference &${name}; is not an XML character`);
    return String.fromCodePoint(code);
  });
}

const tagOf = (node: XmlNode): string | undefined => Object.keys(node).find((key) => key !== ':@');

/**
 * Rails' `Hash.from_xml`: the root element is the wrapper, an element holding elements is a
 * hash, one holding text is a string, repeated elements are a list, `nil="true"` is null, and
 * dashes in names read as underscores. Other attributes are ignored.
 */
function xmlParams(text: string): Params {
  if (/<!DOCTYPE/i.test(text)) throw new Error('DOCTYPE is not accepted');
  if (XMLValidator.validate(text) !== true) throw new Error('not well-formed');
  if (!text.trimEnd().endsWith('>')) throw new Error('text after the root element');
  const nodes = xmlParser.parse(text) as XmlNode[];
  const roots = nodes.filter((node) => tagOf(node) !== '#comment');
  if (roots.length !== 1) throw new Error('exactly one root element is expected');
  const root = roots[0] as XmlNode;
  const tag = tagOf(root) as string;
  const result: Params = Object.create(null) as Params;
  result[tag.replace(/-/g, '_')] = xmlValue(root, 1);
  return result;
}

function xmlValue(node: XmlNode, depth: number): JsonValue {
  if (depth > MAX_NESTING) throw new Error('nested too deeply');
  const tag = tagOf(node) as string;
  if (node[':@']?.nil === 'true') return null;
  const children = (node[tag] as XmlNode[] | undefined) ?? [];
  const elements = children.filter((child) => !['#text', '#cdata', '#comment'].includes(tagOf(child) ?? ''));
  if (elements.length === 0) {
    return children
      .map((child) => {
        if (typeof child['#text'] === 'string') return decodeXmlText(child['#text']);
        const cdata = child['#cdata'];
        if (Array.isArray(cdata)) return cdata.map((part) => String(part['#text'] ?? '')).join('');
        return '';
      })
      .join('');
  }
  const hash: Params = Object.create(null) as Params;
  const repeated = new Set<string>();
  for (const element of elements) {
    const name = (tagOf(element) as string).replace(/-/g, '_');
    const value = xmlValue(element, depth + 1);
    const existing = hash[name];
    if (!Object.hasOwn(hash, name)) hash[name] = value;
    else if (repeated.has(name)) (existing as JsonValue[]).push(value);
    else {
      hash[name] = [existing as JsonValue, value];
      repeated.add(name);
    }
  }
  return hash;
}

export function queryParams(query: URLSearchParams): Params {
  try {
    return formParams([...query]);
  } catch {
    throw new V2Error(400, 'The query string is not valid form data');
  }
}
