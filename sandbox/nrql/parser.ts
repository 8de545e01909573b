/**
 * The subset of NRQL the sandbox's NerdGraph face understands ("a general NRQL
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
import { CLAUSES, ClauseParser, type Clause } from './clause-parser.ts';
import {
  DEFAULT_UNIQUES_LIMIT,
  MAX_LIMIT,
  MAX_UNIQUES_LIMIT,
  TIMESLICE_FIELDS,
  TIMESLICE_VALUE,
  isRawExpression,
  type AttributeFunction,
  type NrqlExpression,
  type NrqlQuery,
  type NrqlSelectItem,
  type TimesliceField,
} from './query.ts';
import { RESERVED } from './token-reader.ts';
import type { Token } from './tokens.ts';

// The parser's public names, for the engine, the NerdGraph face and the tests.
export * from './query.ts';
export { parseDateTime } from './clause-parser.ts';
export { NrqlSyntaxError } from './tokens.ts';

const AGGREGATES = new Set<string>(['count', 'sum', 'average', 'min', 'max', 'stddev', 'latest', 'percentile']);

export function parseNrql(text: string): NrqlQuery {
  return new Parser(text).query();
}

/** The query and its select list (expressions, aggregates, rate, filter, uniques). */
class Parser extends ClauseParser {
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
}
