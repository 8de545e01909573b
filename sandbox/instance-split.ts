/**
 * Per-instance timeslices. Real agents report timeslices per agent instance and app-level
 * queries aggregate them; the sandbox goes the other way and splits each app row (timeslices.ts
 * stays the source of truth, so every app-level answer is unchanged): an instance's row is the
 * app row with count, total, totalExclusive and sumOfSquares times the instance's weight, min
 * and max unchanged (so an apdex row's threshold survives). The weights of an app's instances
 * are positive and sum to 1, so instance rows sum back to the app row.
 *
 * Every host of the app in the model takes part, whether or not it is "current"
 * (hosts.ts#currentHosts is about listings; past rows were reported by all of them).
 *
 * The NRQL engine and the legacy face both split rows through instanceRow, so they agree.
 */
import { fnv1a32 } from './ids.ts';
import type { SandboxApp, SandboxHost, SandboxInstance } from './model.ts';
import { rowAt, rowStarts, type SandboxMetric, type TimesliceRow } from './timeslices.ts';

/** One agent instance of an app, with its share of the app's rows. */
export interface InstanceShare {
  app: SandboxApp;
  host: SandboxHost;
  instance: SandboxInstance;
  /** In (0, 1]; the shares of one app sum to 1. */
  weight: number;
}

/**
 * Deterministic positive weights, one per id, summing to 1 (up to rounding). Each id draws a
 * raw weight in [1, 2) from its hash, so no instance's share is tiny or zero.
 */
export function instanceWeights(ids: readonly number[]): number[] {
  const raw = ids.map((id) => 1 + (fnv1a32(`instance|${id}`) % 1024) / 1024);
  const total = raw.reduce((sum, value) => sum + value, 0);
  return raw.map((value) => value / total);
}

const sharesByApp = new WeakMap<SandboxApp, { hosts: SandboxHost[]; shares: InstanceShare[] }>();

/** The app's instances (over all its hosts) with their weights; empty when it has none. */
export function instanceSharesOf(app: SandboxApp): InstanceShare[] {
  let cached = sharesByApp.get(app);
  // Keyed on the hosts array too, so a replaced host list is never served stale.
  if (!cached || cached.hosts !== app.hosts) {
    const pairs = app.hosts.flatMap((host) => host.instances.map((instance) => ({ host, instance })));
    const weights = instanceWeights(pairs.map(({ instance }) => instance.id));
    cached = { hosts: app.hosts, shares: pairs.map(({ host, instance }, index) => ({ app, host, instance, weight: weights[index] as number })) };
    sharesByApp.set(app, cached);
  }
  return cached.shares;
}

/** The app row scaled by a weight: the one place rows are split. */
export function splitRow(row: TimesliceRow, weight: number): TimesliceRow {
  return {
    start: row.start,
    durationMs: row.durationMs,
    count: row.count * weight,
    total: row.total * weight,
    totalExclusive: row.totalExclusive * weight,
    min: row.min,
    max: row.max,
    sumOfSquares: row.sumOfSquares * weight,
  };
}

/** One row of one instance. */
export function instanceRow(share: InstanceShare, metric: SandboxMetric, start: number, durationMs: number): TimesliceRow {
  return splitRow(rowAt(share.app, metric, start, durationMs), share.weight);
}

/** The rows of one instance starting in [since, until), oldest first; [] for an unknown instance. */
export function instanceRowsOf(app: SandboxApp, instanceId: number, metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[] {
  const share = instanceSharesOf(app).find((candidate) => candidate.instance.id === instanceId);
  if (!share) return [];
  return [...rowStarts(metric, since, until, now)].map(([start, durationMs]) => instanceRow(share, metric, start, durationMs));
}

/**
 * The rows of one host (by name): per slice, the sum of its instances' rows (min of mins, max
 * of maxes); [] for a host the app does not have.
 */
export function hostRowsOf(app: SandboxApp, hostName: string, metric: SandboxMetric, since: number, until: number, now: number): TimesliceRow[] {
  const shares = instanceSharesOf(app).filter((share) => share.host.name === hostName);
  if (shares.length === 0) return [];
  return [...rowStarts(metric, since, until, now)].map(([start, durationMs]) =>
    shares.map((share) => instanceRow(share, metric, start, durationMs)).reduce(addRows),
  );
}

function addRows(a: TimesliceRow, b: TimesliceRow): TimesliceRow {
  return {
    start: a.start,
    durationMs: a.durationMs,
    count: a.count + b.count,
    total: a.total + b.total,
    totalExclusive: a.totalExclusive + b.totalExclusive,
    min: Math.min(a.min, b.min),
    max: Math.max(a.max, b.max),
    sumOfSquares: a.sumOfSquares + b.sumOfSquares,
  };
}
