import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_THRESHOLDS,
  ThresholdSyntaxError,
  formatThresholds,
  matchesPattern,
  parseThresholds,
  withinThreshold,
  type Threshold,
} from '../../src/compare/thresholds.ts';

const segment = fc.oneof(
  fc.constantFrom('*', '**', 'applications[]', 'timeslices[]', 'values', '*[]', 'call_count', 'app*', '(link)'),
  fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}(\[\])?$/),
);
const pattern = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join('.'));
const amount = fc.double({ min: 0, max: 1e9, noNaN: true }).filter((n) => !Object.is(n, -0));
const threshold = fc
  .record({ pattern, absolute: fc.option(amount, { nil: undefined }), relative: fc.option(amount, { nil: undefined }) })
  .filter((t) => t.absolute !== undefined || t.relative !== undefined)
  .map((t): Threshold => {
    const out: Threshold = { pattern: t.pattern };
    if (t.absolute !== undefined) out.absolute = t.absolute;
    if (t.relative !== undefined) out.relative = t.relative;
    return out;
  });

describe('parseThresholds', () => {
  it('reads the documented syntax', () => {
    expect(parseThresholds('metric_data.**=rel:0.05,abs:1; applications[].application_summary.response_time=abs:0.5;')).toEqual([
      { pattern: 'metric_data.**', relative: 0.05, absolute: 1 },
      { pattern: 'applications[].application_summary.response_time', absolute: 0.5 },
    ]);
    expect(parseThresholds('')).toEqual([]);
    expect(parseThresholds('  ;  ')).toEqual([]);
    expect(parseThresholds('**=rel:1e-9')).toEqual([{ pattern: '**', relative: 1e-9 }]);
  });

  it('round-trips through formatThresholds', () => {
    fc.assert(
      fc.property(fc.array(threshold, { maxLength: 6 }), (thresholds) => {
        expect(parseThresholds(formatThresholds(thresholds))).toEqual(thresholds);
      }),
    );
  });

  it.each([
    ['applications', 'no "="'],
    ['=rel:1', 'the pattern is empty'],
    ['a..b=abs:1', 'empty segment'],
    ['a b=abs:1', 'segment "a b"'],
    ['a=', 'no rel: or abs: option'],
    ['a=foo:1', '"foo:1" is not rel:N or abs:N'],
    ['a=rel:x', 'needs a non-negative decimal number'],
    ['a=abs:-1', 'needs a non-negative decimal number'],
    ['a=abs:1e999', 'not a finite number'],
    ['a=rel:1,rel:2', 'rel: is given twice'],
  ])('refuses %j, naming the entry', (text, why) => {
    const entry = `x=abs:1;${text}`;
    expect(() => parseThresholds(entry)).toThrow(ThresholdSyntaxError);
    expect(() => parseThresholds(entry)).toThrow(`threshold entry 2 "${text}": `);
    expect(() => parseThresholds(entry)).toThrow(why);
  });
});

describe('matchesPattern', () => {
  it.each([
    ['**', 'applications[].name', true],
    ['**', '', true],
    ['applications[].name', 'applications[].name', true],
    ['applications[].*', 'applications[].name', true],
    ['applications.*', 'applications[].name', false],
    ['*', 'timeslices[]', true],
    ['*[]', 'timeslices[]', true],
    ['*[]', 'timeslices', false],
    ['**.values.*', 'metric_data.metrics[].timeslices[].values.call_count', true],
    ['**.values.*', 'metric_data.metrics[].timeslices[].values', false],
    ['metric_data.**', 'metric_data', true],
    ['metric_data.**.call_count', 'metric_data.metrics[].timeslices[].values.call_count', true],
    ['a.*', 'a', false],
    ['a.**.b.**.c', 'a.x.b.y.z.c', true],
    ['app*', 'applications', true],
    ['app*', 'application.links', false],
    ['(link).*', '(link).next', true],
  ])('%s against %s: %s', (glob, field, expected) => {
    expect(matchesPattern(glob, field)).toBe(expected);
  });

  it('a pattern without wildcards matches exactly itself', () => {
    const plain = fc.array(fc.stringMatching(/^[a-z_]{1,6}(\[\])?$/), { minLength: 1, maxLength: 6 }).map((s) => s.join('.'));
    fc.assert(
      fc.property(plain, plain, (a, b) => {
        expect(matchesPattern(a, a)).toBe(true);
        expect(matchesPattern('**', a)).toBe(true);
        expect(matchesPattern(a, b)).toBe(a === b);
      }),
    );
  });
});

describe('withinThreshold', () => {
  it('tolerates by absolute or relative distance', () => {
    expect(withinThreshold({ pattern: '**', absolute: 0.5 }, 10, 10.5)).toBe(true);
    expect(withinThreshold({ pattern: '**', absolute: 0.5 }, 10, 10.6)).toBe(false);
    expect(withinThreshold({ pattern: '**', relative: 0.1 }, 100, 110)).toBe(true);
    expect(withinThreshold({ pattern: '**', relative: 0.1 }, 100, 112)).toBe(false);
    expect(withinThreshold({ pattern: '**', relative: 0.1, absolute: 5 }, 100, 104.5)).toBe(true);
  });

  it('the default absorbs float formatting only', () => {
    const [defaults] = DEFAULT_THRESHOLDS;
    expect(defaults).toEqual({ pattern: '**', relative: 1e-9 });
    expect(withinThreshold(defaults as Threshold, 0.1 + 0.2, 0.3)).toBe(true);
    expect(withinThreshold(defaults as Threshold, 0.3, 0.3001)).toBe(false);
  });
});
