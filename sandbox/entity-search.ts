/**
 * The subset of NerdGraph's entity-search query language the sandbox understands:
 *
 *   query      := "" | condition ( AND condition )*
 *   condition  := field "=" value | field IN "(" value ( "," value )* ")" | field LIKE value
 *   value      := 'single-quoted string' | integer | true | false
 *
 * Keywords (AND, IN, LIKE, true, false) are case-insensitive. Inside a string a backslash
 * makes the next character literal, so `\'` is a quote and `\\` a backslash.
 *
 * Fields: domain, type, accountId, domainId, id (the entity GUID), name, reporting,
 * language (= tags.language) and tags.<key> (the sandbox tags every entity with `account`, and
 * APM apps with `language`). Every entity kind answers these fields (entities/kind.ts). LIKE is allowed on name and tags only.
 *
 * Semantics, chosen to be predictable rather than a copy of NerdGraph's full-text search:
 * - `name = 'x'` is exact and case-sensitive.
 * - `LIKE 'x'` is case-insensitive substring containment; `%` and `_` are literal characters,
 *   not wildcards (NerdGraph's LIKE is a "contains" search, so clients rarely send `%`).
 * - accountId and domainId compare as the decimal text of the integer, so `= 5` and `= '5'` match alike.
 * - reporting matches 'true'/'false' (any case) and the bare booleans.
 * - Tag values compare case-insensitively unless caseSensitiveTagMatching is set, like NerdGraph.
 *
 * Syntax errors throw a GraphQLError `Invalid query: <problem> at position N` (N is the
 * 0-based character offset in the query text) with extensions.errorClass INVALID_INPUT.
 */
import { GraphQLError } from 'graphql';
import type { EntitySearchFields } from './entities/kind.ts';

export type TokenKind = 'identifier' | 'string' | 'integer' | 'symbol';

export interface Token {
  kind: TokenKind;
  /** Identifier/symbol text, the integer's digits, or the string's decoded content. */
  value: string;
  /** 0-based offset of the token's first character in the query text. */
  position: number;
}

export type SearchOperator = '=' | 'IN' | 'LIKE';

export interface SearchCondition {
  /** Canonical field: domain, type, accountId, domainId, id, name, reporting or tags.<key>. */
  field: string;
  operator: SearchOperator;
  /** Literal values as text: string content, integer digits, or 'true'/'false'. */
  values: string[];
  position: number;
}

export interface EntitySearchQuery {
  /** All must hold (the language only has AND); empty matches everything. */
  conditions: SearchCondition[];
}

export interface EvaluationContext {
  /** Value of the `account` tag; omit and `tags.account` matches nothing. */
  accountName?: string;
  caseSensitiveTagMatching?: boolean;
}

const PLAIN_FIELDS = new Set(['domain', 'type', 'accountId', 'domainId', 'id', 'name', 'reporting']);
const FIELD_ALIASES: Record<string, string> = { language: 'tags.language' };

function invalidQuery(problem: string, position: number): GraphQLError {
  return new GraphQLError(`Invalid query: ${problem} at position ${position}`, {
    extensions: { errorClass: 'INVALID_INPUT' },
  });
}

export function tokenizeEntitySearchQuery(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (/\s/.test(char)) {
      i++;
    } else if (char === "'") {
      const start = i;
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw invalidQuery('unterminated string starting', start);
        const current = text[i] as string;
        if (current === "'") break;
        if (current === '\\') {
          if (i + 1 >= text.length) throw invalidQuery('unterminated string starting', start);
          value += text[i + 1];
          i += 2;
        } else {
          value += current;
          i++;
        }
      }
      i++;
      tokens.push({ kind: 'string', value, position: start });
    } else if (/[0-9]/.test(char)) {
      const match = /^[0-9]+/.exec(text.slice(i)) as RegExpExecArray;
      tokens.push({ kind: 'integer', value: match[0], position: i });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(char)) {
      const match = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i)) as RegExpExecArray;
      tokens.push({ kind: 'identifier', value: match[0], position: i });
      i += match[0].length;
    } else if ('=(),'.includes(char)) {
      tokens.push({ kind: 'symbol', value: char, position: i });
      i++;
    } else {
      throw invalidQuery(`unexpected character ${JSON.stringify(char)}`, i);
    }
  }
  return tokens;
}

function describe(token: Token): string {
  return `'${token.value}'`;
}

function isKeyword(token: Token | undefined, keyword: string): boolean {
  return token?.kind === 'identifier' && token.value.toUpperCase() === keyword;
}

