import { XMLParser } from 'fast-xml-parser';
import { V2Error } from '../errors.ts';

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

// No entity expansion or DOCTYPE processing: a body must not make the parser do unbounded work.
const xml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

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
  if (parsed === null || typeof parsed !== 'object' || Object.keys(parsed).length === 0) throw badBody('XML');
  // An empty element (<changelog/>) parses as '': the same as a key sent with no value.
  return parsed as BodyObject;
}

/** `a[b][c]=v` -> {a: {b: {c: v}}}; a later value for the same key wins, as in Rails. */
function fromForm(text: string): BodyObject {
  const root: BodyObject = Object.create(null) as BodyObject;
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const path = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    if (!path) throw badBody('form data');
    const keys = [path[1] as string, ...[...(path[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)].filter((k) => k !== '');
    let node = root;
    keys.forEach((key, index) => {
      if (index === keys.length - 1) {
        node[key] = value;
        return;
      }
      const next = node[key];
      if (next === undefined || next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = Object.create(null) as BodyObject;
      node = node[key] as BodyObject;
    });
  }
  return root;
}

/** Parses a write body by its content type; a JSON-looking body without a type is read as JSON. */
export function parseRequestBody(contentType: string | undefined, text: string): BodyObject {
  // Clients send a content type on every request (client-go: JSON), bodiless DELETEs included.
  if (text.trim() === '') return Object.create(null) as BodyObject;
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/x-www-form-urlencoded') return fromForm(text);
  if (type === 'application/xml' || type === 'text/xml') return fromXml(text);
  if (type === 'application/json' || type.endsWith('+json')) return fromJson(text);
  const start = text.trimStart()[0];
  if (start === '{') return fromJson(text);
  if (start === '<') return fromXml(text);
  throw badBody('JSON');
}

/** The object under `key`, or undefined when absent or not an object. */
export function objectAt(body: BodyObject, key: string): BodyObject | undefined {
  const value = Object.hasOwn(body, key) ? body[key] : undefined;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}
