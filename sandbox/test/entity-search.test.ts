import fc from 'fast-check';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { evaluate, parseEntitySearchQuery, tokenizeEntitySearchQuery } from '../entity-search.ts';
import { apmSearchFields } from '../entities/apm-application.ts';
import type { SandboxApp } from '../model.ts';

/** The quoting a client must apply to put an arbitrary string into a query literal. */
function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const app: SandboxApp = {
  accountId: 1000001,
  id: 200000123,
  guid: 'MTAwMDAwMXxBUE18QVBQTElDQVRJT058MjAwMDAwMTIz',
  name: "O'Brien's Batch\\Worker 3",
  language: 'python',
  reporting: true,
  alertSeverity: 'WARNING',
  lastReportingChangeAt: 1_750_000_000_000,
  apdexTarget: 0.5,
  serverSideConfig: false,
  summary: null,
  browser: null,
  hosts: [],
  alertPolicyId: null,
};

function matches(query: string, context = {}): boolean {
  return evaluate(parseEntitySearchQuery(query), apmSearchFields(app), context);
}

/** Arbitrary Unicode, heavily mixed with the characters that need quoting. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("'", '\\', '\\\'', 'a', ' ', '%', ',', ')', 'AND', '\n'), maxLength: 20 }),
);

describe('entity-search literals', () => {
  it('a quoted literal parses back to exactly the original string', () => {
    fc.assert(
      fc.property(anyText, anyText, (text, other) => {
        const query = parseEntitySearchQuery(`name = ${quote(text)} AND name IN (${quote(other)}, ${quote(text)})`);
        expect(query.conditions[0]?.values).toEqual([text]);
        expect(query.conditions[1]?.values).toEqual([other, text]);
      }),
      { numRuns: 500 },
    );
  });

  it('decodes backslash escapes: \\\' \\\\ and any other escaped character', () => {
    expect(tokenizeEntitySearchQuery(String.raw`'a\'b\\c\d'`)).toEqual([{ kind: 'string', value: "a'b\\cd", position: 0 }]);
  });

  it('an exactly quoted name matches itself and nothing else', () => {
    expect(matches(`name = ${quote(app.name)}`)).toBe(true);
    expect(matches(`name = ${quote(app.name.toLowerCase())}`)).toBe(false);
  });
});

describe('entity-search syntax', () => {
  it('accepts keywords in any case, bare integers and booleans', () => {
    const query = parseEntitySearchQuery("domain IN ('APM') and type = 'APPLICATION' AnD accountId = 1000001 AND reporting = TRUE");
    expect(query.conditions).toEqual([
      { field: 'domain', operator: 'IN', values: ['APM'], position: 0 },
      { field: 'type', operator: '=', values: ['APPLICATION'], position: 22 },
      { field: 'accountId', operator: '=', values: ['1000001'], position: 47 },
      { field: 'reporting', operator: '=', values: ['true'], position: 71 },
    ]);
  });

  it('maps language to tags.language and treats an empty query as match-all', () => {
    expect(parseEntitySearchQuery("language = 'go'").conditions[0]?.field).toBe('tags.language');
    expect(parseEntitySearchQuery('   ').conditions).toEqual([]);
  });

  it.each([
    ["name = 'abc", "Invalid query: unterminated string starting at position 7"],
    ["name = 'abc\\'", "Invalid query: unterminated string starting at position 7"],
    ["colour = 'red'", "Invalid query: unknown field 'colour' at position 0"],
    ['name = ', 'Invalid query: unexpected end of query (expected a quoted string, an integer, true or false) at position 7'],
    ["name = AND type = 'x'", "Invalid query: unexpected token 'AND' (expected a quoted string, an integer, true or false) at position 7"],
    ["name = 'a' 'b'", "Invalid query: unexpected token 'b' (expected AND) at position 11"],
    ["name = 'a' OR name = 'b'", "Invalid query: unexpected token 'OR' (expected AND) at position 11"],
    ["name = 'a' AND", 'Invalid query: unexpected end of query (expected a field name) at position 14'],
    // SQL-style doubled quotes are not an escape: only backslash is.
    ["name = 'o''brien'", "Invalid query: unexpected token 'brien' (expected AND) at position 10"],
    ["name CONTAINS 'a'", "Invalid query: unexpected token 'CONTAINS' (expected =, IN or LIKE) at position 5"],
    ["name != 'a'", 'Invalid query: unexpected character "!" at position 5'],
    ["domain LIKE 'AP'", "Invalid query: LIKE is not supported for field 'domain' at position 7"],
    ["domainId IN ('1', '2'", "Invalid query: unexpected end of query (expected ')') at position 21"],
    ["domainId IN '1'", "Invalid query: unexpected token '1' (expected '(') at position 12"],
    ["domainId IN ()", "Invalid query: unexpected token ')' (expected a quoted string, an integer, true or false) at position 13"],
  ])('rejects %j', (query, message) => {
    let caught: unknown;
    try {
      parseEntitySearchQuery(query);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GraphQLError);
    expect((caught as GraphQLError).message).toBe(message);
    expect((caught as GraphQLError).extensions).toEqual({ errorClass: 'INVALID_INPUT' });
  });
});

describe('entity-search evaluation', () => {
  it.each([
    ["domain = 'APM' AND type = 'APPLICATION'", true],
    ["domain = 'BROWSER'", false],
    ['accountId = 1000001', true],
    ["accountId = '1000001'", true],
    ["accountId IN (1000002, '1000003')", false],
    ["domainId IN ('1', '200000123')", true],
    ['domainId = 200000123', true],
    [`id = '${app.guid}'`, true],
    ["name LIKE 'batch\\\\work'", true],
    ["name LIKE 'BRIEN\\'S'", true],
    ["name LIKE 'batch%'", false],
    ['reporting = true', true],
    ["reporting = 'TRUE'", true],
    ["reporting = 'false'", false],
    ["language = 'python'", true],
    ["tags.language IN ('go', 'PYTHON')", true],
    ["tags.language LIKE 'yth'", true],
    ["tags.team = 'x'", false],
  ])('%s -> %s', (query, expected) => {
    expect(matches(query)).toBe(expected);
  });

  it('tag values compare case-insensitively unless caseSensitiveTagMatching is set', () => {
    expect(matches("language = 'Python'")).toBe(true);
    expect(matches("language = 'Python'", { caseSensitiveTagMatching: true })).toBe(false);
  });

  it('tags.account needs the account name from the caller', () => {
    expect(matches("tags.account = 'Sandbox Primary'")).toBe(false);
    expect(matches("tags.account = 'Sandbox Primary'", { accountName: 'Sandbox Primary' })).toBe(true);
  });
});
