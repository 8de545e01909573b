import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseV2Time } from '../../src/v2/timestamps.ts';

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');

/** A UTC instant in whole seconds between years 1 and 9999, and a zone offset in minutes. */
const instants = fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }).map((s) => s * 1000);
const offsets = fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 });

function wallClock(utcMs: number, offsetMinutes: number): string {
  const d = new Date(utcMs + offsetMinutes * 60_000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const zone = (offset: number): string => `${offset < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;

describe('parseV2Time', () => {
  it('reads every form clients send (client-behaviour.md §4)', () => {
    const at = Date.UTC(2026, 0, 1, 10, 0, 0);
    expect(parseV2Time('2026-01-01T10:00:00Z')).toBe(at);
    expect(parseV2Time('2026-01-01T10:00:00+00:00')).toBe(at);
    expect(parseV2Time('2026-01-01T07:00:00-03:00')).toBe(at);
    expect(parseV2Time('2026-01-01T12:00:00 02:00')).toBe(at); // `+02:00` whose + became a space
    expect(parseV2Time('2026-01-01T10:00:00.000Z')).toBe(at);
    expect(parseV2Time('2026-01-01T10:00:00.999Z')).toBe(at); // fractions truncated
    expect(parseV2Time('2026-01-01 10:00:00')).toBe(at); // naive datetime: UTC
    expect(parseV2Time('2026-01-01 10:00:00 00:00')).toBe(at);
    expect(parseV2Time('2026-01-01t10:00:00z')).toBe(at);
    expect(parseV2Time('2026-01-01T15:30:00+0530')).toBe(at);
    expect(parseV2Time('2026-01-01T11:00:00+01')).toBe(at);
    expect(parseV2Time('2026-01-01T10:00')).toBe(at);
    expect(parseV2Time('2026-01-01')).toBe(Date.UTC(2026, 0, 1));
    expect(parseV2Time('0001-01-01T00:00:00Z')).toBe(-62_135_596_800_000); // Go's zero time
  });

  it.each([
    '', 'now', '1767261600', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T10:60:00Z',
    '2026-01-01T10:00:61Z', '2026-01-01T10:00:00+24:00', '2026-01-01T10:00:00 0', '26-01-01T10:00:00Z', '2026-1-1T10:00:00Z',
    '2026-01-01T10:00:00Zjunk', '0000-01-01T00:00:00Z', '2026-01-01T10:00:00\n',
  ])('refuses %j', (text) => {
    expect(parseV2Time(text.replace('\\n', '\n'))).toBeUndefined();
  });

  it('reads any instant written with any offset, in each accepted form, back to the instant (property)', () => {
    fc.assert(
      fc.property(instants, offsets, fc.constantFrom('T', ' '), fc.constantFrom('colon', 'space', 'compact'), (utc, offset, separator, style) => {
        // Years before 1 or after 9999 in local time are out of range by design.
        const localYear = new Date(utc + offset * 60_000).getUTCFullYear();
        fc.pre(localYear >= 1 && localYear <= 9999);
        const local = wallClock(utc, offset).replace('T', separator);
        const z = zone(offset);
        const written = style === 'colon' ? z : style === 'compact' ? z.replace(':', '') : offset >= 0 ? ` ${z.slice(1)}` : z;
        expect(parseV2Time(`${local}${written}`)).toBe(utc);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws, whatever the text (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => {
      const parsed = parseV2Time(text);
      expect(parsed === undefined || Number.isInteger(parsed)).toBe(true);
    }), { numRuns: 3000 });
  });
});
