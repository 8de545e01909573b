/**
 * Text no query literal may carry: control characters. The v2 wire refuses them in text
 * parameters (params.ts), and the one literal function (src/upstream/query-literal.ts) refuses
 * them again before quoting; neither NRQL nor entity search documents an escape for them.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export function hasControlCharacters(value: string): boolean {
  return CONTROL_CHARACTERS.test(value);
}
