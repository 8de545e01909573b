import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricTitles } from '../../src/v2/errors.ts';
import { EntityTitles } from '../../mappings/common/entity-titles.ts';
import { createSandbox } from '../../sandbox/server.ts';
import { DAY_MS, HOUR_MS, LIFECYCLE_NAMES, MINUTE_MS, bulkMetricsApp, findMetric, metricsOf, rowsOf, type TimesliceRow } from '../../sandbox/timeslices.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';

/**
 * The legacy face's metric endpoints against docs/metric-data-rules.md. Expected numbers are
 * worked out here from the raw rows (rowsOf) by the rules' formula table, never by calling
 * the implementation.
 */
const FIXED = Date.UTC(2026, 10, 22, 12, 0, 30);
const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED });
const { data } = sandbox;
const DEMO = { 'x-api-key': 'NRAK-SANDBOX-DEMO' };
const SECONDARY = { 'x-api-key': 'NRAK-SANDBOX-SECONDARY' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const primary = data.apps.filter((app) => app.accountId === 1000001);
/** A reporting Java app with browser monitoring: it has every kind of metric. */
const APP = primary.find((app) => app.reporting && app.browser !== null && app.language === 'java') as SandboxApp;
/** The bulk app carries the 2,345 bulk metrics. */
const BULK = bulkMetricsApp(data) as SandboxApp;
const FOREIGN = data.apps.find((app) => app.accountId === 1000002) as SandboxApp;

interface Timeslice {
  from: string;
  to: string;
  values: Record<string, number>;
}
interface MetricData {
  from: string;
  to: string;
  metrics_not_found: string[];
  metrics_found: string[];
  metrics: Array<{ name: string; timeslices: Timeslice[] }>;
}

const ms = (iso: string): number => Date.parse(iso);
/** v2's output form of an epoch-ms time. */
const v2Time = (epochMs: number): string => `${new Date(epochMs).toISOString().slice(0, 19)}+00:00`;
const dataPath = (query: string, app: SandboxApp = APP, format = 'json'): string => `/v2/applications/${app.id}/metrics/data.${format}?${query}`;

function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(sandbox.app.request(path, { headers: { ...DEMO, ...headers } }));
}

async function metricData(query: string, app: SandboxApp = APP): Promise<MetricData> {
  const response = await get(dataPath(query, app));
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return (JSON.parse(text) as { metric_data: MetricData }).metric_data;
}

async function failure(query: string, app: SandboxApp = APP): Promise<[number, string]> {
  const response = await get(dataPath(query, app));
  return [response.status, ((await response.json()) as { error: { title: string } }).error.title];
}

function only<T>(list: T[]): T {
  expect(list).toHaveLength(1);
  return list[0] as T;
}

const slicesOf = (answer: MetricData, name = 'HttpDispatcher'): Timeslice[] => answer.metrics.find((m) => m.name === name)?.timeslices ?? [];

// ---------------------------------------------------------------------------------------------
// Expected values, by the rules' formula table (§5), from the raw rows.

interface Expected {
  C: number;
  T: number;
  X: number;
  Q: number;
  MN: number;
  MX: number;
  W: number;
}

const total = (rows: TimesliceRow[], pick: (row: TimesliceRow) => number): number => rows.reduce((sum, row) => sum + pick(row), 0);

function expectedSums(name: string, fromMs: number, toMs: number, app: SandboxApp = APP): Expected {
  const metric = findMetric(app, data, name);
  if (!metric) throw new Error(`no metric ${name}`);
  const rows = rowsOf(app, metric, fromMs, toMs, FIXED);
  return {
    C: total(rows, (r) => r.count),
    T: total(rows, (r) => r.total),
    X: total(rows, (r) => r.totalExclusive),
    Q: total(rows, (r) => r.sumOfSquares),
    MN: rows.length === 0 ? 0 : rows.reduce((m, r) => Math.min(m, r.min), Infinity),
    MX: rows.length === 0 ? 0 : rows.reduce((m, r) => Math.max(m, r.max), -Infinity),
    W: (toMs - fromMs) / 1000,
  };
}

const q = (a: number, b: number): number => (b === 0 ? 0 : a / b);

/** The rules' value sets, in their order, with their formulas. */
const EXPECTED_VALUES: Record<string, (e: Expected) => Record<string, number>> = {
  call: (e) => ({
    average_response_time: (1000 * q(e.T, e.C)),
    calls_per_minute: 60 * q(e.C, e.W),
    call_count: e.C,
    min_response_time: 1000 * e.MN,
    max_response_time: 1000 * e.MX,
    average_exclusive_time: 1000 * q(e.X, e.C),
    average_value: q(e.T, e.C),
    total_call_time_per_minute: 60 * q(e.T, e.W),
    requests_per_minute: 60 * q(e.C, e.W),
    standard_deviation: 1000 * Math.sqrt(Math.max(0, q(e.Q, e.C) - q(e.T, e.C) ** 2)),
  }),
  apdex: (e) => ({
    s: e.C,
    t: e.T,
    f: e.X,
    count: e.C + e.T + e.X,
    score: q(e.C + e.T / 2, e.C + e.T + e.X),
    value: q(e.C + e.T / 2, e.C + e.T + e.X),
    threshold: e.MX,
    threshold_min: e.MN,
  }),
  'end-user': (e) => ({
    average_response_time: 1000 * q(e.T, e.C),
    average_fe_response_time: 1000 * q(e.X, e.C),
    average_be_response_time: 1000 * q(e.T - e.X, e.C),
    average_network_time: 1000 * q(e.T - e.X - e.Q, e.C),
    total_network_time: e.T - e.X - e.Q,
    network_time_percentage: 100 * q(e.T - e.X - e.Q, e.W),
    total_fe_time: e.X,
    fe_time_percentage: 100 * q(e.X, e.W),
    total_app_time: e.Q,
    average_app_time: q(e.Q, e.C),
    call_count: e.C,
    calls_per_minute: 60 * q(e.C, e.W),
    requests_per_minute: 60 * q(e.C, e.W),
  }),
  'end-user-rb': (e) => ({
    average_dom_content_load_time: 1000 * q(e.T, e.C),
    average_queue_time: 1000 * q(e.X, e.C),
    total_queue_time: 1000 * e.X,
    total_dom_content_time: 1000 * e.T,
    call_count: e.C,
  }),
  errors: (e) => ({ error_count: e.C, errors_per_minute: 60 * q(e.C, e.W) }),
  memory: (e) => ({ used_bytes_by_host: 1048576 * q(e.T, e.C), used_mb_by_host: q(e.T, e.C), total_used_mb: e.T }),
  'cpu-time': (e) => ({ percent: 100 * q(e.T, e.W), average_time: 1000 * q(e.T, e.C), total_time: 1000 * e.T }),
  'cpu-utilization': (e) => ({ percent: 100 * q(e.T, e.C) }),
  gc: (e) => ({
    as_percentage: 100 * q(e.T, e.C),
    average_time: 1000 * q(e.T, e.C),
    calls_per_minute: 60 * q(e.C, e.W),
    max_value: e.MX,
    total_call_time_per_minute: 60 * q(e.T, e.W),
    utilization: 100 * q(e.T, e.W),
  }),
};

