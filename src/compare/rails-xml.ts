import { XMLParser } from 'fast-xml-parser';
import type { JsonValue } from '../v2/xml.ts';

/**
 * Decodes Rails-style v2 XML back into the JSON value it represents (type="array",
 * type="integer|float|boolean", nil="true"), so XML answers can be compared like JSON ones.
 * Independent of the renderer: it reads the XML with fast-xml-parser's ordered tree. The gateway
 * runs it on legacy answers (compare modes), so a document type declaration, which v2 XML never
 * carries and which is where entity-expansion attacks live, is refused before parsing.
 */
type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  trimValues: false,
  processEntities: true,
});

function tagOf(node: Node): string {
  const tag = Object.keys(node).find((k) => k !== ':@');
  if (tag === undefined) throw new Error('node without a tag');
  return tag;
}

function textOf(children: Node[]): string {
  return children.map((c) => (typeof c['#text'] === 'string' ? c['#text'] : String(c['#text'] ?? ''))).join('');
}

function decode(node: Node, strict: boolean): JsonValue {
  const tag = tagOf(node);
  const attrs = node[':@'] ?? {};
  const children = node[tag] as Node[];
  if (attrs.nil === 'true') return null;
  const elements = children.filter((c) => !('#text' in c));
  switch (attrs.type) {
    case 'array':
      return elements.map((c) => decode(c, strict));
    case 'integer': {
      const text = textOf(children);
      if (!/^-?\d+$/.test(text)) throw new Error(`type="integer" holds ${text}`);
      return Number(text);
    }
    case 'float': {
      const text = textOf(children).trim();
      const value = Number(text);
      // Ruby writes 0.0 and 1.0 as floats; the gateway's own renderer writes whole numbers as
      // integers, which the differential tests hold it to (strict).
      if (text === '' || !Number.isFinite(value) || (strict && Number.isInteger(value))) throw new Error(`type="float" holds ${textOf(children)}`);
      return value;
    }
    case 'boolean': {
      const text = textOf(children);
      if (text !== 'true' && text !== 'false') throw new Error(`type="boolean" holds ${text}`);
      return text === 'true';
    }
    default:
      if (elements.length === 0) return textOf(children);
      return Object.fromEntries(elements.map((c) => [tagOf(c), decode(c, strict)]));
  }
}

/**
 * `strict`: a whole number typed float is refused (the gateway never writes one); answers from
 * the legacy API are read leniently, as Rails writes them (`<x type="float">0.0</x>`).
 */
export function decodeRailsXml(xml: string, options: { strict?: boolean } = {}): { root: string; value: JsonValue } {
  if (/<!DOCTYPE/i.test(xml)) throw new Error('a document type declaration is not v2 XML');
  const nodes = (parser.parse(xml) as Node[]).filter((n) => tagOf(n) !== '?xml');
  const [root] = nodes;
  if (!root || nodes.length !== 1) throw new Error('expected exactly one root element');
  return { root: tagOf(root), value: decode(root, options.strict ?? false) };
}
