/**
 * The subset of NRQL the sandbox's NerdGraph face understands (issue 20: "a general NRQL
 * subset as NerdGraph answers it"); anything else is a syntax error, as NerdGraph reports it.
 * Sources: NRQL syntax, clauses and functions (docs.newrelic.com/docs/nrql/nrql-syntax-clauses-functions),
 * "Set a query's time range" (docs.newrelic.com/docs/nrql/using-nrql/query-time-range).
 *
 *   query     := (SELECT items FROM names | FROM names SELECT items) clause*   (each clause at most once)
 *   names     := name ("," name)*
 *   items     := item ("," item)* | column ("," column)* | "*"
 *   clause    := WHERE cond | FACET attr | SINCE time | UNTIL time
 *              | TIMESERIES int unit | LIMIT (int | MAX)
 *   time      := int (epoch ms) | int tunit AGO | NOW
 *   tunit     := millisecond | second | minute | hour | day | week | month (30 days)
 *              | quarter (91 days) | year (365 days), each optionally plural
 *   item      := (expr | uniques) [AS alias]
 *   column    := attr [AS alias]                 (an attribute not followed by "(")
 *   alias     := identifier | `name` | 'string'
 *   expr      := term (("+" | "-") term)*
 *   term      := unary (("*" | "/") unary)*
 *   unary     := "-" unary | number | "(" expr ")" | aggregate | rate | filter
 *   aggregate := (count|sum|average|min|max|stddev|latest) "(" value ")"     timeslice semantics
 *              | (count|sum|average|min|max|stddev|latest) "(" attr ")"      plain attribute values
 *              | count "(" "*" ")" | percentile "(" attr ("," number)+ ")"
 *   value     := newrelic.timeslice.value ["[" 'field' "]"]
 *   rate      := rate "(" (aggregate | filter) "," int unit ")"
 *   filter    := filter "(" expr "," WHERE cond ")"
 *   uniques   := uniques "(" attr ["," int] ")"
 *   cond      := and (OR and)*;  and := not (AND not)*;  not := NOT not | "(" cond ")" | test
 *   test      := attr ("=" | "!=") literal | attr [NOT] IN "(" literal ("," literal)* ")"
 *              | attr IS [NOT] NULL | attr [NOT] LIKE 'string'
 *   literal   := ["-"] number | 'string'
 *
 * A select list is either aggregates (item) or raw event attributes (column, or "*"), never
 * both. Raw attributes are refused over Metric (the sandbox keeps no raw timeslice rows, so
 * `SELECT appName FROM Metric` fails at `appName`) and with FACET or TIMESERIES (which need
 * aggregates): both are reported as syntax errors at the offending token.
 *
 * Keywords and function names are case-insensitive; attribute names are not. Inside a
 * string a backslash makes the next character literal (`\'` is a quote, `\\` a backslash),
 * which makes this parser the exact inverse of quoteLiteral (src/upstream/query-literal.ts).
 * SINCE and UNTIL take epoch milliseconds, `n units AGO` or NOW ("Set a query's time range":
 * months are 30 days, quarters 91, years 365); DateTime strings and `today`/`this hour` are
 * outside the subset. percentile() takes no timeslice value (a timeslice keeps no distribution).
 *
 * LIKE patterns use `%` for any run of characters; every other character matches itself.
 * Case: the docs corpus searched for this work did not say whether NRQL LIKE is
 * case-sensitive; the engine compares case-sensitively, as it does for `=` (UNCONFIRMED).
 */

export type AggregateFunction = 'count' | 'sum' | 'average' | 'min' | 'max' | 'stddev' | 'latest';
/** Functions over a plain attribute (not the timeslice value); count with attribute null is count(*). */
export type AttributeFunction = AggregateFunction | 'percentile';
export type TimesliceField = 'count' | 'total' | 'totalExclusive' | 'min' | 'max' | 'sumOfSquares';
export type DurationUnit = 'second' | 'minute' | 'hour' | 'day' | 'week';

export interface NrqlDuration {
  amount: number;
  unit: DurationUnit;
  milliseconds: number;
}

export type NrqlLiteral = string | number;

/**
 * SINCE/UNTIL: epoch ms (a number); relative to the query's clock (`n units AGO`, NOW:
 * `agoMs`); a quoted DateTime string (`atMs`, absolute); or a day reference (`today`,
 * `yesterday`: midnight UTC `daysAgo` days before the clock's day).
 */
