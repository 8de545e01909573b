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

function decode(node: Node): JsonValue {
  const tag = tagOf(node);
  const attrs = node[':@'] ?? {};
  const children = node[tag] as Node[];
  if (attrs.nil === 'true') return null;
  const elements = children.filter((c) => !('#text' in c));
  switch (attrs.type) {
    case 'array':
      return elements.map(decode);
    case 'integer': {
      const text = textOf(children);
      if (!/^-?\d+$/.test(text)) throw new Error(`type="integer" holds ${text}`);
      return Number(text);
    }
    case 'float': {
      const value = Number(textOf(children));
      if (Number.isNaN(value) || Number.isInteger(value)) throw new Error(`type="float" holds ${textOf(children)}`);
      return value;
    }
    case 'boolean': {
      const text = textOf(children);
      if (text !== 'true' && text !== 'false') throw new Error(`type="boolean" holds ${text}`);
      return text === 'true';
    }
    default:
      if (elements.length === 0) return textOf(children);
      return Object.fromEntries(elements.map((c) => [tagOf(c), decode(c)]));
  }
}

export function decodeRailsXml(xml: string): { root: string; value: JsonValue } {
  if (/<!DOCTYPE/i.test(xml)) throw new Error('a document type declaration is not v2 XML');
  const nodes = (parser.parse(xml) as Node[]).filter((n) => tagOf(n) !== '?xml');
  const [root] = nodes;
  if (!root || nodes.length !== 1) throw new Error('expected exactly one root element');
  return { root: tagOf(root), value: decode(root) };
}
