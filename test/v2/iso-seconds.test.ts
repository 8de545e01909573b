import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/v2/time.ts';

/** v2's timestamp form, worked out without the memo. */
const reference = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;

describe('isoSeconds (memoised per second)', () => {
  it('formats every time as v2 does, whatever was formatted before it (times within one second share a memo entry)', () => {
    // Dates from 1900 to 2200, milliseconds included, negatives (before 1970) too.
    const time = fc.integer({ min: -2_208_988_800_000, max: 7_258_118_400_000 });
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 50 }), (times) => {
        // Each time, then a neighbour in the same second and across its bounds, in order.
        for (const ms of times) {
          for (const near of [ms, ms + 1, ms - 1, ms + 999, ms - 999]) expect(isoSeconds(near)).toBe(reference(near));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('stays right past its bound (older entries dropped)', () => {
    const base = Date.UTC(2026, 10, 27);
    for (let i = 0; i < 5000; i++) expect(isoSeconds(base + i * 1000 + 500)).toBe(reference(base + i * 1000 + 500));
    expect(isoSeconds(base + 500)).toBe('2026-11-27T00:00:00+00:00');
  });
});
