import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entityQuery } from '../../src/upstream/entity-query.ts';
import { UnsafeLiteralError, quoteLiteral } from '../../src/upstream/query-literal.ts';
import { parseEntitySearchQuery } from '../../sandbox/entity-search.ts';

/**
 * quoteLiteral is the one function that turns user text into a query literal. Proof by the
 * sandbox's independent entity-search parser: whatever the text, the query parses back to
 * exactly the conditions the gateway meant, with the literal holding exactly that text.
 */
// eslint-disable-next-line no-control-regex
const printable = fc.string({ unit: 'binary', maxLength: 80 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s));
const hostileUnits = fc.constantFrom("'", '\\', '"', '`', ' AND ', ' OR ', ')', '(', ',', '%', '_', '’', 'IN', 'LIKE', '=', 'é', '🙂');
const hostile = fc.array(fc.oneof(hostileUnits, printable), { maxLength: 8 }).map((parts) => parts.join(''));

describe('quoteLiteral', () => {
  it('round-trips any printable text through the entity-search parser', () => {
    fc.assert(
      fc.property(fc.oneof(printable, hostile), (text) => {
        const parsed = parseEntitySearchQuery(`name = ${quoteLiteral(text)}`);
        expect(parsed.conditions).toHaveLength(1);
        expect(parsed.conditions[0]).toMatchObject({ field: 'name', operator: '=', values: [text] });
      }),
      { numRuns: 1000 },
    );
  });

  it('never lets text change the rest of the query', () => {
    fc.assert(
      fc.property(fc.oneof(printable, hostile), (text) => {
        const query = entityQuery([
          { field: 'domain', op: '=', value: 'APM' },
          { field: 'accountId', op: '=', value: 1000001 },
          { field: 'name', op: 'LIKE', value: text },
          { field: 'domainId', op: 'IN', values: ['1', text] },
        ]);
        const parsed = parseEntitySearchQuery(query);
        expect(parsed.conditions.map((c) => [c.field, c.operator, c.values])).toEqual([
          ['domain', '=', ['APM']],
          ['accountId', '=', ['1000001']],
          ['name', 'LIKE', [text]],
          ['domainId', 'IN', ['1', text]],
        ]);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ["O'Brien", "'O\\'Brien'"],
    ['back\\slash', "'back\\\\slash'"],
    ["\\'", "'\\\\\\''"],
    ["' OR name LIKE '", "'\\' OR name LIKE \\''"],
    ["') AND accountId = 1 AND name = ('", "'\\') AND accountId = 1 AND name = (\\''"],
    ['trailing\\', "'trailing\\\\'"],
  ])('escapes %s as %s', (text, literal) => {
    expect(quoteLiteral(text)).toBe(literal);
  });

  it.each(['line\nbreak', 'nul\u0000', 'tab\t', 'del\u007f'])('refuses control characters (%j)', (text) => {
    expect(() => quoteLiteral(text)).toThrow(UnsafeLiteralError);
  });

  it('renders numbers only from safe integers', () => {
    expect(() => entityQuery([{ field: 'accountId', op: '=', value: 1.5 }])).toThrow();
    expect(() => entityQuery([{ field: 'accountId', op: '=', value: 2 ** 60 }])).toThrow();
  });
});
