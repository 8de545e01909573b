/**
 * REST v2 XML, in the conventional Rails `to_xml` form (an assumption: no v2 XML sample is
 * documented, rest-v2.md §3.12). The XML mirrors the JSON body key for key under a
 * `<response>` root: arrays become `<key type="array">` holding one singular-named element per
 * item, numbers carry `type="integer"` or `type="float"`, booleans `type="boolean"`, null
 * `nil="true"`. Dotted keys such as `application.servers` are kept, as a .NET client expects.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const XML_ROOT = 'response';

/** The XML choice, as each mapping records it among its assumptions (compat report). */
export const XML_ASSUMPTION =
  'XML (UNCONFIRMED: no v2 XML sample is documented) is the Rails to_xml form of the JSON body under a <response> root: ' +
  'arrays as type="array" with singular item elements, type="integer|float|boolean" by value (whole numbers are integer), nil="true" for null, ' +
  'dotted link keys kept as element names.';

/** Element name for an item of an array held under `key`. */
export function singular(key: string): string {
  if (key.endsWith('ies')) return `${key.slice(0, -3)}y`;
  if (key.endsWith('s') && !key.endsWith('ss')) return key.slice(0, -1);
  return key;
}

// Characters XML 1.0 cannot carry at all are replaced, not escaped.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

export function escapeXmlText(text: string): string {
  return text
    .replace(NOT_XML_CHAR, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function element(name: string, value: JsonValue, out: string[]): void {
  if (value === null) {
    out.push(`<${name} nil="true"/>`);
  } else if (Array.isArray(value)) {
    out.push(`<${name} type="array">`);
    const itemName = singular(name);
    for (const item of value) element(itemName, item, out);
    out.push(`</${name}>`);
  } else if (typeof value === 'object') {
    out.push(`<${name}>`);
    for (const [key, child] of Object.entries(value)) element(key, child, out);
    out.push(`</${name}>`);
  } else if (typeof value === 'number') {
    // JavaScript writes integers from 1e21 up in exponent form, which is no XML integer.
    const text = Number.isInteger(value) ? BigInt(value).toString() : String(value);
    out.push(`<${name} type="${Number.isInteger(value) ? 'integer' : 'float'}">${text}</${name}>`);
  } else if (typeof value === 'boolean') {
    out.push(`<${name} type="boolean">${value}</${name}>`);
  } else {
    out.push(`<${name}>${escapeXmlText(value)}</${name}>`);
  }
}

export function toXml(body: { [key: string]: JsonValue }): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  element(XML_ROOT, body, out);
  return out.join('');
}
