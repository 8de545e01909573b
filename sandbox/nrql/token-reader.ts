/**
 * The parser's terminals (parser.ts): a cursor over the tokens with keyword, symbol, attribute
 * and integer readers, the depth bound on the AST, and the syntax error at the current token.
 * Keywords and function names are case-insensitive; attribute names are not.
 */
import { NrqlSyntaxError, tokenize, type Token } from './tokens.ts';

/**
 * Bounds the depth of the AST (nesting, and the length of left-associative chains such as
 * `a + b + …` or `x AND y AND …`), so hostile text cannot overflow the stack here or in the
 * engine's recursive walks.
 */
const MAX_DEPTH = 256;
/** Words that cannot be bare attribute names or aliases (backquote them instead). */
export const RESERVED = new Set(['SELECT', 'FROM', 'WHERE', 'FACET', 'SINCE', 'UNTIL', 'TIMESERIES', 'LIMIT', 'AS', 'AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'LIKE']);
/** Reads tokens; the grammar (clause-parser.ts, parser.ts) extends it. */
export class TokenReader {
  protected readonly tokens: Token[];
  protected index = 0;
  private depth = 0;

  protected readonly text: string;

  constructor(text: string) {
    this.text = text;
    this.tokens = tokenize(text);
  }


  /** An attribute: a dotted identifier that is not a keyword, or a backquoted name. */
  protected attribute(): string {
    const token = this.peek();
    if (token.kind === 'backquoted' || (token.kind === 'word' && !RESERVED.has(token.value.toUpperCase()))) {
      this.index++;
      return token.value;
    }
    throw this.unexpected(token);
  }

  /** The event types after FROM. */
  protected names(): string[] {
    const names = [this.attribute()];
    while (this.acceptSymbol(',')) names.push(this.attribute());
    return names;
  }

  protected integer(min: number, max: number): number {
    const token = this.peek();
    const value = Number(token.value);
    if (token.kind !== 'number' || !/^[0-9]+$/.test(token.value) || value < min || value > max) throw this.unexpected(token);
    this.index++;
    return value;
  }

  /** `operand (operator operand)*`, left-associative: each operator adds a level to the tree. */
  protected chain<T, O>(operand: () => T, operator: () => O | null, combine: (operator: O, left: T, right: T) => T): T {
    const depth = this.depth;
    try {
      let left = operand();
      for (let found = operator(); found !== null; found = operator()) {
        this.deepen();
        left = combine(found, left, operand());
      }
      return left;
    } finally {
      this.depth = depth;
    }
  }

  protected nested<T>(parse: () => T): T {
    const depth = this.depth;
    this.deepen();
    try {
      return parse();
    } finally {
      this.depth = depth;
    }
  }

  private deepen(): void {
    if (++this.depth > MAX_DEPTH) throw this.unexpected(this.peek());
  }

  protected peek(): Token {
    const token = this.tokens[this.index] as Token;
    // A lexical problem is reported as soon as the grammar reaches it.
    if (token.kind === 'invalid') throw new NrqlSyntaxError(this.text, token.position, token.raw);
    return token;
  }

  protected next(): Token {
    const token = this.peek();
    this.index++;
    return token;
  }

  protected isKeyword(token: Token, keyword: string): boolean {
    return token.kind === 'word' && token.value.toUpperCase() === keyword;
  }

  protected isFunction(token: Token, name: string): boolean {
    return token.kind === 'word' && token.value.toLowerCase() === name;
  }

  protected keyword(keyword: string): void {
    const token = this.peek();
    if (!this.isKeyword(token, keyword)) throw this.unexpected(token);
    this.index++;
  }

  protected acceptKeyword(keyword: string): string | null {
    if (!this.isKeyword(this.peek(), keyword)) return null;
    this.index++;
    return keyword;
  }

  protected symbol(symbol: string): void {
    if (this.acceptSymbol(symbol) === null) throw this.unexpected(this.peek());
  }

  protected acceptSymbol<S extends string>(symbol: S): S | null {
    const token = this.peek();
    if (token.kind !== 'symbol' || token.value !== symbol) return null;
    this.index++;
    return symbol;
  }

  protected unexpected(token: Token): NrqlSyntaxError {
    return new NrqlSyntaxError(this.text, token.position, token.raw);
  }
}