/** Same keys in the same order, each value equal up to floating-point rounding. */
function expectValues(actual: Record<string, number>, expected: Record<string, number>): void {
  expect(Object.keys(actual)).toEqual(Object.keys(expected));
  for (const [key, value] of Object.entries(expected)) {
    const got = actual[key] as number;
    expect(typeof got, key).toBe('number');
    expect(Math.abs(got - value), `${key}: ${got} vs ${value}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(value)));
  }
}

function expectSlice(slice: Timeslice, name: string, fromMs: number, toMs: number, kind = 'call'): void {
  expect(slice.from).toBe(v2Time(fromMs));
  expect(slice.to).toBe(v2Time(toMs));
  expectValues(slice.values, (EXPECTED_VALUES[kind] as (e: Expected) => Record<string, number>)(expectedSums(name, fromMs, toMs)));
}

// ---------------------------------------------------------------------------------------------

describe('legacy metric data: ranges and buckets', () => {
  it('defaults to the last 30 minutes in 30 one-minute buckets ending at 12:00:00', async () => {
    const answer = await metricData('names[]=HttpDispatcher');
    expect(answer.from).toBe('2026-11-22T11:30:30+00:00');
    expect(answer.to).toBe('2026-11-22T12:00:30+00:00');
    expect(answer.metrics_found).toEqual(['HttpDispatcher']);
    expect(answer.metrics_not_found).toEqual([]);
    const slices = slicesOf(answer);
    expect(slices).toHaveLength(30);
    expect(slices[0]?.from).toBe('2026-11-22T11:30:00+00:00');
    expect(slices[29]?.to).toBe('2026-11-22T12:00:00+00:00');
    const start = ms('2026-11-22T11:30:00Z');
    slices.forEach((slice, k) => expectSlice(slice, 'HttpDispatcher', start + k * MINUTE_MS, start + (k + 1) * MINUTE_MS));
    // One row per minute: each bucket's count is that minute's row.
    const rows = rowsOf(APP, findMetric(APP, data, 'HttpDispatcher')!, start, start + 30 * MINUTE_MS, FIXED);
    expect(slices.map((s) => s.values.call_count)).toEqual(rows.map((r) => r.count));
    expect(rows.every((r) => r.count > 0)).toBe(true);
  });

  // [range length, default granularity, bucket count, first bucket start], all ending 2026-11-22T12:00:00Z.
  const TO = '2026-11-22T12:00:00Z';
  const H = 3600;
  const D = 86_400;
  const GRANULARITY_CASES: Array<[number, number, number, string]> = [
    [3 * H, 60, 180, '2026-11-22T09:00:00Z'],
    [3 * H + 60, 120, 91, '2026-11-22T08:58:00Z'],
    [6 * H, 120, 180, '2026-11-22T06:00:00Z'],
    [6 * H + 60, 300, 73, '2026-11-22T05:55:00Z'],
    [14 * H, 300, 168, '2026-11-21T22:00:00Z'],
    [14 * H + 60, 600, 85, '2026-11-21T21:50:00Z'],
    [24 * H, 600, 144, '2026-11-21T12:00:00Z'],
    [24 * H + 60, 1800, 49, '2026-11-21T11:30:00Z'],
    [4 * D, 1800, 192, '2026-11-18T12:00:00Z'],
    [4 * D + 60, 3600, 97, '2026-11-18T11:00:00Z'],
    [7 * D, 3600, 168, '2026-11-15T12:00:00Z'],
    [7 * D + 60, 10_800, 57, '2026-11-15T09:00:00Z'],
    [21 * D, 10_800, 168, '2026-11-01T12:00:00Z'],
    [21 * D + 60, 21_600, 85, '2026-11-01T06:00:00Z'],
    [42 * D, 21_600, 168, '2026-10-11T12:00:00Z'],
    [42 * D + 60, 43_200, 85, '2026-10-11T00:00:00Z'],
    [63 * D, 43_200, 126, '2026-09-20T12:00:00Z'],
    // Epoch day 20,715 (2026-09-19) is a multiple of 3; the bucket from 2026-11-21 holds `to`.
    [63 * D + 60, 259_200, 21, '2026-09-19T00:00:00Z'],
  ];

  it.each(GRANULARITY_CASES)('a range of %i s gets %i-second buckets (%i of them from %s)', async (length, width, count, first) => {
    const from = v2Time(ms(TO) - length * 1000);
    const slices = slicesOf(await metricData(`names[]=HttpDispatcher&from=${from}&to=${TO}`));
    expect(slices).toHaveLength(count);
    expect(slices[0]?.from).toBe(v2Time(ms(first)));
    slices.forEach((slice, k) => {
      expect(ms(slice.from)).toBe(ms(first) + k * width * 1000);
      expect(ms(slice.to) - ms(slice.from)).toBe(width * 1000);
      expect((ms(slice.from) / 1000) % width).toBe(0);
    });
    // Spot-check the values of the first and last buckets against the rows.
    for (const slice of [slices[0], slices.at(-1)] as Timeslice[]) expectSlice(slice, 'HttpDispatcher', ms(slice.from), ms(slice.to));
  });

  it('refuses more than 366 timeslices, but not when summarized', async () => {
    // 2026-11-21 is on the 3-day grid: exactly 366 buckets of 259200 s.
    const slices = slicesOf(await metricData('names[]=HttpDispatcher&from=2023-11-19T00:00:00Z&to=2026-11-21T00:00:00Z'));
    expect(slices).toHaveLength(366);
    expect(slices[0]?.from).toBe('2023-11-19T00:00:00+00:00');
    // A minute earlier reaches back into the bucket from 2023-11-16: 367.
    expect(await failure('names[]=HttpDispatcher&from=2023-11-18T23:59:00Z&to=2026-11-21T00:00:00Z')).toEqual([422, MetricTitles.tooManyTimeslices]);
    const summarized = slicesOf(await metricData('names[]=HttpDispatcher&from=2023-11-18T23:59:00Z&to=2026-11-21T00:00:00Z&summarize=true'));
    expect(only(summarized).from).toBe('2023-11-18T23:59:00+00:00');
  });

  it('answers ten points for an old start and a range of at most 4 days', async () => {
    const answer = await metricData('names[]=HttpDispatcher&from=2026-11-10T10:20:00Z&to=2026-11-11T10:20:00Z');
    expect(answer.from).toBe('2026-11-10T10:20:00+00:00');
    expect(answer.to).toBe('2026-11-11T10:20:00+00:00');
    const slices = slicesOf(answer);
    // Widened to 10:00 .. 11:00 next day: 25 h in ten buckets of 2.5 h.
    expect(slices).toHaveLength(10);
    const start = ms('2026-11-10T10:00:00Z');
    const width = 9000 * 1000;
    slices.forEach((slice, k) => expectSlice(slice, 'HttpDispatcher', start + k * width, start + (k + 1) * width));
    // The data there is hourly: rows at 10, 11, 12 fall in the first bucket, 13 and 14 in the second.
    const rows = rowsOf(APP, findMetric(APP, data, 'HttpDispatcher')!, start, start + 5 * HOUR_MS, FIXED);
    expect(rows.map((r) => r.durationMs)).toEqual([HOUR_MS, HOUR_MS, HOUR_MS, HOUR_MS, HOUR_MS]);
    expect(slices[0]?.values.call_count).toBe(rows[0]!.count + rows[1]!.count + rows[2]!.count);
    expect(slices[1]?.values.call_count).toBe(rows[3]!.count + rows[4]!.count);
  });

  it('ten points of six minutes over a short old range, most of them without a rollup', async () => {
    const slices = slicesOf(await metricData('names[]=HttpDispatcher&from=2026-11-10T10:20:00Z&to=2026-11-10T10:25:00Z'));
    expect(slices).toHaveLength(10);
    expect(slices.map((s) => ms(s.to) - ms(s.from))).toEqual(Array(10).fill(6 * MINUTE_MS));
    expect(slices[0]?.from).toBe('2026-11-10T10:00:00+00:00');
    expect(slices[9]?.to).toBe('2026-11-10T11:00:00+00:00');
    expect(slices[0]?.values.call_count).toBeGreaterThan(0);
    expect(slices.slice(1).every((s) => Object.values(s.values).every((v) => v === 0))).toBe(true);
  });

  it('ten-point mode only up to 4 days: longer old ranges are normal', async () => {
    const exactly = slicesOf(await metricData('names[]=HttpDispatcher&from=2026-11-01T00:00:00Z&to=2026-11-05T00:00:00Z'));
    expect(exactly).toHaveLength(10);
    expect(ms(exactly[0]!.to) - ms(exactly[0]!.from)).toBe(34_560_000); // 96 h / 10
    const longer = slicesOf(await metricData('names[]=HttpDispatcher&from=2026-10-31T23:59:00Z&to=2026-11-05T00:00:00Z'));
    expect(longer).toHaveLength(97);
    expect(longer[0]?.from).toBe('2026-10-31T23:00:00+00:00');
    // A start just inside 8 days is not old.
    const recent = slicesOf(await metricData('names[]=HttpDispatcher&from=2026-11-14T12:01:00Z&to=2026-11-14T13:01:00Z'));
    expect(recent).toHaveLength(60);
  });

  it('applies period: 0 or empty is the default, multiples of 60 at least the granularity', async () => {
    const defaults = await metricData('names[]=HttpDispatcher');
    expect(await metricData('names[]=HttpDispatcher&period=0')).toEqual(defaults);
    expect(await metricData('names[]=HttpDispatcher&period=')).toEqual(defaults);
    expect(await metricData('names[]=HttpDispatcher&period=60')).toEqual(defaults);

    const five = slicesOf(await metricData('names[]=HttpDispatcher&period=300'));
    expect(five).toHaveLength(6);
    const start = ms('2026-11-22T11:30:00Z');
    five.forEach((slice, k) => expectSlice(slice, 'HttpDispatcher', start + k * 5 * MINUTE_MS, start + (k + 1) * 5 * MINUTE_MS));
    // A period longer than the range: the one bucket holding `from`.
    expectSlice(only(slicesOf(await metricData('names[]=HttpDispatcher&period=3600'))), 'HttpDispatcher', ms('2026-11-22T11:00:00Z'), ms('2026-11-22T12:00:00Z'));

    for (const bad of ['90', '61', 'abc', '-60', '60.0', '1e3', '1234567890120'])
      expect(await failure(`names[]=HttpDispatcher&period=${bad}`), bad).toEqual([422, MetricTitles.periodNotMinutes]);
    expect(await failure('names[]=HttpDispatcher&period=60&from=2026-11-22T05:59:00Z&to=2026-11-22T12:00:00Z')).toEqual([
      422,
      'Invalid parameter period: the smallest period for this time range is 300 seconds',
    ]);
  });

  it('a period in ten-point territory must reach the ten-point width and then buckets normally', async () => {
    const range = 'from=2026-11-10T10:20:00Z&to=2026-11-11T10:20:00Z';
    expect(await failure(`names[]=HttpDispatcher&${range}&period=3600`)).toEqual([422, MetricTitles.periodTooSmall(9000)]);
    const slices = slicesOf(await metricData(`names[]=HttpDispatcher&${range}&period=9000`));
    // On the 9000-second epoch grid: 09:30 .. 08:00 next day.
    expect(slices).toHaveLength(9);
    expect(slices[0]?.from).toBe('2026-11-10T09:30:00+00:00');
    expect(slices[8]?.to).toBe('2026-11-11T08:00:00+00:00');
    expectSlice(slices[0]!, 'HttpDispatcher', ms('2026-11-10T09:30:00Z'), ms('2026-11-10T12:00:00Z'));
  });

  it('summarizes [floor_minute(from), floor_minute(to)) into one timeslice ending a second early', async () => {
    const answer = await metricData('names[]=HttpDispatcher&names[]=Apdex&from=2026-11-22T10:00:30Z&to=2026-11-22T11:30:45Z&summarize=true');
    expect(answer.from).toBe('2026-11-22T10:00:30+00:00');
    expect(answer.to).toBe('2026-11-22T11:30:45+00:00');
    const [S, E] = [ms('2026-11-22T10:00:00Z'), ms('2026-11-22T11:30:00Z')];
    for (const [name, kind] of [['HttpDispatcher', 'call'], ['Apdex', 'apdex']] as const) {
      const slice = only(slicesOf(answer, name));
      expect(slice.from).toBe('2026-11-22T10:00:00+00:00');
      expect(slice.to).toBe('2026-11-22T11:29:59+00:00');
      expectValues(slice.values, EXPECTED_VALUES[kind]!(expectedSums(name, S, E)));
    }
    // period is validated but has no effect.
    expect(await metricData('names[]=HttpDispatcher&names[]=Apdex&from=2026-11-22T10:00:30Z&to=2026-11-22T11:30:45Z&summarize=true&period=600')).toEqual(answer);
    expect(await failure('names[]=HttpDispatcher&from=2026-11-22T05:00:30Z&to=2026-11-22T11:30:45Z&summarize=true&period=120')).toEqual([
      422,
      MetricTitles.periodTooSmall(300),
    ]);
  });

  it('needs at least 60 seconds', async () => {
    expect(await failure('names[]=HttpDispatcher&from=2026-11-22T11:00:00Z&to=2026-11-22T11:00:59Z')).toEqual([422, MetricTitles.timeRangeTooShort]);
    expect(await failure('names[]=HttpDispatcher&from=2026-11-22T11:00:00Z&to=2026-11-22T10:00:00Z')).toEqual([422, MetricTitles.timeRangeTooShort]);
    expect(await failure('names[]=HttpDispatcher&from=2026-11-22T12:30:00Z')).toEqual([422, MetricTitles.timeRangeTooShort]);
    const slice = only(slicesOf(await metricData('names[]=HttpDispatcher&from=2026-11-22T11:00:30Z&to=2026-11-22T11:01:30Z')));
    expectSlice(slice, 'HttpDispatcher', ms('2026-11-22T11:00:00Z'), ms('2026-11-22T11:01:00Z'));
    const summarized = only(slicesOf(await metricData('names[]=HttpDispatcher&from=2026-11-22T11:00:30Z&to=2026-11-22T11:01:30Z&summarize=1')));
    expect([summarized.from, summarized.to]).toEqual(['2026-11-22T11:00:00+00:00', '2026-11-22T11:00:59+00:00']);
  });

  it('defaults from to 30 minutes before an explicit to, and to to now', async () => {
    const before = await metricData('names[]=HttpDispatcher&to=2026-11-22T10:00:00Z');
    expect([before.from, before.to]).toEqual(['2026-11-22T09:30:00+00:00', '2026-11-22T10:00:00+00:00']);
    const since = await metricData('names[]=HttpDispatcher&from=2026-11-22T11:00:00Z');
    expect([since.from, since.to]).toEqual(['2026-11-22T11:00:00+00:00', '2026-11-22T12:00:30+00:00']);
    expect(slicesOf(since)).toHaveLength(60);
  });

  it('answers a one-year range in 3-day buckets over 5 names quickly', async () => {
    const names = ['HttpDispatcher', 'Apdex', 'EndUser', 'CPU/User Time', 'Errors/all'].map((n) => `names[]=${encodeURIComponent(n)}`).join('&');
    const started = performance.now();
    const answer = await metricData(`${names}&from=2025-11-22T12:00:00Z&to=2026-11-22T12:00:00Z&period=259200`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(answer.metrics).toHaveLength(5);
    expect(answer.metrics.every((m) => m.timeslices.length === 122)).toBe(true);
  });
});

describe('legacy metric data: timestamps', () => {
  const TO = 'to=2026-11-22T11:00:00Z';
  const ACCEPTED: Array<[string, string]> = [
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22t10:00:00z', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T10:00:00+00:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T12:00:00+02:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T06:30:00-0330', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T15:00:00+05', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T12:00:00 02:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22 12:00:00 0200', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T10:00:00.999Z', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T10:00:00.123456+00:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T10:00:59.5', '2026-11-22T10:00:59+00:00'],
    ['2026-11-22 10:00:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22T10:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22 10:00 00:00', '2026-11-22T10:00:00+00:00'],
    ['2026-11-22', '2026-11-22T00:00:00+00:00'],
    ['2026-11-23T00:30:00+01:00', '2026-11-22T23:30:00+00:00'],
  ];

  it.each(ACCEPTED)('accepts from=%s', async (text, echoed) => {
    const to = text === '2026-11-23T00:30:00+01:00' ? 'to=2026-11-23T00:00:00Z' : TO;
    expect((await metricData(`names[]=HttpDispatcher&from=${encodeURIComponent(text)}&${to}`)).from).toBe(echoed);
  });

  it('reads an unencoded + in an offset as the space it arrives as', async () => {
    const answer = await metricData('names[]=HttpDispatcher&from=2026-11-22T12:00:00+02:00&to=2026-11-22T13:00:00+02:00');
    expect([answer.from, answer.to]).toEqual(['2026-11-22T10:00:00+00:00', '2026-11-22T11:00:00+00:00']);
  });

  it('accepts leap days, and refuses the Go zero time as before 1970', async () => {
    expect((await metricData('names[]=HttpDispatcher&to=2024-02-29T12:00:00Z')).to).toBe('2024-02-29T12:00:00+00:00');
    const zero = await sandbox.app.request(`/v2/applications/${APP.id}/metrics/data.json?names[]=HttpDispatcher&from=0001-01-01T00:00:00Z&summarize=true`, { headers: DEMO });
    expect([zero.status, await zero.json()]).toEqual([422, { error: { title: 'Invalid parameter from: times before 1970-01-01T00:00:00Z are not accepted' } }]);
  });

  const REFUSED = [
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2025-02-29',
    '2026-11-00',
    '2026-11-22T25:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:00:60Z',
    '2026-11-22T10:00:00+2',
    '2026-11-22T10:00:00+24:00',
    '2026-11-22T10:00:00+02:60',
    '2026-11-22T10:00:00 02',
    '2026-11-22T10:00:00.Z',
    '2026-11-22T10',
    '2026-11-22T',
    '2026-11-22Z',
    '0000-01-01T00:00:00Z',
    '26-11-22',
    '2026/11/22',
    '20261122T100000Z',
    ' 2026-11-22',
    '2026-11-22T10:00:00Z ',
    'yesterday',
    '1763805600',
  ];

  it.each(REFUSED)('refuses %j', async (text) => {
    expect(await failure(`names[]=HttpDispatcher&from=${encodeURIComponent(text)}`)).toEqual([422, MetricTitles.badTime('from')]);
    expect(await failure(`names[]=HttpDispatcher&to=${encodeURIComponent(text)}`)).toEqual([422, MetricTitles.badTime('to')]);
  });

  it('treats an empty from or to as absent', async () => {
    expect(await metricData('names[]=HttpDispatcher&from=&to=')).toEqual(await metricData('names[]=HttpDispatcher'));
  });
});

describe('legacy metric data: parameters', () => {
  const SPELLINGS = [
    'names[]=HttpDispatcher&names[]=Apdex',
    'names=HttpDispatcher&names=Apdex',
    'names[0]=HttpDispatcher&names[1]=Apdex',
    'names%5B%5D=HttpDispatcher&names%5B%5D=Apdex',
    'names%5B0%5D=HttpDispatcher&names%5B1%5D=Apdex',
    'names[]=HttpDispatcher&names=Apdex',
    'names[]=HttpDispatcher&names[]=&names[]=Apdex&names[]=HttpDispatcher',
  ];

  it.each(SPELLINGS)('reads names from %s', async (query) => {
    const answer = await metricData(`${query}&summarize=true`);
    expect(answer.metrics_found).toEqual(['HttpDispatcher', 'Apdex']);
    expect(answer.metrics.map((m) => m.name)).toEqual(['HttpDispatcher', 'Apdex']);
  });

  it('decodes + as a space and percent-encoded slashes in names', async () => {
    const answer = await metricData('names[]=WebTransaction/SpringController/foo+(GET)&names[]=CPU%2FUser+Time&names[]=WebTransaction/Uri/api/items[id]&summarize=true');
    expect(answer.metrics_found).toEqual(['WebTransaction/SpringController/foo (GET)', 'CPU/User Time', 'WebTransaction/Uri/api/items[id]']);
    const quoted = await metricData(`names[]=${encodeURIComponent(`Custom/O'Brien "quoted" \\ job`)}&names[]=${encodeURIComponent('WebTransaction/Expressjs/GET//users/{id:[\\w_\\-]}')}`);
    expect(quoted.metrics_not_found).toEqual([]);
  });

  it('requires 1 to 100 distinct names', async () => {
    expect(await failure('')).toEqual([422, MetricTitles.namesRequired]);
    expect(await failure('names[]=')).toEqual([422, MetricTitles.namesRequired]);
    expect(await failure('values[]=call_count')).toEqual([422, MetricTitles.namesRequired]);
    const names = (n: number): string => Array.from({ length: n }, (_, i) => `names[]=Custom/n${i}`).join('&');
    const hundred = await metricData(names(100));
    expect(hundred.metrics_not_found).toHaveLength(100);
    expect(hundred.metrics).toEqual([]);
    expect(await failure(names(101))).toEqual([422, MetricTitles.tooManyNames]);
    expect((await metricData(`${names(100)}&names[]=Custom/n0`)).metrics_not_found).toHaveLength(100);
  });

  it('takes the last of a single-valued parameter', async () => {
    const answer = await metricData('names[]=HttpDispatcher&from=2026-11-22T09:00:00Z&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z&summarize=true&summarize=false');
    expect(answer.from).toBe('2026-11-22T10:00:00+00:00');
    expect(slicesOf(answer)).toHaveLength(60);
  });

  it('reads summarize and raw as flags', async () => {
    for (const yes of ['true', '1', 'yes', 'on', 't', 'TRUE', ' True ']) {
      expect(slicesOf(await metricData(`names[]=HttpDispatcher&summarize=${encodeURIComponent(yes)}`)), yes).toHaveLength(1);
    }
    for (const no of ['false', '0', 'no', 'off', 'f', '', 'F']) {
      expect(slicesOf(await metricData(`names[]=HttpDispatcher&summarize=${no}`)), no).toHaveLength(30);
    }
    expect(await failure('names[]=HttpDispatcher&summarize=maybe')).toEqual([422, 'Invalid parameter summarize: expected true or false']);
    // raw is validated and changes nothing.
    expect(await metricData('names[]=HttpDispatcher&raw=true')).toEqual(await metricData('names[]=HttpDispatcher'));
    expect(await failure('names[]=HttpDispatcher&raw=2')).toEqual([422, 'Invalid parameter raw: expected true or false']);
  });

  it('filters values in request order; a value the metric lacks gives {}', async () => {
    const answer = await metricData(
      'names[]=HttpDispatcher&names[]=Apdex&values[]=score&values[]=call_count&values[]=&values[]=average_response_time&values[]=call_count&summarize=true',
    );
    expect(only(slicesOf(answer, 'HttpDispatcher')).values).toEqual({
      call_count: expect.any(Number),
      average_response_time: expect.any(Number),
    });
    expect(Object.keys(only(slicesOf(answer, 'HttpDispatcher')).values)).toEqual(['call_count', 'average_response_time']);
    expect(Object.keys(only(slicesOf(answer, 'Apdex')).values)).toEqual(['score']);
    const lacking = await metricData('names[]=HttpDispatcher&values[]=error_count&values[]=score&summarize=true');
    expect(only(slicesOf(lacking)).values).toEqual({});
    // average_call_time is not listed for call metrics, but computed when asked for by name.
    const extra = await metricData('names[]=HttpDispatcher&values[]=average_call_time&summarize=true');
    expect(Object.keys(only(slicesOf(extra)).values)).toEqual(['average_call_time']);
    for (const spelling of ['values=call_count', 'values[0]=call_count', 'values%5B%5D=call_count']) {
      expect(Object.keys(only(slicesOf(await metricData(`names[]=HttpDispatcher&${spelling}&summarize=true`))).values)).toEqual(['call_count']);
    }
    // Only empty values[]: as if absent.
    expect(Object.keys(only(slicesOf(await metricData('names[]=Errors/all&values[]=&summarize=true'), 'Errors/all')).values)).toEqual([
      'error_count',
      'errors_per_minute',
    ]);
  });

  it('reads a form body on GET (over real HTTP) after the query string', async () => {
    const server = await serveOnLoopback(sandbox.app.fetch);
    try {
      const response = await httpSend(`${server.url}${dataPath('names[]=HttpDispatcher&from=2026-11-22T09:00:00Z')}`, {
        headers: { ...DEMO, ...FORM },
        body: 'names%5B%5D=Apdex&names[]=HttpDispatcher&from=2026-11-22T10:00:00+00:00&to=2026-11-22T11:00:00Z&summarize=true&values[]=call_count&values[]=score',
      });
      expect(response.status).toBe(200);
      const answer = ((await response.json()) as { metric_data: MetricData }).metric_data;
      expect(answer.metrics_found).toEqual(['HttpDispatcher', 'Apdex']);
      expect(answer.from).toBe('2026-11-22T10:00:00+00:00');
      expect(only(slicesOf(answer)).values).toEqual({ call_count: expectedSums('HttpDispatcher', ms('2026-11-22T10:00:00Z'), ms('2026-11-22T11:00:00Z')).C });
      expect(Object.keys(only(slicesOf(answer, 'Apdex')).values)).toEqual(['score']);
    } finally {
      await server.close();
    }
  });

  it('reads a form body on POST, and the query string alone when there is no form', async () => {
    const post = (body: string, headers: Record<string, string> = FORM, query = ''): Promise<Response> =>
      Promise.resolve(sandbox.app.request(dataPath(query), { method: 'POST', headers: { ...DEMO, ...headers }, body }));
    const form = await post('names[]=HttpDispatcher&names[]=Errors%2Fall&period=60&summarize=yes');
    expect(form.status).toBe(200);
    const answer = ((await form.json()) as { metric_data: MetricData }).metric_data;
    expect(answer.metrics_found).toEqual(['HttpDispatcher', 'Errors/all']);
    expect(await post('names[]=Apdex', FORM, 'names[]=HttpDispatcher').then((r) => r.json())).toMatchObject({
      metric_data: { metrics_found: ['HttpDispatcher', 'Apdex'] },
    });
    const notForm = await post('names[]=Apdex', { 'content-type': 'application/json' }, 'names[]=HttpDispatcher');
    expect(((await notForm.json()) as { metric_data: MetricData }).metric_data.metrics_found).toEqual(['HttpDispatcher']);
    expect((await post('names[]=', FORM)).status).toBe(422);
  });
});

describe('legacy metric data: found names and values', () => {
  it('lists unknown names as not found, in request order, with no metrics entry', async () => {
    const control = 'HttpDispatcher\u0001';
    const long = `Custom/${'x'.repeat(1025)}`;
    const answer = await metricData(
      ['Nope/b', 'HttpDispatcher', 'httpdispatcher', control, 'Apdex', long, 'Nope/a'].map((n) => `names[]=${encodeURIComponent(n)}`).join('&'),
    );
    expect(answer.metrics_found).toEqual(['HttpDispatcher', 'Apdex']);
    expect(answer.metrics_not_found).toEqual(['Nope/b', 'httpdispatcher', control, long, 'Nope/a']);
    expect(answer.metrics.map((m) => m.name)).toEqual(['HttpDispatcher', 'Apdex']);
  });

  it('finds retired and archived names (every value 0 recently) and the recent one', async () => {
    const { retired, archived, recent } = LIFECYCLE_NAMES;
    const answer = await metricData([retired, archived, recent].map((n) => `names[]=${encodeURIComponent(n)}`).join('&'));
    expect(answer.metrics_found).toEqual([retired, archived, recent]);
    for (const name of [retired, archived]) {
      const slices = slicesOf(answer, name);
      expect(slices).toHaveLength(30);
      expect(slices.every((s) => Object.keys(s.values).length === 10 && Object.values(s.values).every((v) => v === 0))).toBe(true);
    }
    expect(slicesOf(answer, recent).every((s) => s.values.call_count! > 0)).toBe(true);
    // Before it was retired, the retired metric had data.
    const earlier = await metricData(`names[]=${encodeURIComponent(retired)}&from=2026-11-19T10:00:00Z&to=2026-11-19T11:00:00Z&summarize=true`);
    expect(only(slicesOf(earlier, retired)).values.call_count).toBe(expectedSums(retired, ms('2026-11-19T10:00:00Z'), ms('2026-11-19T11:00:00Z')).C);
    expect(only(slicesOf(earlier, retired)).values.call_count).toBeGreaterThan(0);
  });

  it('does not know a metric before it started reporting', async () => {
    let clock = FIXED;
    const travelling = createSandbox({ seed: 7, apmApps: 20, now: () => clock });
    clock = FIXED - 2 * DAY_MS;
    const app = travelling.data.apps.find((a) => a.id === APP.id) as SandboxApp;
    const response = await travelling.app.request(`/v2/applications/${app.id}/metrics/data.json?names[]=${encodeURIComponent(LIFECYCLE_NAMES.recent)}&names[]=Apdex`, {
      headers: DEMO,
    });
    const answer = ((await response.json()) as { metric_data: MetricData }).metric_data;
    expect(answer.metrics_not_found).toEqual([LIFECYCLE_NAMES.recent]);
    expect(answer.metrics_found).toEqual(['Apdex']);
    const names = (await (await travelling.app.request(`/v2/applications/${app.id}/metrics.json`, { headers: DEMO })).json()) as { metrics: Array<{ name: string }> };
    expect(names.metrics.map((m) => m.name)).not.toContain(LIFECYCLE_NAMES.recent);
    expect(names.metrics.map((m) => m.name)).toContain(LIFECYCLE_NAMES.retired);
  });

  // Every kind of metric, summarized over an hour and in 5-minute buckets, by the formula table.
  const KINDS: Array<[string, string]> = [
    ['HttpDispatcher', 'call'],
    ['Apdex', 'apdex'],
    ['EndUser/Apdex', 'apdex'],
    ['EndUser', 'end-user'],
    ['EndUser/RB', 'end-user-rb'],
    ['Errors/all', 'errors'],
    ['Memory/Physical', 'memory'],
    ['CPU/User Time', 'cpu-time'],
    ['CPU/User/Utilization', 'cpu-utilization'],
    ['GC/System/Pauses', 'gc'],
    ['External/api.example.com/all', 'call'],
  ];

  it.each(KINDS)('computes %s (%s) by the formula table', async (name, kind) => {
    expect(findMetric(APP, data, name)?.kind).toBe(kind);
    const [S, E] = [ms('2026-11-22T10:00:00Z'), ms('2026-11-22T11:00:00Z')];
    const summarized = await metricData(`names[]=${encodeURIComponent(name)}&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z&summarize=true`);
    expectValues(only(slicesOf(summarized, name)).values, EXPECTED_VALUES[kind]!(expectedSums(name, S, E)));
    const buckets = slicesOf(await metricData(`names[]=${encodeURIComponent(name)}&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z&period=300`), name);
    expect(buckets).toHaveLength(12);
    buckets.forEach((slice, k) => expectSlice(slice, name, S + k * 5 * MINUTE_MS, S + (k + 1) * 5 * MINUTE_MS, kind));
  });

  it('apdex: score from satisfied and tolerating, thresholds from the rows', async () => {
    const e = expectedSums('Apdex', ms('2026-11-22T10:00:00Z'), ms('2026-11-22T11:00:00Z'));
    const values = only(slicesOf(await metricData('names[]=Apdex&from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z&summarize=true'), 'Apdex')).values;
    expect(values.count).toBe(e.C + e.T + e.X);
    expect(values.score).toBeCloseTo((e.C + e.T / 2) / (e.C + e.T + e.X), 12);
    expect(values.score).toBeGreaterThan(0.5);
    expect(values.score).toBeLessThanOrEqual(1);
    expect([values.threshold, values.threshold_min]).toEqual([APP.apdexTarget, APP.apdexTarget]);
  });

  it('CPU/User Time: percent of the wall time, CPU/User/Utilization: percent per call', async () => {
    const [S, E] = [ms('2026-11-22T10:00:00Z'), ms('2026-11-22T11:00:00Z')];
    const range = 'from=2026-11-22T10:00:00Z&to=2026-11-22T11:00:00Z&summarize=true';
    const time = only(slicesOf(await metricData(`names[]=CPU/User+Time&${range}`), 'CPU/User Time')).values;
    const t = expectedSums('CPU/User Time', S, E);
    expect(time.percent).toBeCloseTo((100 * t.T) / 3600, 9);
    expect(time.total_time).toBeCloseTo(1000 * t.T, 6);
    const utilization = only(slicesOf(await metricData(`names[]=CPU/User/Utilization&${range}`), 'CPU/User/Utilization')).values;
    const u = expectedSums('CPU/User/Utilization', S, E);
    expect(utilization.percent).toBeCloseTo((100 * u.T) / u.C, 9);
  });
});

describe('legacy metric data: answer format', () => {
  it('writes XML', async () => {
    const response = await get(dataPath('names[]=HttpDispatcher&names[]=Nope&values[]=call_count', APP, 'xml'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const xml = await response.text();
    expect(xml).toContain('<response><metric_data><from>2026-11-22T11:30:30+00:00</from><to>2026-11-22T12:00:30+00:00</to>');
    expect(xml).toContain('<metrics_not_found type="array"><metrics_not_found>Nope</metrics_not_found></metrics_not_found>');
    expect(xml).toContain('<metrics_found type="array"><metrics_found>HttpDispatcher</metrics_found></metrics_found>');
    expect(xml.match(/<timeslice>/g)).toHaveLength(30);
    const first = rowsOf(APP, findMetric(APP, data, 'HttpDispatcher')!, ms('2026-11-22T11:30:00Z'), ms('2026-11-22T11:31:00Z'), FIXED)[0]!;
    expect(xml).toContain(
      `<timeslice><from>2026-11-22T11:30:00+00:00</from><to>2026-11-22T11:31:00+00:00</to><values><call_count type="integer">${first.count}</call_count></values></timeslice>`,
    );
    const error = await get(dataPath('names[]=HttpDispatcher&period=7', APP, 'xml'));
    expect(error.status).toBe(422);
    expect(await error.text()).toContain(`<title>${MetricTitles.periodNotMinutes}</title>`);
  });

  it('sends an ETag and Cache-Control, and 304 for a matching If-None-Match', async () => {
    const path = dataPath('names[]=HttpDispatcher');
    const first = await get(path);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect((await get(path)).headers.get('etag')).toBe(etag);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await get(path, { 'if-none-match': header });
      expect(cached.status, header).toBe(304);
      expect(await cached.text()).toBe('');
      expect(cached.headers.get('etag')).toBe(etag);
    }
    expect((await get(path, { 'if-none-match': '"other"' })).status).toBe(200);
    const others = [dataPath('names[]=HttpDispatcher&values[]=call_count'), dataPath('names[]=HttpDispatcher', APP, 'xml')];
    for (const other of others) expect((await get(other)).headers.get('etag')).not.toBe(etag);
    expect((await get(dataPath('period=7'))).headers.get('etag')).toBeNull();
  });

  it('answers 404 for unknown, malformed and foreign application ids', async () => {
    for (const id of ['999', 'abc', '0', '-1', String(FOREIGN.id)]) {
      for (const path of [`/v2/applications/${id}/metrics/data.json?names[]=HttpDispatcher`, `/v2/applications/${id}/metrics.json`]) {
        const response = await get(path);
        expect(response.status, path).toBe(404);
        expect(await response.json()).toEqual({ error: { title: EntityTitles.applicationNotFound } });
      }
    }
    const foreign = await sandbox.app.request(dataPath('names[]=HttpDispatcher', FOREIGN), { headers: SECONDARY });
    expect(foreign.status).toBe(200);
    expect((await get(`/v2/applications/${APP.id}/metrics/data.csv?names[]=HttpDispatcher`)).status).toBe(404);
    expect((await sandbox.app.request(dataPath('names[]=HttpDispatcher'))).status).toBe(401);
  });

  it('answers 405 for other methods, allowing GET and POST on data', async () => {
    const data405 = await sandbox.app.request(dataPath('names[]=HttpDispatcher'), { method: 'PUT', headers: DEMO });
    expect(data405.status).toBe(405);
    expect(data405.headers.get('allow')).toBe('GET, POST');
    // A JSON POST (a form or bodiless one is served as the GET).
    const names405 = await sandbox.app.request(`/v2/applications/${APP.id}/metrics.json`, { method: 'POST', headers: { ...DEMO, 'content-type': 'application/json' }, body: '{}' });
    expect(names405.status).toBe(405);
    expect(names405.headers.get('allow')).toBe('GET');
    const show405 = await sandbox.app.request(`/v2/applications/${APP.id}.json`, { method: 'PATCH', headers: DEMO });
    expect(show405.headers.get('allow')).toBe('GET, PUT, DELETE');
  });
});

describe('legacy metric names', () => {
  interface Names {
    metrics: Array<{ name: string; values: string[] }>;
  }
  const namesPath = (query = '', app: SandboxApp = APP, format = 'json'): string => `/v2/applications/${app.id}/metrics.${format}${query}`;
  const names = async (query = '', app: SandboxApp = APP): Promise<[Names, string | null]> => {
    const response = await get(namesPath(query, app));
    expect(response.status).toBe(200);
    return [(await response.json()) as Names, response.headers.get('link')];
  };
  const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

  it('lists every metric ever known, sorted by UTF-16 code units, with its values', async () => {
    const [body, link] = await names();
    const expected = metricsOf(APP, data)
      .map((m) => m.name)
      .sort(codeUnitOrder);
    expect(body.metrics.map((m) => m.name)).toEqual(expected);
    expect(link).toBeNull();
    const listed = body.metrics.map((m) => m.name);
    expect(listed.indexOf('Agent/MetricsReported/count')).toBeLessThan(listed.indexOf('Apdex'));
    expect(listed.indexOf('CPU/User Time')).toBeLessThan(listed.indexOf('CPU/User/Utilization'));
    expect(listed).toContain(LIFECYCLE_NAMES.archived);
    for (const metric of body.metrics) expect(metric.values).toEqual([...findMetric(APP, data, metric.name)!.values]);
    expect(body.metrics.find((m) => m.name === 'Errors/all')?.values).toEqual(['error_count', 'errors_per_minute']);
  });

  it('filters by a case-sensitive substring of the name', async () => {
    const apdexNames = metricsOf(APP, data).map((m) => m.name).filter((name) => name.includes('Apdex')).sort(codeUnitOrder);
    expect(apdexNames).toEqual(expect.arrayContaining(['Apdex', 'Apdex/Uri/checkout', 'EndUser/Apdex']));
    expect((await names('?name=Apdex'))[0].metrics.map((m) => m.name)).toEqual(apdexNames);
    expect((await names('?name=apdex'))[0].metrics).toEqual([]);
    expect((await names('?name=%5Bid%5D'))[0].metrics.map((m) => m.name)).toEqual(['WebTransaction/Uri/api/items[id]']);
    expect((await names('?name=foo+(GET)'))[0].metrics.map((m) => m.name)).toEqual(['WebTransaction/SpringController/foo (GET)']);
    expect((await names('?name='))[0].metrics).toHaveLength(metricsOf(APP, data).length);
  });

  it('pages the bulk app 1000 names at a time with v2 Link headers', async () => {
    const all = metricsOf(BULK, data).map((m) => m.name).sort(codeUnitOrder);
    expect(all.length).toBeGreaterThan(2345);
    expect(all.length).toBeLessThanOrEqual(3000);
    const base = `http://localhost/v2/applications/${BULK.id}/metrics.json`;
    const [one, link1] = await names('', BULK);
    expect(one.metrics.map((m) => m.name)).toEqual(all.slice(0, 1000));
    expect(link1).toBe(`<${base}?page=2>; rel="next", <${base}?page=3>; rel="last"`);
    const [two, link2] = await names('?page=2', BULK);
    expect(two.metrics.map((m) => m.name)).toEqual(all.slice(1000, 2000));
    expect(link2).toBe(`<${base}?page=1>; rel="first", <${base}?page=1>; rel="prev", <${base}?page=3>; rel="next", <${base}?page=3>; rel="last"`);
    const [three, link3] = await names('?page=3', BULK);
    expect(three.metrics.map((m) => m.name)).toEqual(all.slice(2000));
    expect(link3).toBe(`<${base}?page=1>; rel="first", <${base}?page=2>; rel="prev"`);
    const [four, link4] = await names('?page=4', BULK);
    expect(four.metrics).toEqual([]);
    expect(link4).toBe(`<${base}?page=1>; rel="first", <${base}?page=3>; rel="prev"`);
  });

  it('keeps the name filter in Link URLs', async () => {
    const [body, link] = await names('?name=Bulk/job-1', BULK);
    // Numbers are padded to 4 digits: exactly job-1000 .. job-1999, one full page.
    expect(body.metrics).toHaveLength(1000);
    expect(link).toBeNull();
    const [bulk, bulkLink] = await names('?name=Bulk&page=2', BULK);
    expect(bulk.metrics).toHaveLength(1000);
    const base = `http://localhost/v2/applications/${BULK.id}/metrics.json?name=Bulk`;
    expect(bulkLink).toBe(`<${base}&page=1>; rel="first", <${base}&page=1>; rel="prev", <${base}&page=3>; rel="next", <${base}&page=3>; rel="last"`);
  });

  it('validates page as the applications list does', async () => {
    for (const page of ['0', 'abc', '1000001', '-1', '1.5']) {
      const response = await get(namesPath(`?page=${page}`, BULK));
      expect(response.status, page).toBe(422);
      expect(await response.json()).toEqual({ error: { title: 'Invalid parameter page: expected a whole number from 1 to 1000000' } });
    }
  });

  it('writes XML', async () => {
    const response = await get(namesPath('?name=Errors', APP, 'xml'));
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(await response.text()).toContain(
      '<metrics type="array"><metric><name>Errors/all</name><values type="array"><value>error_count</value><value>errors_per_minute</value></values></metric></metrics>',
    );
  });
});

describe('legacy metric data over real HTTP', () => {
  let server: Awaited<ReturnType<typeof serveOnLoopback>>;
  beforeAll(async () => {
    server = await serveOnLoopback(sandbox.app.fetch);
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await httpSend(`${server.url}${dataPath('names[]=HttpDispatcher')}`, { method: 'HEAD', headers: DEMO });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toMatch(/^"/);
  });
});
