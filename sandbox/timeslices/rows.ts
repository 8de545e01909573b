/**
 * The rows of a metric (kinds.ts), never stored: each is a pure function of (owner, metric,
 * start), a stateless hash, so any range costs only the rows it touches. Rows younger than
 * ROLLUP_AGE_MS are per minute, older ones hourly rollups (NRDB's retention); rows exist only
 * for completed minutes.
 */
import { HOUR_MS, MINUTE_MS, ROLLUP_AGE_MS, ceilTo, floorTo, isMobileOwner, type MetricOwner, type SandboxMetric, type TimesliceRow } from './kinds.ts';

/** Start of the hourly-rollup region: rows before it are hourly, rows from it on per minute. */
export function rollupBoundary(now: number): number {
  return floorTo(now - ROLLUP_AGE_MS, HOUR_MS);
}

/**
 * Start times (and durations) of the metric's rows that start in [since, until), oldest first.
 * Rows exist only for completed minutes: nothing starts at or after the current minute.
 */
export function* rowStarts(metric: SandboxMetric, since: number, until: number, now: number): Generator<[number, number]> {
  const from = Math.max(since, metric.since);
  const to = Math.min(until, metric.until, floorTo(now, MINUTE_MS));
  if (from >= to) return;
  const boundary = rollupBoundary(now);
  for (let start = ceilTo(from, HOUR_MS); start < Math.min(to, boundary); start += HOUR_MS) {
    if ((start / HOUR_MS) % metric.every === 0) yield [start, HOUR_MS];
  }
  for (let start = ceilTo(Math.max(from, boundary), MINUTE_MS); start < to; start += MINUTE_MS) {
    if ((start / MINUTE_MS) % metric.every === 0) yield [start, MINUTE_MS];
  }
}

/** Does the metric have at least one row starting in [since, until)? (Cheap: stops at the first.) */
export function hasRows(metric: SandboxMetric, since: number, until: number, now: number): boolean {
  return !rowStarts(metric, since, until, now).next().done;
}

/** The metric's rows starting in [since, until), oldest first. */
export function rowsOf(app: MetricOwner, metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[] {
  const rows: TimesliceRow[] = [];
  for (const [start, durationMs] of rowStarts(metric, since, until, now)) rows.push(rowAt(app, metric, start, durationMs));
  return rows;
}

/** Uniform numbers in [0, 1) from (metric, slice, draw): a stateless hash, so rows are random-access. */
function uniform(seed: number, slice: number, draw: number): number {
  let h = Math.imul(seed ^ Math.imul(slice | 0, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(draw + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** One row of one metric. Hourly rollups carry an hour's worth of counts and totals. */
export function rowAt(owner: MetricOwner, metric: SandboxMetric, start: number, durationMs: number): TimesliceRow {
  const minutes = durationMs / MINUTE_MS;
  const slice = Math.floor(start / MINUTE_MS);
  const u = (draw: number): number => uniform(metric.seed, slice, draw);
  const app = isMobileOwner(owner) ? null : owner;
  const hosts = app?.hosts.length ?? 0;
  const row = (count: number, total: number, totalExclusive: number, min: number, max: number, sumOfSquares: number): TimesliceRow => ({
    start,
    durationMs,
    count,
    total,
    totalExclusive,
    min,
    max,
    sumOfSquares,
  });
  switch (metric.kind) {
    case 'call':
    case 'gc': {
      const rate = metric.kind === 'gc' ? 20 + (metric.seed % 80) : 1 + (metric.seed % 400);
      const count = Math.max(1, Math.round(rate * minutes * (0.5 + u(0))));
      const mean = (metric.kind === 'gc' ? 0.0005 : 0.005 + (metric.seed % 900) / 1000) * (0.5 + u(1));
      const total = count * mean;
      return row(count, total, total * (0.3 + 0.6 * u(2)), mean * (0.1 + 0.4 * u(3)), mean * (1.5 + 3 * u(4)), count * mean * mean * (1 + 0.5 * u(5)));
    }
    case 'apdex': {
      const samples = Math.max(1, Math.round((10 + (metric.seed % 300)) * minutes * (0.5 + u(0))));
      const satisfied = Math.round(samples * (0.5 + 0.45 * u(1)));
      const tolerating = Math.round((samples - satisfied) * u(2));
      const threshold = metric.name === 'EndUser/Apdex' ? (app?.browser?.apdexTarget ?? 7) : (app?.apdexTarget ?? 0.5);
      return row(satisfied, tolerating, samples - satisfied - tolerating, threshold, threshold, 0);
    }
    case 'end-user': {
      const views = Math.max(1, Math.round((5 + (metric.seed % 200)) * minutes * (0.5 + u(0))));
      const load = 0.5 + 4 * u(1);
      const total = views * load;
      // The EndUser formulas read the application time from sumOfSquares (rest-v2.md §1.4).
      return row(views, total, total * (0.4 + 0.2 * u(2)), load * 0.2, load * (2 + u(3)), total * (0.1 + 0.2 * u(4)));
    }
    case 'end-user-rb': {
      const views = Math.max(1, Math.round((5 + (metric.seed % 200)) * minutes * (0.5 + u(0))));
      const dom = 0.2 + 2 * u(1);
      return row(views, views * dom, views * dom * 0.1 * u(2), dom * 0.3, dom * 3, views * dom * dom * 1.2);
    }
    case 'errors': {
      const count = Math.round((metric.seed % 30) * minutes * u(0));
      return row(count, 0, 0, 0, 0, 0);
    }
    case 'count': {
      // Sessions start at 25+ a minute; crashes stay under 3 a minute, so crash rate < 100 %.
      const count =
        metric.name === 'Mobile/Crash/All' ? Math.round((metric.seed % 4) * minutes * u(0))
        : Math.max(1, Math.round((50 + (metric.seed % 250)) * minutes * (0.5 + u(0))));
      return row(count, 0, 0, 0, 0, 0);
    }
    case 'memory': {
      const mb = 256 + (metric.seed % 3840) * (0.9 + 0.2 * u(0));
      const count = hosts * minutes;
      return row(count, count * mb, count * mb, mb * 0.9, mb * 1.1, count * mb * mb);
    }
    case 'cpu-time': {
      const utilisation = 0.05 + 0.85 * u(0);
      const count = hosts * minutes;
      const seconds = count * 60 * utilisation;
      return row(count, seconds, seconds, 60 * utilisation * 0.8, 60 * utilisation * 1.2, count * (60 * utilisation) ** 2);
    }
    case 'cpu-utilization': {
      const utilisation = 0.05 + 0.85 * u(0);
      const count = hosts * minutes;
      return row(count, count * utilisation, count * utilisation, utilisation * 0.8, utilisation * 1.2, count * utilisation ** 2);
    }
  }
}