export type NrqlTime =
  | number
  | { agoMs: number; text: string }
  | { atMs: number; text: string }
  | { daysAgo: number; text: string };

/**
 * TIMESERIES: a fixed bucket (`n unit`), or AUTO / MAX, whose bucket the engine picks from the
 * window ("NRQL syntax, clauses and functions", TIMESERIES). A bare `TIMESERIES` is AUTO.
 */
export type NrqlTimeseries = NrqlDuration | 'AUTO' | 'MAX';

export type NrqlCondition =
  | { type: 'compare'; attribute: string; operator: '=' | '!='; value: NrqlLiteral }
  | { type: 'in'; attribute: string; negated: boolean; values: NrqlLiteral[] }
  | { type: 'isNull'; attribute: string; negated: boolean }
  | { type: 'like'; attribute: string; negated: boolean; pattern: string }
  | { type: 'and'; left: NrqlCondition; right: NrqlCondition }
  | { type: 'or'; left: NrqlCondition; right: NrqlCondition }
  | { type: 'not'; operand: NrqlCondition };

export type NrqlExpression =
  | { type: 'number'; value: number }
  | { type: 'negate'; operand: NrqlExpression }
  | { type: 'arithmetic'; operator: '+' | '-' | '*' | '/'; left: NrqlExpression; right: NrqlExpression }
  /** field null: the timeslice value as a whole (count = Σcount, average = Σtotal/Σcount, …). */
  | { type: 'aggregate'; function: AggregateFunction; field: TimesliceField | null }
  /** An aggregate of a plain attribute's values (null: `count(*)`); `percentiles` only for percentile(). */
  | { type: 'attributeAggregate'; function: AttributeFunction; attribute: string | null; percentiles: number[] }
  | { type: 'rate'; of: NrqlExpression; per: NrqlDuration }
  | { type: 'filter'; of: NrqlExpression; where: NrqlCondition }
  | { type: 'uniques'; attribute: string; limit: number }
  /** A raw attribute column (only ever a whole select item): one value per event. */
  | { type: 'attribute'; attribute: string }
  /** `SELECT *` (only ever the whole select list): every attribute of each event. */
  | { type: 'wildcard' };

export interface NrqlSelectItem {
  expression: NrqlExpression;
  alias: string | null;
}

export interface NrqlQuery {
  select: NrqlSelectItem[];
  /** The event types after FROM, as written (at least one). */
  from: string[];
  where: NrqlCondition | null;
  /** The FACET attributes in order (`FACET appName, host`); empty without FACET. */
  facets: string[];
  /** Epoch ms or relative time, or null for the default. */
  since: NrqlTime | null;
  until: NrqlTime | null;
  timeseries: NrqlTimeseries | null;
  /** Facet limit (aggregates) or event limit (raw columns), or null for the default. */
  limit: number | null;
}

/** True when the select list reads raw event attributes (columns or `*`) rather than aggregates. */
export function isRawSelect(query: NrqlQuery): boolean {
  return query.select.some((item) => isRawExpression(item.expression));
}

function isRawExpression(expression: NrqlExpression): boolean {
  return expression.type === 'attribute' || expression.type === 'wildcard';
}

/** The one attribute aggregates read; its fields are the six a timeslice carries. */
export const TIMESLICE_VALUE = 'newrelic.timeslice.value';
export const TIMESLICE_FIELDS: readonly TimesliceField[] = ['count', 'total', 'totalExclusive', 'min', 'max', 'sumOfSquares'];
export const MAX_LIMIT = 5000;
export const DEFAULT_UNIQUES_LIMIT = 1000;
export const MAX_UNIQUES_LIMIT = 10_000;
/**
 * Bounds the depth of the AST (nesting, and the length of left-associative chains such as
 * `a + b + …` or `x AND y AND …`), so hostile text cannot overflow the stack here or in the
 * engine's recursive walks.
 */
const MAX_DEPTH = 256;

