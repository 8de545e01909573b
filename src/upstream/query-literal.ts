/**
 * The only function in v2-bridge that turns a user string into an NRQL or entity-search
 * string literal. Every client string that reaches a query language goes through here.
 *
 * Both languages take single-quoted literals with backslash escapes; New Relic's own tools
 * first got this wrong (terraform-provider-newrelic #2223 for `'`, #1368 for `\`), so the
 * backslash is escaped before the quote. Control characters are refused rather than escaped:
 * neither language documents an escape for them, and no real name contains them.
 */
import { hasControlCharacters } from '../v2/control-characters.ts';

// The wire refuses such text before it gets this far (src/v2/params.ts); re-exported for the rest.
export { hasControlCharacters };

export class UnsafeLiteralError extends Error {}

export function quoteLiteral(value: string): string {
  if (hasControlCharacters(value)) {
    throw new UnsafeLiteralError('control characters are not allowed in a query literal');
  }
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A value an NRQL literal may hold: client text (quoted by quoteLiteral) or a safe integer. */
export type NrqlValue = string | number;

/** An NRQL literal: a safe integer as its digits, text through quoteLiteral. */
export function nrqlLiteral(value: NrqlValue): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer NRQL literal: ${value}`);
    return String(value);
  }
  return quoteLiteral(value);
}
