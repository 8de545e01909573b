import { Counter, Histogram, type Registry } from 'prom-client';
import type { SeenCaller } from '../caller/seen-caller.ts';
import { applyRemoteCaller, noteLocalCaller } from './parity-callers.ts';
import { cleanRecord, cleanTally, recheckRecord } from './parity-clean.ts';
import type { ParityEvent } from './parity-event.ts';
import { applyDropped, applyFolded, applyMatched, applyRecord, applyUsage, createTallies, methodLabel, routeLabel, type RouteDeclaration } from './parity-recording.ts';
import { reportOf, type ParityReport } from './parity-report.ts';
import type { RouteMode } from '../ops/route-modes.ts';
import type { ComparisonRecord } from './types.ts';

// The store's parts, re-exported: importers keep reading them from here.
export { boundedValue, cleanText, cleanValue, OTHER_PATTERNS } from './parity-clean.ts';
export { agreedOnSuccess, FOLDED_REQUEST, MAX_PATTERNS_PER_ROUTE, OUTCOMES, patternCountsOf, ROUTE_MODES, UNMAPPED_ROUTE } from './parity-recording.ts';
export type { OutcomeCounts, PatternExample, RouteDeclaration } from './parity-recording.ts';
export type { ParityEvent } from './parity-event.ts';
export { isReportable, RECENT_DEFAULT, REPORTABLE_MARGIN } from './parity-report.ts';
export type { ParityReport, PatternParity, RouteParity, RouteUsage } from './parity-report.ts';
export type { Readiness } from './types.ts';
export { MAX_INTEGRATIONS, MAX_ROUTES_PER_INTEGRATION, OTHER_INTEGRATIONS, OTHER_ROUTES, WITHHELD_AGENT } from './parity-callers.ts';
export type { IntegrationReport, IntegrationRoute } from './parity-callers.ts';
export { SERIES_BUCKET_MS, SERIES_MAX_BUCKETS, SERIES_OUTCOMES } from './parity-series.ts';
export type { ParitySeries, SeriesBucket } from './parity-series.ts';

/**
 * The parity store: what the shadow work of the comparing modes found, per route and method
 * and per field pattern, and which routes callers use. It implements the modes' ParitySink
 * (src/modes/ports.ts) and answers the report that /bridge/parity.json, the /bridge/ page and
 * `npm run report` show.
 *
 * Everything is bounded whatever callers send: routes are the mappings' templates plus
 * `unmapped`, methods the HTTP ones plus `OTHER`, at most MAX_PATTERNS_PER_ROUTE patterns per
 * route and method (the rest folded into one row), and a ring of the last `maxRecords`
 * non-match records. Every string kept goes through redactKeys again: records arrive redacted,
 * but answer values can still carry key-shaped text.
 *
 * This module is the store's face: its interfaces and createParityStore, which holds the
 * Prometheus metrics and the event listeners. Its parts: parity-clean.ts (what is kept of a
 * record, cleaned and bounded), parity-recording.ts (the tallies and the steps that fold events
 * into them), parity-report.ts (the report read from them) and parity-event.ts (one change to
 * the store, as replicas exchange it).
 */
export interface ParityStore {
  /** Every caller /v2 request, with the mode it was served in. */
  noteUsage(route: string, method: string, mode: RouteMode): void;
  /**
   * Every caller /v2 request, with who sent it (src/routing/routing-step.ts): counted per
   * integration (parity-callers.ts). Nothing of `caller` is kept but its fingerprint and its
   * User-Agent, cleaned.
   */
  noteCaller(route: string, method: string, caller: SeenCaller): void;
  /** Every finished comparison (dry runs included). */
  record(record: ComparisonRecord): void;
  /** Shadow work shed under load: counted, never run. */
  dropped(route: string, method: string): void;
  /** One side's time to its whole answer, in a comparison. */
  observeSide(route: string, side: 'legacy' | 'translated', seconds: number): void;
  /** What /bridge/parity.json serves; `recent` bounds the records shown (default RECENT_DEFAULT). */
  report(options?: { recent?: number }): ParityReport;
  /**
   * Catches up with the other replicas' events before a report (shared-parity.ts; never throws).
   * `maxWaitMs`: resolve by then even if the read goes on (it keeps going in the background).
   * Absent: this store is the whole story.
   */
  refresh?(options?: { maxWaitMs?: number }): Promise<void>;
}