const AGGREGATES = new Set<string>(['count', 'sum', 'average', 'min', 'max', 'stddev', 'latest', 'percentile']);
const UNIT_MS: Record<DurationUnit, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
/** Units of `n units AGO` ("Set a query's time range"). */
const AGO_UNIT_MS: Record<string, number> = {
  millisecond: 1,
  ...UNIT_MS,
  month: 30 * 86_400_000,
  quarter: 91 * 86_400_000,
  year: 365 * 86_400_000,
};
/** Words that cannot be bare attribute names or aliases (backquote them instead). */
const RESERVED = new Set(['SELECT', 'FROM', 'WHERE', 'FACET', 'SINCE', 'UNTIL', 'TIMESERIES', 'LIMIT', 'AS', 'AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'LIKE']);
/** `today` / `yesterday` ("Set a query's time range", relative temporal time): days before the clock's midnight. */
const DAY_REFERENCES: Readonly<Record<string, number>> = { TODAY: 0, YESTERDAY: 1 };
/**
 * The DateTime strings the sandbox reads ("Set a query's time range", Use a DateTime string):
 * `Year-Month[-Day]`, then optionally `T` or a space and `Hour:Minute[:Second[.Fraction]]`,
 * then optionally a zone `Z` or `(+|-)HH[:]MM` (optionally after a space); without a zone, UTC.
 * Not read (a syntax error here): dates without dashes, times without a date, AM/PM, zone IDs.
 */
const DATE_TIME = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)? ?(Z|[+-]\d{2}:?\d{2})?$/;

/** Epoch ms of a DateTime string, or null when the sandbox does not read it (or it names no real time). */
export function parseDateTime(text: string): number | null {
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const [, year, month, day = '01', hour = '0', minute = '00', second = '00', fraction = '0', zone = 'Z'] = match;
  const fields = [Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second)] as const;
  const [y, mo, d, h, mi, se] = fields;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59) return null;
  const local = Date.UTC(y, mo - 1, d, h, mi, se, Number(fraction.padEnd(3, '0')));
  // Date.UTC rolls 31 February over into March: such a day does not exist.
  if (new Date(local).getUTCDate() !== d) return null;
  if (zone === 'Z') return local;
  const digits = zone.replace(':', '');
  const offsetMinutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
  if (Number(digits.slice(3, 5)) > 59) return null;
  return local - (zone.startsWith('-') ? -1 : 1) * offsetMinutes * 60_000;
}
const CLAUSES = ['WHERE', 'FACET', 'SINCE', 'UNTIL', 'TIMESERIES', 'LIMIT'] as const;
type Clause = (typeof CLAUSES)[number];

