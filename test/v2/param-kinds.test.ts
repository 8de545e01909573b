import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V2Error } from '../../src/v2/errors.ts';
import { defineParams, param } from '../../src/v2/param-schema.ts';
import { DERIVED_ID_PATTERN, ID_PATTERN, parseV2Params, v2IdOf } from '../../src/v2/params.ts';

/**
 * The parameter kinds for enums, times and ids (param.oneOf, time, id, requiredId, ids, flag
 * aliases): what each reads, and, for any text, a value or a v2 422, never anything else.
 */
const doc = { fidelity: 'exact', note: '' } as const;

function refusal(run: () => unknown): { status: number; title: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof V2Error) return { status: error.status, title: error.title };
    throw error;
  }
  throw new Error('expected a V2Error');
}

const schema = defineParams({
  open: param.flag('open', { ...doc, aliases: ['filter[open]'] }),
  'filter[open]': param.alias('filter[open]', doc),
  kind: param.oneOf('kind', { ...doc, allowed: ['APM', 'Mobile'] as const, title: 'bad kind' }),
  start: param.time('start', { ...doc, aliases: ['filter[start]'], title: (key) => `bad time ${key}` }),
  one: param.id('one', { ...doc, title: 'bad one' }),
  derived: param.id('derived', { ...doc, title: 'bad derived', ids: 'derived' }),
  required: param.requiredId('required', { ...doc, title: 'bad required', missingTitle: 'required missing' }),
  many: param.ids('many', { ...doc, title: 'bad many', ids: 'derived' }),
});
const parse = (query: string) => schema.parse(parseV2Params(query));

describe('parameter kinds', () => {
  it('read what they declare', () => {
    expect(parse('required=1')).toEqual({ open: false, 'filter[open]': undefined, kind: undefined, start: undefined, one: undefined, derived: undefined, required: 1, many: [] });
    expect(parse('required=1&filter[open]=true&kind=mobile&filter[start]=2026-01-01T00:00:00Z&one=+15+&many=3,,4&many=3').open).toBe(true);
    const read = parse('required=1&kind=mobile&filter[start]=2026-01-01T00:00:00Z&one=+15+&many=3,,4&many=3&derived=9007199254740991');
    expect(read).toMatchObject({ kind: 'Mobile', start: Date.UTC(2026, 0, 1), one: 15, many: [3, 4], derived: 9_007_199_254_740_991 });
  });

  it('read an alias only when the spelling before it is blank', () => {
    expect(parse('required=1&start=2026-01-02T00:00:00Z&filter[start]=nonsense').start).toBe(Date.UTC(2026, 0, 2));
    expect(parse('required=1&start=&filter[start]=2026-01-03T00:00:00Z').start).toBe(Date.UTC(2026, 0, 3));
    expect(refusal(() => parse('required=1&start=+&filter[start]=nonsense'))).toEqual({ status: 422, title: 'bad time filter[start]' });
    expect(parse('required=1&open=yes&filter[open]=nonsense').open).toBe(true);
    expect(refusal(() => parse('required=1&open=no&filter[open]=nonsense')).status).toBe(422);
  });

  it('read a required id as a comma list naming exactly one id, as v2 took policy_id', () => {
    expect(parse('required=7,').required).toBe(7);
    expect(parse('required= 7 , 7 ').required).toBe(7);
    expect(parse('required=9&required=8,').required).toBe(8);
    expect(refusal(() => parse('required=7,8'))).toEqual({ status: 422, title: 'bad required' });
    expect(refusal(() => parse('required=,'))).toEqual({ status: 422, title: 'bad required' });
    expect(refusal(() => parse('required=7,x'))).toEqual({ status: 422, title: 'bad required' });
  });

  it('refuse with their titles, in declaration order', () => {
    expect(refusal(() => parse(''))).toEqual({ status: 422, title: 'required missing' });
    expect(refusal(() => parse('required=+'))).toEqual({ status: 422, title: 'required missing' });
    expect(refusal(() => parse('kind=browser&one=x'))).toEqual({ status: 422, title: 'bad kind' });
    expect(refusal(() => parse('one=0'))).toEqual({ status: 422, title: 'bad one' });
    expect(refusal(() => parse('one=1000000000000000&required=1'))).toEqual({ status: 422, title: 'bad one' });
    expect(refusal(() => parse('derived=9007199254740992&required=1'))).toEqual({ status: 422, title: 'bad derived' });
    expect(refusal(() => parse('required=1&many=1,x'))).toEqual({ status: 422, title: 'bad many' });
  });

  it('give a value or a v2 422 for any text, and ids only of their bound', () => {
    const keys = ['open', 'filter[open]', 'kind', 'start', 'filter[start]', 'one', 'derived', 'required', 'many'];
    const value = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('1', '0', '01', ' 7 ', '9007199254740991', '9007199254740992', '999999999999999', '1000000000000000', 'apm', '2026-01-01', 'true', '1,2', ','));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: 6 }), (pairs) => {
        const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        let read;
        try {
          read = parse(query);
        } catch (error) {
          expect(error).toBeInstanceOf(V2Error);
          expect((error as V2Error).status).toBe(422);
          return;
        }
        for (const id of [read.one, read.required].filter((v) => v !== undefined)) expect(ID_PATTERN.test(String(id))).toBe(true);
        for (const id of [read.derived, ...read.many].filter((v) => v !== undefined)) expect(DERIVED_ID_PATTERN.test(String(id)) && Number.isSafeInteger(id)).toBe(true);
        if (read.kind !== undefined) expect(['APM', 'Mobile']).toContain(read.kind);
        if (read.start !== undefined) expect(Number.isFinite(read.start)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('v2IdOf', () => {
  it('is the one id pattern: every v2 id is a derived-bound id, and the bounds are 15 and 16 digits', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 18 }), (text) => {
        const id = v2IdOf(text);
        if (id !== undefined) {
          expect(String(id)).toBe(text);
          expect(v2IdOf(text, 'derived')).toBe(id);
        }
        const derived = v2IdOf(text, 'derived');
        if (derived !== undefined) expect(Number.isSafeInteger(derived) && derived > 0 && String(derived) === text).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(v2IdOf(String(n), 'derived')).toBe(n);
        expect(v2IdOf(String(n))).toBe(n < 1e15 ? n : undefined);
      }),
    );
  });
});