/** The store as created: the ParityStore, plus what sharing it across replicas needs. */
export interface LocalParityStore extends ParityStore {
  /**
   * Another replica's event, folded into the report. Never into this replica's Prometheus
   * counters: Prometheus sums the replicas itself.
   */
  applyRemote(event: ParityEvent): void;
  /** Called with every event of this replica, as applyRemote would take it elsewhere. */
  onLocalEvent(listener: (event: ParityEvent) => void): void;
}

export function createParityStore(options: {
  mappings: readonly RouteDeclaration[];
  registry: Registry;
  maxRecords: number;
  now?: () => number;
}): LocalParityStore {
  const now = options.now ?? Date.now;
  const tallies = createTallies(options.mappings, options.maxRecords);

  const registers = [options.registry];
  const results = new Counter({
    name: 'v2bridge_compare_results_total',
    help: 'Comparisons of legacy and translated answers by route pattern and outcome (match, mismatch, noise, error, dropped, dry_run)',
    labelNames: ['route', 'outcome'],
    registers,
  });
  const sideDuration = new Histogram({
    name: 'v2bridge_compare_side_duration_seconds',
    help: 'Time to the whole answer of each side of a comparison, by route pattern and side (legacy or translated)',
    labelNames: ['route', 'side'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const usage = new Counter({
    name: 'v2bridge_route_usage_total',
    help: 'Caller /v2 requests by route pattern, method and the mode they were served in',
    labelNames: ['route', 'method', 'mode'],
    registers,
  });

  const listeners: Array<(event: ParityEvent) => void> = [];
  const emit = (event: ParityEvent): void => {
    for (const listener of listeners) listener(event);
  };

  return {
    noteUsage(route, method, mode) {
      const { entry, mode: label } = applyUsage(tallies, route, method, mode, 1);
      usage.inc({ route: entry.route, method: entry.method, mode: label });
      if (listeners.length > 0) emit({ kind: 'usage', route: entry.route, method: entry.method, mode: label, count: 1 });
    },

    noteCaller(route, method, caller) {
      const label = routeLabel(tallies, route);
      const methodShown = methodLabel(method);
      const { fingerprint, agent } = noteLocalCaller(tallies.callers, label, methodShown, caller);
      if (listeners.length > 0) emit({ kind: 'caller', fingerprint, agent, route: label, method: methodShown, count: 1 });
    },

    record(record) {
      const { entry, outcome, cleaned } = applyRecord(tallies, record, cleanRecord);
      results.inc({ route: entry.route, outcome });
      if (listeners.length === 0) return;
      if (outcome === 'match' && cleaned.differences.length === 0 && (record.tally?.length ?? 0) === 0) {
        const onSuccess = record.status.legacy !== null && record.status.legacy >= 200 && record.status.legacy < 300 ? 1 : 0;
        emit({ kind: 'matched', route: entry.route, method: entry.method, mode: cleaned.mode, count: 1, onSuccess, at: cleaned.at });
      } else emit({ kind: 'record', record: record.tally ? { ...cleaned, tally: cleanTally(record.tally) } : cleaned });
    },

    dropped(route, method) {
      const entry = applyDropped(tallies, route, method, 1);
      results.inc({ route: entry.route, outcome: 'dropped' });
      if (listeners.length > 0) emit({ kind: 'dropped', route: entry.route, method: entry.method, count: 1 });
    },

    applyRemote(event) {
      if (event.kind === 'usage') applyUsage(tallies, event.route, event.method, event.mode, event.count);
      else if (event.kind === 'dropped') applyDropped(tallies, event.route, event.method, event.count);
      else if (event.kind === 'matched') applyMatched(tallies, event.route, event.method, event.mode, event.count, event.onSuccess, event.at ?? now());
      else if (event.kind === 'caller') applyRemoteCaller(tallies.callers, { ...event, route: routeLabel(tallies, event.route), method: methodLabel(event.method) });
      else if (event.kind === 'folded') applyFolded(tallies, event);
      else applyRecord(tallies, event.record, recheckRecord);
    },

    onLocalEvent(listener) {
      listeners.push(listener);
    },

    observeSide(route, side, seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) return;
      sideDuration.observe({ route: routeLabel(tallies, route), side: side === 'legacy' ? 'legacy' : 'translated' }, seconds);
    },

    report(reportOptions = {}) {
      return reportOf(tallies, now(), reportOptions);
    },
  };
}
