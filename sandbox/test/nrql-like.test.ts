import { describe, expect, it } from 'vitest';
import { NrqlSyntaxError, parseNrql } from '../nrql/parser.ts';

const V = 'newrelic.timeslice.value';

describe('parseNrql: LIKE', () => {
  it('parses attr LIKE and NOT LIKE with a string pattern', () => {
    expect(parseNrql(`SELECT count(${V}) FROM Metric WHERE host LIKE '%web%' AND host NOT LIKE 'db\\'%'`).where).toEqual({
      type: 'and',
      left: { type: 'like', attribute: 'host', negated: false, pattern: '%web%' },
      right: { type: 'like', attribute: 'host', negated: true, pattern: "db'%" },
    });
  });

  it.each([
    [`SELECT count(${V}) FROM Metric WHERE host LIKE 5`, "'5'"],
    [`SELECT count(${V}) FROM Metric WHERE host LIKE`, 'end of input'],
    [`SELECT count(${V}) FROM Metric WHERE LIKE = 'x'`, "'LIKE'"],
  ])('refuses %s', (text, found) => {
    expect(() => parseNrql(text)).toThrowError(NrqlSyntaxError);
    expect(() => parseNrql(text)).toThrowError(found);
  });
});
