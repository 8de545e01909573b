
/**
 * Scoped timeslices (behaviour `scopedTimeslices`, behaviours.ts). Agents record a segment
 * metric (a datastore statement, an external call, a custom method tracer, the Ruby agent's
 * `Controller/...`) twice: unscoped, and scoped to the transaction it ran in. New Relic's page
 * "Query APM metric timeslice data with NRQL" (docs.newrelic.com/docs/data-apis/understand-data/
 * metric-data/query-apm-metric-timeslice-data-nrql, attribute table: `scope`, optional, "the
 * name of the legacy metric timeslice this metric is scoped to"; its example breaks one
 * transaction down with `WHERE appName = ... AND scope = 'Controller/users/show' FACET
 * metricTimesliceName`), and the Ruby agent's `TransactionMetrics#record_scoped_and_unscoped`
 * (newrelic-ruby-agent, lib/new_relic/agent/transaction_metrics.rb: "when recording a scoped
 * metric, the corresponding unscoped metric should always be recorded as well"). Rollups
 * (`Datastore/all`, `External/all`, `External/<host>/all`) are recorded unscoped only.
 *
 * So a scoped row has the same `metricTimesliceName` as the unscoped one plus `scope`; the
 * unscoped rows stay the source of truth (every row of rows.ts is unscoped), and a metric's
 * scoped rows are its unscoped rows split between one or two of the app's transactions by
 * weight (they sum back to the unscoped row). A query that filters by name only reads both and
 * counts twice; `scope IS NULL` reads the unscoped rows, which are what REST v2 reported.
 */
import type { SandboxData } from '../model.ts';
import { metricsOf } from './catalog.ts';
import { isMobileOwner, type MetricOwner, type SandboxMetric } from './kinds.ts';

export interface TimesliceScope {
  /** The transaction's metric name (the `scope` attribute). */
  name: string;
  /** In (0, 1]; the scopes of one metric sum to 1. */
  weight: number;
}

/** Is this a segment metric, recorded scoped as well as unscoped? */
export function isScopedSegment(name: string): boolean {
  if (name.startsWith('Datastore/statement/') || name.startsWith('Custom/') || name.startsWith('Controller/')) return true;
  // External/<host>/<library>/<method> is the call's own segment; External/all, External/allWeb
  // and External/<host>/all are rollups.
  const parts = name.split('/');
  return parts[0] === 'External' && parts.length >= 4;
}

const scopesByMetric = new WeakMap<SandboxMetric, TimesliceScope[]>();

/** The transactions a metric's scoped rows belong to, with their shares; [] for an unscoped-only metric. */
export function scopesOf(owner: MetricOwner, metric: SandboxMetric, data: SandboxData): TimesliceScope[] {
  let scopes = scopesByMetric.get(metric);
  if (scopes === undefined) {
    scopes = buildScopes(owner, metric, data);
    scopesByMetric.set(metric, scopes);
  }
  return scopes;
}

function buildScopes(owner: MetricOwner, metric: SandboxMetric, data: SandboxData): TimesliceScope[] {
  if (isMobileOwner(owner) || !isScopedSegment(metric.name)) return [];
  // The Ruby agent's transaction is named by its controller metric: that metric is scoped to itself.
  if (metric.name.startsWith('Controller/')) return [{ name: metric.name, weight: 1 }];
  const transactions = metricsOf(owner, data)
    .map((candidate) => candidate.name)
    .filter((name) => name.startsWith('WebTransaction/') || (name.startsWith('OtherTransaction/') && name !== 'OtherTransaction/all'));
  if (transactions.length === 0) return [];
  const first = metric.seed % transactions.length;
  if (metric.seed % 2 === 0 || transactions.length === 1) return [{ name: transactions[first] as string, weight: 1 }];
  const weight = 0.25 + (((metric.seed >>> 8) % 1000) / 1000) * 0.5;
  return [
    { name: transactions[first] as string, weight },
    { name: transactions[(first + 1) % transactions.length] as string, weight: 1 - weight },
  ];
}
