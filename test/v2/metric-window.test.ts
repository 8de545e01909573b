import { describe, expect, it } from 'vitest';
import { V2Error } from '../../src/v2/errors.ts';
import { resolveMetricWindow, type MetricWindowInput } from '../../src/v2/metric-window.ts';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const H = 3_600_000;
const D = 24 * H;
const iso = (ms: number): string => new Date(ms).toISOString();

function window(input: Partial<MetricWindowInput>) {
  return resolveMetricWindow({ summarize: false, ...input }, NOW);
}

function titleOf(input: Partial<MetricWindowInput>): string {
  try {
    window(input);
  } catch (error) {
    if (error instanceof V2Error) return `${error.status} ${error.title}`;
    throw error;
  }
  return 'no error';
}

describe('metric data window (docs/metric-data-rules.md §3)', () => {
  it('defaults to the last 30 minutes in 30 one-minute slices ending at the current minute', () => {
    const w = window({});
    expect([iso(w.from), iso(w.to)]).toEqual(['2026-11-22T11:30:30.000Z', '2026-11-22T12:00:30.000Z']);
    expect([iso(w.start), w.widthMs, w.count]).toEqual(['2026-11-22T11:30:00.000Z', 60_000, 30]);
  });

  it.each([
    [3 * H, 60],
    [6 * H, 120],
    [14 * H, 300],
    [24 * H, 600],
    [4 * D, 1800],
    [7 * D, 3600],
    [21 * D, 10800],
    [42 * D, 21600],
    [63 * D, 43200],
    [200 * D, 259200],
  ])('a range of %i ms (the upper limit of its row) defaults to %i-second slices, and one minute more to the next row', (range, seconds) => {
    const to = NOW - 60_000;
    const recent = window({ from: iso(to - Math.min(range, 7 * D)), to: iso(to) });
    if (range <= 7 * D) expect(recent.widthMs).toBe(seconds * 1000);
    const atLimit = resolveMetricWindow({ summarize: false, from: iso(to - range), to: iso(to) }, to - range + 8 * D);
    expect(atLimit.widthMs).toBe(seconds * 1000);
    expect(atLimit.start % atLimit.widthMs).toBe(0);
    expect(atLimit.count).toBeLessThanOrEqual(366);
    if (range < 200 * D) {
      const over = resolveMetricWindow({ summarize: false, from: iso(to - range - 60_000), to: iso(to) }, to - range + 8 * D);
      expect(over.widthMs).toBeGreaterThan(seconds * 1000);
    }
  });

  it('gives ten evenly spaced slices over whole hours when the start is older than 8 days and the range at most 4 days', () => {
    const from = NOW - 9 * D - 25 * 60_000; // 11:35:30, nine days back
    const w = window({ from: iso(from), to: iso(from + 2 * H) });
    expect(iso(w.start)).toBe('2026-11-13T11:00:00.000Z');
    expect([w.count, w.widthMs]).toEqual([10, (3 * H) / 10]);
    const long = window({ from: iso(NOW - 20 * D), to: iso(NOW - 15 * D) });
    expect([long.widthMs, long.count]).toEqual([H, 120]);
  });

  it('honours a larger period, refuses a smaller one or one that is not whole minutes, and takes 0 as the default', () => {
    expect(window({ period: '300' }).widthMs).toBe(300_000);
    expect(window({ period: '0' }).widthMs).toBe(60_000);
    expect(window({ period: '' }).widthMs).toBe(60_000);
    expect(titleOf({ from: iso(NOW - 4 * D), period: '3600' })).toBe('no error');
    expect(titleOf({ from: iso(NOW - 4 * D), period: '60' })).toBe('422 Invalid parameter period: the smallest period for this time range is 1800 seconds');
    expect(titleOf({ period: '90' })).toBe('422 Invalid parameter period: expected a whole number of minutes, in seconds');
    expect(titleOf({ period: '-60' })).toBe('422 Invalid parameter period: expected a whole number of minutes, in seconds');
    expect(titleOf({ period: 'abc' })).toBe('422 Invalid parameter period: expected a whole number of minutes, in seconds');
  });

  it('summarizes into one slice from the start minute to one second before the end minute', () => {
    const w = resolveMetricWindow({ summarize: true, from: '2026-11-22T10:14:29Z', to: '2026-11-22T10:44:29Z' }, NOW);
    expect([iso(w.start), w.widthMs, w.count]).toEqual(['2026-11-22T10:14:00.000Z', 30 * 60_000, 1]);
  });

  it('refuses ranges under 60 seconds, reversed ranges, bad times and more than 366 slices', () => {
    expect(titleOf({ from: '2026-11-22T10:00:00Z', to: '2026-11-22T10:00:59Z' })).toBe('422 Time range must be at least 60 seconds');
    expect(titleOf({ from: '2026-11-22T10:00:00Z', to: '2026-11-22T09:00:00Z' })).toBe('422 Time range must be at least 60 seconds');
    expect(titleOf({ from: 'yesterday' })).toBe('422 Invalid parameter from: expected an ISO 8601 time such as 2026-01-01T10:00:00+00:00');
    expect(titleOf({ to: '2026-02-30T00:00:00Z' })).toBe('422 Invalid parameter to: expected an ISO 8601 time such as 2026-01-01T10:00:00+00:00');
    expect(titleOf({ from: '0001-01-01T00:00:00Z' })).toBe('422 Invalid parameter from: times before 1970-01-01T00:00:00Z are not accepted');
    expect(titleOf({ to: '1970-01-01T00:10:00Z' })).toBe('422 Invalid parameter from: times before 1970-01-01T00:00:00Z are not accepted');
    expect(titleOf({ from: '1970-01-01T00:00:00Z' })).toBe('422 Time range too long for the period: at most 366 timeslices per metric, use a larger period');
    expect(titleOf({ from: iso(NOW - 3 * H), period: '60' })).toBe('no error');
    expect(titleOf({ from: iso(NOW - 3 * H), to: iso(NOW - 3 * H + 60_000), summarize: true })).toBe('no error');
  });
});
