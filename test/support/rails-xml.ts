import { decodeRailsXml as decode } from '../../src/compare/rails-xml.ts';
import type { JsonValue } from '../../src/v2/xml.ts';

// The decoder moved to src/compare/rails-xml.ts (the gateway's diff engine needs it at run time).
// Tests read the gateway's own XML strictly: it never types a whole number as a float.
export function decodeRailsXml(xml: string): { root: string; value: JsonValue } {
  return decode(xml, { strict: true });
}
