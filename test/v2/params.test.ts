import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V2Error } from '../../src/v2/errors.ts';
import { parseIdList, parsePage, parseV2Params } from '../../src/v2/params.ts';

describe('parseV2Params: every spelling real clients send lands on one key', () => {
  it.each([
    ['names[]=a&names[]=b'],
    ['names%5B%5D=a&names%5B%5D=b'],
    ['names=a&names=b'],
    ['names[0]=a&names[1]=b'],
    ['names%5B0%5D=a&names%5B1%5D=b'],
  ])('%s', (query) => {
    expect(parseV2Params(query).get('names')).toEqual(['a', 'b']);
  });

  it('keeps filter[...] keys and strips only a trailing array suffix', () => {
    const params = parseV2Params('filter%5Bname%5D=tf_&filter[ids][]=1&filter[ids][]=2');
    expect(params.get('filter[name]')).toEqual(['tf_']);
    expect(params.get('filter[ids]')).toEqual(['1', '2']);
  });

  it('decodes + as a space and merges a form body after the query string', () => {
    const params = parseV2Params('names[]=CPU/User+Time', 'names[]=WebTransaction/foo%20(GET)&from=2026-01-01T10:00:00+00:00');
    expect(params.get('names')).toEqual(['CPU/User Time', 'WebTransaction/foo (GET)']);
    expect(params.get('from')).toEqual(['2026-01-01T10:00:00 00:00']);
  });

  it('never throws on arbitrary query text', () => {
    fc.assert(fc.property(fc.string(), (text) => void parseV2Params(text)));
  });
});

describe('filter[ids]', () => {
  const ids = (query: string) => parseIdList(parseV2Params(query), 'filter[ids]');

  it('accepts raw and encoded commas, repeats and filter[ids][]', () => {
    expect(ids('filter[ids]=1,2')).toEqual([1, 2]);
    expect(ids('filter%5Bids%5D=1%2C2')).toEqual([1, 2]);
    expect(ids('filter[ids][]=3&filter[ids][]=4,5')).toEqual([3, 4, 5]);
    expect(ids('filter[ids]=7,,7, 8')).toEqual([7, 8]);
  });

  it.each(['abc', '1e3', '0x10', '12abc', '-1', '0', '99999999999999999999', '1.5'])('rejects %s with a v2 422', (value) => {
    expect(() => ids(`filter[ids]=${value}`)).toThrowError(V2Error);
    try {
      ids(`filter[ids]=${value}`);
    } catch (error) {
      expect((error as V2Error).status).toBe(422);
    }
  });
});

describe('page', () => {
  it('defaults to 1 and accepts positive integers', () => {
    expect(parsePage(parseV2Params(''))).toBe(1);
    expect(parsePage(parseV2Params('page='))).toBe(1);
    expect(parsePage(parseV2Params('page=3'))).toBe(3);
  });

  it.each(['0', '-1', 'x', '1.5', '99999999999'])('rejects page=%s with 422', (value) => {
    expect(() => parsePage(parseV2Params(`page=${value}`))).toThrowError(/Invalid parameter page/);
  });
});
