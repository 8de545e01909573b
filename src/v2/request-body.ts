import { XMLParser } from 'fast-xml-parser';
import { V2Error } from './errors.ts';

/**
 * A v2 write body, whatever it arrived as (docs/write-rules.md §1): JSON, XML (the root element
 * is the wrapper, e.g. `<deployment><revision>…</revision></deployment>`), or a form
 * (`deployment[revision]=…`, the v0 and curl style). The result is plain data: objects of
 * strings, numbers, booleans, null and nested objects; XML and form values are strings.
 */
export type BodyValue = string | number | boolean | null | BodyObject | BodyValue[];
export interface BodyObject {
  [key: string]: BodyValue;
}

const badBody = (what: string): V2Error => new V2Error(400, `The request body is not valid ${what}`, { kind: 'bad_body' });

// Values stay text (as Rails read them); XML's entities and character references (and HTML's
// named ones) are decoded. A DOCTYPE is refused before parsing, so none can be declared.
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

/**
 * Rails' Hash.from_xml: an element holding elements is an object, one holding text is its
 * text (untrimmed), `nil="true"` is null, repeated elements are a list, dashes read as
 * underscores, other attributes and the whitespace between elements are ignored.
 */
function fromXmlNode(value: unknown): BodyValue {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(fromXmlNode);
  if (value === null || typeof value !== 'object') return '';
  const node = value as Record<string, unknown>;
  if (node['@_nil'] === 'true') return null;
  const elements = Object.keys(node).filter((key) => !key.startsWith('@_') && key !== '#text');
  if (elements.length === 0) return typeof node['#text'] === 'string' ? node['#text'] : '';
  const object: BodyObject = Object.create(null) as BodyObject;
  for (const key of elements) object[key.replace(/-/g, '_')] = fromXmlNode(node[key]);
  return object;
}

function fromJson(text: string): BodyObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badBody('JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badBody('JSON');
  return parsed as BodyObject;
}

function fromXml(text: string): BodyObject {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badBody('XML');
  let parsed: unknown;
  try {
    parsed = xml.parse(text, true);
  } catch {
    throw badBody('XML');
  }
  const root = fromXmlNode(parsed);
  if (root === null || typeof root !== 'object' || Array.isArray(root) || Object.keys(root).length !== 1) throw badBody('XML');
  return root;
}

/** Every `%` escape must decode: URLSearchParams would quietly keep a broken one as text. */
function checkEscapes(text: string): void {
  for (const segment of text.split('&')) {
    try {
      decodeURIComponent(segment.replace(/\+/g, ' '));
    } catch {
      throw badBody('form data');
    }
  }
}

/** `a[b][c]=v` -> {a: {b: {c: v}}}; a later value for the same key wins, as in Rails. */
function fromForm(text: string): BodyObject {
  checkEscapes(text);
  const root: BodyObject = Object.create(null) as BodyObject;
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const path = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    if (!path) throw badBody('form data');
    const keys = [path[1] as string, ...[...(path[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)].filter((k) => k !== '');
    // Labels: a trailing `[]` appends to a list (`label[links][applications][]=1&...[]=2`), as in Rack.
    const appends = (path[2] ?? '').endsWith('[]');
    let node = root;
    keys.forEach((key, index) => {
      const existing = Object.hasOwn(node, key) ? node[key] : undefined;
      const isGroup = existing !== undefined && existing !== null && typeof existing === 'object';
      if (index === keys.length - 1) {
        if (appends) {
          // In place: copying the list for every value would make a long list quadratic.
          if (existing === undefined) node[key] = [value];
          else if (Array.isArray(existing)) existing.push(value);
          // `a=1&a[]=2`: one key both a value and a list (Rack refuses it too).
          else throw badBody('form data');
          return;
        }
        // `deployment=x&deployment[revision]=y`: one key both a value and a group.
        if (isGroup) throw badBody('form data');
        node[key] = value;
        return;
      }
      if (existing !== undefined && !isGroup) throw badBody('form data');
      if (existing === undefined) node[key] = Object.create(null) as BodyObject;
      node = node[key] as BodyObject;
    });
  }
  return root;
}

/** How a write body is read: by its content type, else a JSON-looking body as JSON, `<` as XML. */
export type RequestBodyKind = 'none' | 'json' | 'xml' | 'form';

export function requestBodyKind(contentType: string | undefined, text: string): RequestBodyKind {
  // Clients send a content type on every request (client-go: JSON), bodiless DELETEs included.
  if (text.trim() === '') return 'none';
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'application/xml' || type === 'text/xml') return 'xml';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  return text.trimStart()[0] === '<' ? 'xml' : 'json';
}

/** Parses a write body by its kind (requestBodyKind). */
export function parseRequestBody(contentType: string | undefined, text: string): BodyObject {
  switch (requestBodyKind(contentType, text)) {
    case 'none':
      return Object.create(null) as BodyObject;
    case 'form':
      return fromForm(text);
    case 'xml':
      return fromXml(text);
    case 'json':
      return fromJson(text);
  }
}

/** A nested object (not a list, not null). */
export function isBodyObject(value: BodyValue | undefined): value is BodyObject {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value);
}

/** The object under `key`, or undefined when absent or not an object. */
export function objectAt(body: BodyObject, key: string): BodyObject | undefined {
  const value = Object.hasOwn(body, key) ? body[key] : undefined;
  return isBodyObject(value) ? value : undefined;
}
