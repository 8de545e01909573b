import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../src/v2/bounded-memo.ts';

describe('boundedMemo', () => {
  it('answers what the function answers, computing each key once while it is among the last `max`', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 60 }), (max, keys) => {
        const computed: number[] = [];
        const memo = boundedMemo(max, (key: number) => {
          computed.push(key);
          return key % 3 === 0 ? undefined : `v${key}`;
        });
        // The model: a list of the last `max` distinct keys computed, oldest first.
        const kept: number[] = [];
        let expected = 0;
        for (const key of keys) {
          expect(memo(key)).toBe(key % 3 === 0 ? undefined : `v${key}`);
          if (!kept.includes(key)) {
            expected++;
            if (kept.length >= max) kept.shift();
            kept.push(key);
          }
        }
        expect(computed.length).toBe(expected);
      }),
    );
  });

  it('keeps nothing for a key whose computation throws', () => {
    let calls = 0;
    const memo = boundedMemo(4, (key: string) => {
      calls++;
      throw new Error(`no ${key}`);
    });
    expect(() => memo('a')).toThrow('no a');
    expect(() => memo('a')).toThrow('no a');
    expect(calls).toBe(2);
  });
});
