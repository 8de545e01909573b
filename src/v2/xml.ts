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

/**
 * How an answer's XML is laid out. v2's answers (the default) are one line under `<response>`;
 * the Deployments v0 answer is a Rails record's own `to_xml`: the record as the root, one element
 * a line, indented, a datetime typed as such.
 */
export interface XmlLayout {
  /** The element holding the body's keys. */
  root: string;
  /** Each element on a line of its own, indented this much per level, the document ending in a newline; none: one line. */
  indent?: string;
  /** A `type` attribute for text elements, by element name (Rails types a datetime). */
  textTypes?: Readonly<Record<string, string>>;
}

const V2_LAYOUT: XmlLayout = { root: XML_ROOT };

/**
 * Characters XML 1.0 cannot carry at all, not even as character references, are replaced by
 * U+FFFD in every answer (the JSON form keeps them). A carriage return is valid XML and written
 * as it is, so a reader takes it for a line end (XML 1.0 §2.11: \r\n and \r read as \n).
 */
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

/** Pushes `name` holding `value` onto `lines`, one entry per line of the indented layout, `depth` deep. */
function element(name: string, value: JsonValue, lines: string[], depth: number, layout: XmlLayout): void {
  const at = layout.indent === undefined ? '' : layout.indent.repeat(depth);
  if (value === null) {
    lines.push(`${at}<${name} nil="true"/>`);
  } else if (Array.isArray(value)) {
    lines.push(`${at}<${name} type="array">`);
    const itemName = singular(name);
    for (const item of value) element(itemName, item, lines, depth + 1, layout);
    lines.push(`${at}</${name}>`);
  } else if (typeof value === 'object') {
    lines.push(`${at}<${name}>`);
    for (const [key, child] of Object.entries(value)) element(key, child, lines, depth + 1, layout);
    lines.push(`${at}</${name}>`);
  } else if (typeof value === 'number') {
    // JavaScript writes integers from 1e21 up in exponent form, which is no XML integer.
    const text = Number.isInteger(value) ? BigInt(value).toString() : String(value);
    lines.push(`${at}<${name} type="${Number.isInteger(value) ? 'integer' : 'float'}">${text}</${name}>`);
  } else if (typeof value === 'boolean') {
    lines.push(`${at}<${name} type="boolean">${value}</${name}>`);
  } else {
    const type = layout.textTypes !== undefined && Object.hasOwn(layout.textTypes, name) ? ` type="${layout.textTypes[name]}"` : '';
    lines.push(`${at}<${name}${type}>${escapeXmlText(value)}</${name}>`);
  }
}

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** The body as XML: v2's layout unless another is given. */
export function toXml(body: { [key: string]: JsonValue }, layout: XmlLayout = V2_LAYOUT): string {
  const lines: string[] = [];
  element(layout.root, body, lines, 0, layout);
  return layout.indent === undefined ? DECLARATION + lines.join('') : `${DECLARATION}${lines.join('\n')}\n`;
}