export function parseEntitySearchQuery(text: string): EntitySearchQuery {
  const tokens = tokenizeEntitySearchQuery(text);
  let index = 0;

  const unexpected = (expected: string): GraphQLError => {
    const token = tokens[index];
    return token
      ? invalidQuery(`unexpected token ${describe(token)} (expected ${expected})`, token.position)
      : invalidQuery(`unexpected end of query (expected ${expected})`, text.length);
  };

  const parseValue = (): string => {
    const token = tokens[index];
    if (token?.kind === 'string' || token?.kind === 'integer') {
      index++;
      return token.value;
    }
    if (isKeyword(token, 'TRUE') || isKeyword(token, 'FALSE')) {
      index++;
      return (token as Token).value.toLowerCase();
    }
    throw unexpected('a quoted string, an integer, true or false');
  };

  const parseField = (): { field: string; token: Token } => {
    const token = tokens[index];
    if (token?.kind !== 'identifier') throw unexpected('a field name');
    const field = FIELD_ALIASES[token.value] ?? token.value;
    const isTag = /^tags\.[A-Za-z0-9_.]+$/.test(field);
    if (!PLAIN_FIELDS.has(field) && !isTag) throw invalidQuery(`unknown field '${token.value}'`, token.position);
    index++;
    return { field, token };
  };

  const parseCondition = (): SearchCondition => {
    const { field, token: fieldToken } = parseField();
    const operatorToken = tokens[index];
    if (operatorToken?.kind === 'symbol' && operatorToken.value === '=') {
      index++;
      return { field, operator: '=', values: [parseValue()], position: fieldToken.position };
    }
    if (isKeyword(operatorToken, 'LIKE')) {
      if (field !== 'name' && !field.startsWith('tags.')) {
        throw invalidQuery(`LIKE is not supported for field '${fieldToken.value}'`, (operatorToken as Token).position);
      }
      index++;
      return { field, operator: 'LIKE', values: [parseValue()], position: fieldToken.position };
    }
    if (isKeyword(operatorToken, 'IN')) {
      index++;
      expectSymbol('(');
      const values = [parseValue()];
      while (tokens[index]?.kind === 'symbol' && tokens[index]?.value === ',') {
        index++;
        values.push(parseValue());
      }
      expectSymbol(')');
      return { field, operator: 'IN', values, position: fieldToken.position };
    }
    throw unexpected('=, IN or LIKE');
  };

  const expectSymbol = (symbol: string): void => {
    const token = tokens[index];
    if (token?.kind !== 'symbol' || token.value !== symbol) throw unexpected(`'${symbol}'`);
    index++;
  };

  const conditions: SearchCondition[] = [];
  if (tokens.length === 0) return { conditions };
  conditions.push(parseCondition());
  while (index < tokens.length) {
    if (!isKeyword(tokens[index], 'AND')) throw unexpected('AND');
    index++;
    conditions.push(parseCondition());
  }
  return { conditions };
}

/** True when the entity satisfies every condition of the query. */
export function evaluate(query: EntitySearchQuery, entity: EntitySearchFields, context: EvaluationContext = {}): boolean {
  return query.conditions.every((condition) => matchesCondition(condition, entity, context));
}

function matchesCondition(condition: SearchCondition, entity: EntitySearchFields, context: EvaluationContext): boolean {
  if (condition.field.startsWith('tags.')) {
    const tagValues = tagValuesOf(entity, condition.field.slice('tags.'.length), context);
    const caseSensitive = condition.operator !== 'LIKE' && context.caseSensitiveTagMatching === true;
    return tagValues.some((tagValue) => matchesValue(condition, tagValue, caseSensitive));
  }
  const actual = plainFieldValue(entity, condition.field);
  // Booleans are written in any case ('TRUE', true); everything else is exact.
  return matchesValue(condition, actual, condition.field !== 'reporting');
}

function matchesValue(condition: SearchCondition, actual: string, caseSensitive: boolean): boolean {
  const normalise = (text: string): string => (caseSensitive ? text : text.toLowerCase());
  if (condition.operator === 'LIKE') {
    return actual.toLowerCase().includes((condition.values[0] ?? '').toLowerCase());
  }
  const target = normalise(actual);
  return condition.values.some((value) => normalise(value) === target);
}

function plainFieldValue(entity: EntitySearchFields, field: string): string {
  switch (field) {
    case 'domain':
      return entity.domain;
    case 'type':
      return entity.type;
    case 'accountId':
      return String(entity.accountId);
    case 'domainId':
      return String(entity.domainId);
    case 'id':
      return entity.guid;
    case 'name':
      return entity.name;
    case 'reporting':
      return String(entity.reporting);
    default:
      throw new Error(`unhandled entity-search field ${field}`);
  }
}

function tagValuesOf(entity: EntitySearchFields, key: string, context: EvaluationContext): string[] {
  if (key === 'account') return context.accountName === undefined ? [] : [context.accountName];
  return (Object.hasOwn(entity.tags, key) ? entity.tags[key] : undefined) ?? [];
}
