/**
 * NRQL text as tokens (parser.ts), and NRQL's syntax error as NerdGraph shows it (`NRQL Syntax
 * Error: Error at line L position P, unexpected 'x'`). Inside a string a backslash makes the
 * next character literal (`\'` is a quote, `\\` a backslash): the inverse of the gateway's quoting.
 */
export class NrqlSyntaxError extends Error {
  /** 0-based offset (UTF-16 code units) of the offending token. */
  readonly position: number;
  /** The token as written, or null for the end of input. */
  readonly found: string | null;

  constructor(
    text: string,
    position: number,
    found: string | null,
  ) {
    const { line, column } = lineAndColumn(text, position);
    super(`NRQL Syntax Error: Error at line ${line} position ${column}, unexpected ${found === null ? 'end of input' : `'${found}'`}`);
    this.position = position;
    this.found = found;
    this.name = 'NrqlSyntaxError';
  }
}

/** NRQL counts lines from 1 and positions within the line from 0. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - lastBreak - 1 };
}
// ---------------------------------------------------------------- tokens

export type TokenKind = 'word' | 'backquoted' | 'string' | 'number' | 'symbol' | 'end' | 'invalid';

export interface Token {
  kind: TokenKind;
  /** Source text (word, number, symbol, invalid character) or decoded content (strings, backquoted names). */
  value: string;
  /** The token as written, for error messages; null for the end of input. */
  raw: string | null;
  position: number;
}

const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const NUMBER = /[0-9]+(?:\.[0-9]+)?/y;
const SPACE = /\s/;
const SYMBOLS = ['!=', '(', ')', ',', '[', ']', '+', '-', '*', '/', '='];

/**
 * Splits the text into tokens. A lexical problem (unterminated string, stray character)
 * becomes an `invalid` token that ends the list, so the parser reports it only when it gets
 * there and an earlier grammar error still wins.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, value: string, end: number): void => {
    tokens.push({ kind, value, raw: text.slice(i, end), position: i });
    i = end;
  };
  while (i < text.length) {
    const char = text[i] as string;
    if (SPACE.test(char)) {
      i++;
      continue;
    }
    WORD.lastIndex = i;
    NUMBER.lastIndex = i;
    const word = WORD.exec(text);
    const number = word ? null : NUMBER.exec(text);
    const symbol = SYMBOLS.find((candidate) => text.startsWith(candidate, i));
    if (word) push('word', word[0], i + word[0].length);
    else if (number) push('number', number[0], i + number[0].length);
    else if (char === "'") {
      const string = readString(text, i);
      if (string === null) return [...tokens, { kind: 'invalid', value: '', raw: null, position: text.length }];
      push('string', string.value, string.end);
    } else if (char === '`') {
      const close = text.indexOf('`', i + 1);
      if (close === -1) return [...tokens, { kind: 'invalid', value: '', raw: null, position: text.length }];
      // An empty name is no name: report the pair of backquotes.
      if (close === i + 1) return [...tokens, { kind: 'invalid', value: '', raw: '``', position: i }];
      push('backquoted', text.slice(i + 1, close), close + 1);
    } else if (symbol) push('symbol', symbol, i + symbol.length);
    else {
      const invalid = String.fromCodePoint(text.codePointAt(i) as number);
      return [...tokens, { kind: 'invalid', value: invalid, raw: invalid, position: i }];
    }
  }
  tokens.push({ kind: 'end', value: '', raw: null, position: text.length });
  return tokens;
}

/** Reads a single-quoted string starting at `start`; null when it never ends. */
function readString(text: string, start: number): { value: string; end: number } | null {
  const parts: string[] = [];
  let i = start + 1;
  let chunk = i;
  while (i < text.length) {
    const char = text[i];
    if (char === "'") {
      parts.push(text.slice(chunk, i));
      return { value: parts.join(''), end: i + 1 };
    }
    if (char === '\\') {
      if (i + 1 >= text.length) return null;
      // The backslash goes, the next character stays whatever it is.
      parts.push(text.slice(chunk, i), text[i + 1] as string);
      i += 2;
      chunk = i;
    } else {
      i++;
    }
  }
  return null;
}