export class NrqlSyntaxError extends Error {
  constructor(
    text: string,
    /** 0-based offset (UTF-16 code units) of the offending token. */
    readonly position: number,
    /** The token as written, or null for the end of input. */
    readonly found: string | null,
  ) {
    const { line, column } = lineAndColumn(text, position);
    super(`NRQL Syntax Error: Error at line ${line} position ${column}, unexpected ${found === null ? 'end of input' : `'${found}'`}`);
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

type TokenKind = 'word' | 'backquoted' | 'string' | 'number' | 'symbol' | 'end' | 'invalid';

interface Token {
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
function tokenize(text: string): Token[] {
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

// ---------------------------------------------------------------- parser

export function parseNrql(text: string): NrqlQuery {
  return new Parser(text).query();
}

class Parser {
  private readonly tokens: Token[];
  private index = 0;
  private depth = 0;

  constructor(private readonly text: string) {
    this.tokens = tokenize(text);
  }

  query(): NrqlQuery {
    // `FROM names SELECT items` is the same query as `SELECT items FROM names`.
    const fromFirst = this.acceptKeyword('FROM') !== null ? this.names() : null;
    this.keyword('SELECT');
    const items = [this.selectItem()];
    while (this.acceptSymbol(',')) items.push(this.selectItem());
    const raw = isRawExpression((items[0] as { item: NrqlSelectItem }).item.expression);
    items.forEach(({ item, token }, position) => {
      // Aggregates and raw columns do not mix, and `*` stands alone.
      if (isRawExpression(item.expression) !== raw) throw this.unexpected(token);
      if (item.expression.type === 'wildcard' && position > 0) throw this.unexpected(token);
      if (position === 1 && items[0]?.item.expression.type === 'wildcard') throw this.unexpected(token);
    });
    let from = fromFirst;
    if (from === null) {
      this.keyword('FROM');
      from = this.names();
    }
    if (raw && from.includes('Metric')) throw this.unexpected((items[0] as { token: Token }).token);
    const select = items.map(({ item }) => item);
    const query: NrqlQuery = { select, from, where: null, facets: [], since: null, until: null, timeseries: null, limit: null };
    const seen = new Set<Clause>();
    while (this.peek().kind !== 'end') {
      const token = this.peek();
      const clause = CLAUSES.find((candidate) => this.isKeyword(token, candidate));
      if (!clause || seen.has(clause)) throw this.unexpected(token);
      if (raw && (clause === 'FACET' || clause === 'TIMESERIES')) throw this.unexpected(token);
      seen.add(clause);
      this.index++;
      this.clause(clause, query);
    }
    return query;
  }

  private clause(clause: Clause, query: NrqlQuery): void {
    switch (clause) {
      case 'WHERE':
        query.where = this.condition();
        return;
      case 'FACET':
        query.facets = this.names();
        return;
      case 'SINCE':
        query.since = this.time();
        return;
      case 'UNTIL':
        query.until = this.time();
        return;
      case 'TIMESERIES':
        query.timeseries = this.timeseries();
        return;
      case 'LIMIT':
        query.limit = this.acceptKeyword('MAX') ? MAX_LIMIT : this.integer(1, MAX_LIMIT);
        return;
    }
  }

  /** One select item, with its first token (where a misplaced item is reported). */
  private selectItem(): { item: NrqlSelectItem; token: Token } {
    const token = this.peek();
    if (this.acceptSymbol('*')) return { item: { expression: { type: 'wildcard' }, alias: null }, token };
    const expression: NrqlExpression =
      this.isColumn(token) ? { type: 'attribute', attribute: this.attribute() }
      : this.isFunction(token, 'uniques') ? this.uniques()
      : this.expression();
    const alias = this.acceptKeyword('AS') ? this.alias() : null;
    return { item: { expression, alias }, token };
  }

  /** An attribute name that is not a function call: a raw column. */
  private isColumn(token: Token): boolean {
    if (token.kind === 'backquoted') return true;
    if (token.kind !== 'word' || RESERVED.has(token.value.toUpperCase())) return false;
    const following = this.tokens[this.index + 1];
    return !(following?.kind === 'symbol' && following.value === '(');
  }

  private alias(): string {
    const token = this.peek();
    if (token.kind === 'string' || token.kind === 'backquoted') {
      this.index++;
      return token.value;
    }
    if (token.kind === 'word' && !token.value.includes('.') && !RESERVED.has(token.value.toUpperCase())) {
      this.index++;
      return token.value;
    }
    throw this.unexpected(token);
  }

  // ------------------------------------------------ expressions

  private expression(): NrqlExpression {
    return this.chain(
      () => this.term(),
      () => this.acceptSymbol('+') ?? this.acceptSymbol('-'),
      (operator, left, right) => ({ type: 'arithmetic', operator, left, right }),
    );
  }

  private term(): NrqlExpression {
    return this.chain(
      () => this.unary(),
      () => this.acceptSymbol('*') ?? this.acceptSymbol('/'),
      (operator, left, right) => ({ type: 'arithmetic', operator, left, right }),
    );
  }

  private unary(): NrqlExpression {
    return this.nested(() => {
      if (this.acceptSymbol('-')) return { type: 'negate', operand: this.unary() };
      const token = this.peek();
      if (token.kind === 'number') {
        this.index++;
        return { type: 'number', value: Number(token.value) };
      }
      if (this.acceptSymbol('(')) {
        const inner = this.expression();
        this.symbol(')');
        return inner;
      }
      if (this.isFunction(token, 'rate')) return this.rate();
      if (this.isFunction(token, 'filter')) return this.filter();
      if (token.kind === 'word' && AGGREGATES.has(token.value.toLowerCase())) return this.aggregate();
      throw this.unexpected(token);
    });
  }

  private aggregate(): NrqlExpression {
    const nameToken = this.next();
    const name = nameToken.value.toLowerCase() as AttributeFunction;
    this.symbol('(');
    if (name === 'count' && this.acceptSymbol('*')) {
      this.symbol(')');
      return { type: 'attributeAggregate', function: 'count', attribute: null, percentiles: [] };
    }
    const attribute = this.attribute();
    if (attribute !== TIMESLICE_VALUE) {
      const percentiles: number[] = [];
      if (name === 'percentile') {
        this.symbol(',');
        do percentiles.push(this.percentileArgument());
        while (this.acceptSymbol(','));
      }
      this.symbol(')');
      return { type: 'attributeAggregate', function: name, attribute, percentiles };
    }
    // A timeslice keeps sums, not a distribution: no percentile of it.
    if (name === 'percentile') throw this.unexpected(nameToken);
    let field: TimesliceField | null = null;
    if (this.acceptSymbol('[')) {
      const token = this.peek();
      if (token.kind !== 'string' || !(TIMESLICE_FIELDS as readonly string[]).includes(token.value)) throw this.unexpected(token);
      this.index++;
      field = token.value as TimesliceField;
      this.symbol(']');
    }
    this.symbol(')');
    return { type: 'aggregate', function: name, field };
  }

  private percentileArgument(): number {
    const token = this.peek();
    const value = Number(token.value);
    if (token.kind !== 'number' || value > 100) throw this.unexpected(token);
    this.index++;
    return value;
  }

  /** TIMESERIES: `n unit`, AUTO, MAX, or nothing (AUTO). */
  private timeseries(): NrqlTimeseries {
    if (this.acceptKeyword('AUTO')) return 'AUTO';
    if (this.acceptKeyword('MAX')) return 'MAX';
    const token = this.peek();
    const bare = token.kind === 'end' || CLAUSES.some((clause) => this.isKeyword(token, clause));
    return bare ? 'AUTO' : this.duration();
  }

  /** SINCE/UNTIL: epoch ms, `n units AGO`, NOW, a quoted DateTime string, `today` or `yesterday`. */
  private time(): NrqlTime {
    if (this.acceptKeyword('NOW')) return { agoMs: 0, text: 'NOW' };
    const token = this.peek();
    if (token.kind === 'string') {
      const atMs = parseDateTime(token.value);
      if (atMs === null) throw this.unexpected(token);
      this.index++;
      return { atMs, text: token.value };
    }
    const day = token.kind === 'word' && Object.hasOwn(DAY_REFERENCES, token.value.toUpperCase()) ? DAY_REFERENCES[token.value.toUpperCase()] : undefined;
    if (day !== undefined) {
      this.index++;
      return { daysAgo: day, text: token.value.toUpperCase() };
    }
    const amount = this.integer(0, Number.MAX_SAFE_INTEGER);
    const unitToken = this.peek();
    const unit = unitToken.kind === 'word' ? unitToken.value.toLowerCase().replace(/s$/, '') : '';
    // Anything else after the number (the next clause, or a stray word) is not this clause's.
    if (!Object.hasOwn(AGO_UNIT_MS, unit)) return amount;
    this.index++;
    this.keyword('AGO');
    const agoMs = amount * (AGO_UNIT_MS[unit] as number);
    if (!Number.isSafeInteger(agoMs)) throw this.unexpected(token);
    return { agoMs, text: `${amount} ${unit.toUpperCase()}${amount === 1 ? '' : 'S'} AGO` };
  }

  private rate(): NrqlExpression {
    this.next();
    this.symbol('(');
    const token = this.peek();
    const isAggregate = token.kind === 'word' && AGGREGATES.has(token.value.toLowerCase());
    if (!isAggregate && !this.isFunction(token, 'filter')) throw this.unexpected(token);
    const of = isAggregate ? this.aggregate() : this.filter();
    this.symbol(',');
    const per = this.duration();
    this.symbol(')');
    return { type: 'rate', of, per };
  }

  private filter(): NrqlExpression {
    this.next();
    this.symbol('(');
    const of = this.expression();
    this.symbol(',');
    this.keyword('WHERE');
    const where = this.condition();
    this.symbol(')');
    return { type: 'filter', of, where };
  }

  private uniques(): NrqlExpression {
    this.next();
    this.symbol('(');
    const attribute = this.attribute();
    const limit = this.acceptSymbol(',') ? this.integer(1, MAX_UNIQUES_LIMIT) : DEFAULT_UNIQUES_LIMIT;
    this.symbol(')');
    return { type: 'uniques', attribute, limit };
  }

  private duration(): NrqlDuration {
    const amount = this.integer(1, Number.MAX_SAFE_INTEGER);
    const token = this.peek();
    const unit = token.kind === 'word' ? token.value.toLowerCase().replace(/s$/, '') : '';
    if (!Object.hasOwn(UNIT_MS, unit)) throw this.unexpected(token);
    this.index++;
    const milliseconds = amount * UNIT_MS[unit as DurationUnit];
    if (!Number.isSafeInteger(milliseconds)) throw this.unexpected(token);
    return { amount, unit: unit as DurationUnit, milliseconds };
  }

  // ------------------------------------------------ conditions

  private condition(): NrqlCondition {
    return this.chain(
      () => this.conjunction(),
      () => this.acceptKeyword('OR'),
      (_, left, right) => ({ type: 'or', left, right }),
    );
  }

  private conjunction(): NrqlCondition {
    return this.chain(
      () => this.negation(),
      () => this.acceptKeyword('AND'),
      (_, left, right) => ({ type: 'and', left, right }),
    );
  }

  private negation(): NrqlCondition {
    return this.nested(() => {
      if (this.acceptKeyword('NOT')) return { type: 'not', operand: this.negation() };
      if (this.acceptSymbol('(')) {
        const inner = this.condition();
        this.symbol(')');
        return inner;
      }
      return this.test();
    });
  }

  private test(): NrqlCondition {
    const attribute = this.attribute();
    const operator = this.acceptSymbol('=') ?? this.acceptSymbol('!=');
    if (operator) return { type: 'compare', attribute, operator, value: this.literal() };
    if (this.acceptKeyword('IS')) {
      const negated = this.acceptKeyword('NOT') !== null;
      this.keyword('NULL');
      return { type: 'isNull', attribute, negated };
    }
    const negated = this.acceptKeyword('NOT') !== null;
    if (this.acceptKeyword('LIKE')) {
      const token = this.peek();
      if (token.kind !== 'string') throw this.unexpected(token);
      this.index++;
      return { type: 'like', attribute, negated, pattern: token.value };
    }
    this.keyword('IN');
    this.symbol('(');
    const values = [this.literal()];
    while (this.acceptSymbol(',')) values.push(this.literal());
    this.symbol(')');
    return { type: 'in', attribute, negated, values };
  }

  private literal(): NrqlLiteral {
    const token = this.peek();
    if (token.kind === 'string') {
      this.index++;
      return token.value;
    }
    const negative = this.acceptSymbol('-') !== null;
    const number = this.peek();
    if (number.kind !== 'number') throw this.unexpected(number);
    this.index++;
    return negative ? -Number(number.value) : Number(number.value);
  }

  // ------------------------------------------------ names and terminals

  /** An attribute: a dotted identifier that is not a keyword, or a backquoted name. */
  private attribute(): string {
    const token = this.peek();
    if (token.kind === 'backquoted' || (token.kind === 'word' && !RESERVED.has(token.value.toUpperCase()))) {
      this.index++;
      return token.value;
    }
    throw this.unexpected(token);
  }

  /** The event types after FROM. */
  private names(): string[] {
    const names = [this.attribute()];
    while (this.acceptSymbol(',')) names.push(this.attribute());
    return names;
  }

  private integer(min: number, max: number): number {
    const token = this.peek();
    const value = Number(token.value);
    if (token.kind !== 'number' || !/^[0-9]+$/.test(token.value) || value < min || value > max) throw this.unexpected(token);
    this.index++;
    return value;
  }

  /** `operand (operator operand)*`, left-associative: each operator adds a level to the tree. */
  private chain<T, O>(operand: () => T, operator: () => O | null, combine: (operator: O, left: T, right: T) => T): T {
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

  private nested<T>(parse: () => T): T {
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

  private peek(): Token {
    const token = this.tokens[this.index] as Token;
    // A lexical problem is reported as soon as the grammar reaches it.
    if (token.kind === 'invalid') throw new NrqlSyntaxError(this.text, token.position, token.raw);
    return token;
  }

  private next(): Token {
    const token = this.peek();
    this.index++;
    return token;
  }

  private isKeyword(token: Token, keyword: string): boolean {
    return token.kind === 'word' && token.value.toUpperCase() === keyword;
  }

  private isFunction(token: Token, name: string): boolean {
    return token.kind === 'word' && token.value.toLowerCase() === name;
  }

  private keyword(keyword: string): void {
    const token = this.peek();
    if (!this.isKeyword(token, keyword)) throw this.unexpected(token);
    this.index++;
  }

  private acceptKeyword(keyword: string): string | null {
    if (!this.isKeyword(this.peek(), keyword)) return null;
    this.index++;
    return keyword;
  }

  private symbol(symbol: string): void {
    if (this.acceptSymbol(symbol) === null) throw this.unexpected(this.peek());
  }

  private acceptSymbol<S extends string>(symbol: S): S | null {
    const token = this.peek();
    if (token.kind !== 'symbol' || token.value !== symbol) return null;
    this.index++;
    return symbol;
  }

  private unexpected(token: Token): NrqlSyntaxError {
    return new NrqlSyntaxError(this.text, token.position, token.raw);
  }
}
