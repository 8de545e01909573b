import { declaredOf, key, OUTCOMES, UNMAPPED_ROUTE, zeroOutcomes, type Declared, type OutcomeCounts, type ParityTallies, type PatternExample, type RouteStats } from './parity-recording.ts';
import { integrationsReport, MAX_INTEGRATIONS, type IntegrationReport } from './parity-callers.ts';
import { seriesReport, type ParitySeries } from './parity-series.ts';
import type { RouteMode } from '../ops/route-modes.ts';
import type { ComparisonRecord, DifferenceKind, Readiness } from './types.ts';

/**
 * The parity store's querying and summarising part (parity-store.ts): what /bridge/parity.json,
 * the /bridge/ page and `npm run report` show, read from the tallies parity-recording.ts keeps.
 * Per route and method, its outcomes, its worst field patterns and its readiness (from its
 * fidelity, then from what comparisons found, with Diffy's rule for a field that really
 * differs); across routes, the worst patterns, the routes callers used with what switching them
 * to translation would change, and the newest non-match records. Reads only: nothing here
 * changes the tallies.
 */

export interface PatternParity {
  pattern: string;
  mismatch: number;
  noise: number;
  gap: number;
  tolerated: number;
  kinds: Partial<Record<DifferenceKind, number>>;
  example: PatternExample;
  /**
   * Does this field really differ? Diffy's rule: its mismatches must outnumber the requests
   * where the legacy value itself moved there (noise), by at least REPORTABLE_MARGIN of both.
   * A field that moves anyway (the open minute) and now and then lands outside the noise
   * band is noise, not a reason to call the route different.
   */
  reportable: boolean;
}

/** Diffy's default relative threshold: |raw − noise| / (raw + noise) must exceed 20 %. */
export const REPORTABLE_MARGIN = 0.2;

export function isReportable(counts: { mismatch: number; noise: number }): boolean {
  const { mismatch, noise } = counts;
  return mismatch > noise && (mismatch - noise) / (mismatch + noise) > REPORTABLE_MARGIN;
}

export interface RouteParity {
  route: string;
  method: string;
  /** The mode its latest request was served in; null before any. */
  mode: RouteMode | null;
  fidelity: string;
  summary: string;
  knownGaps: number;
  requests: number;
  outcomes: OutcomeCounts;
  readiness: Readiness;
  /** The readiness as a sentence: `differs in a, b, c`. */
  verdict: string;
  /** By mismatch count, then noise, gap, tolerated. */
  worstPatterns: PatternParity[];
  patternsTracked: number;
}

export interface RouteUsage {
  route: string;
  method: string;
  requests: number;
  mode: RouteMode | null;
  byMode: Partial<Record<RouteMode, number>>;
  fidelity: string;
  readiness: Readiness;
  /** The known gaps' descriptions. */
  knownGaps: string[];
  /** What a switch to translation now would change, in one line: fidelity, the number of gaps (listed in knownGaps), what comparisons found. */
  ifSwitched: string;
}

export interface ParityReport {
  generatedAt: string;
  totals: { requests: number; outcomes: OutcomeCounts };
  /** Every declared route and method, and `unmapped` once seen; worst first. */
  routes: RouteParity[];
  /** Field patterns across routes, by mismatch count. */
  worstPatterns: Array<PatternParity & { route: string; method: string }>;
  /** Routes callers used, by requests. */
  usage: RouteUsage[];
  /** The newest non-match records first. */
  recent: ComparisonRecord[];
  recordsKept: number;
  maxRecords: number;
  /** Callers by User-Agent and key fingerprint, the one with most calls to routes not ready first. */
  integrations: IntegrationReport[];
  /** The bound on integrations kept (later ones are counted together, as `(others)`). */
  integrationsMax: number;
  /** Matches, mismatches and noise per hour. */
  series: ParitySeries;
}

const WORST_PER_ROUTE = 10;
const WORST_OVERALL = 25;
export const RECENT_DEFAULT = 50;
/** Records beyond those a report shows that are put in time order with them (see reportOf()). */
const RECENT_ARRIVAL_MARGIN = 200;

function byWorst(a: PatternParity, b: PatternParity): number {
  return b.mismatch - a.mismatch || b.noise - a.noise || b.gap - a.gap || b.tolerated - a.tolerated || a.pattern.localeCompare(b.pattern);
}

function readinessOf(declared: Declared, outcomes: OutcomeCounts, worst: readonly PatternParity[], agreedOnSuccess: number): { readiness: Readiness; verdict: string } {
  if (declared.fidelity === 'unsupported') return { readiness: 'unsupported', verdict: 'unsupported' };
  if (declared.fidelity === UNMAPPED_ROUTE) return { readiness: 'unsupported', verdict: 'unsupported: no mapping' };
  if (declared.fidelity === 'passthrough') return { readiness: 'passthrough only', verdict: 'passthrough only' };
  // Mismatches only at fields that move on the legacy side anyway do not make a route differ.
  const differing = worst.filter((p) => p.reportable);
  if (outcomes.mismatch > 0 && (differing.length > 0 || worst.every((p) => p.mismatch === 0))) {
    const top = differing.slice(0, 3).map((p) => p.pattern || '(body)');
    return { readiness: 'differs', verdict: top.length > 0 ? `differs in ${top.join(', ')}` : 'differs' };
  }
  const compared = outcomes.match + outcomes.noise;
  if (outcomes.error > 0) return { readiness: 'comparison errors', verdict: `comparison errors: ${outcomes.error} of ${compared + outcomes.error} failed` };
  // Both sides refusing a bad key (or a missing id) the same way says nothing about the data.
  if (compared > 0 && agreedOnSuccess === 0) return { readiness: 'not compared yet', verdict: `compared on error answers only (${compared})` };
  if (compared > 0) return { readiness: 'safe to translate', verdict: 'safe to translate' };
  if (outcomes.dry_run > 0) return { readiness: 'dry runs only', verdict: `dry runs only (${outcomes.dry_run}): check the recorded calls` };
  return { readiness: 'not compared yet', verdict: 'not compared yet' };
}

function ifSwitched(declared: Declared, parity: RouteParity): string {
  if (declared.fidelity === 'passthrough') return 'stays on the legacy API: NerdGraph has no translation for it';
  if (declared.fidelity === UNMAPPED_ROUTE) return 'no mapping: translated, it would answer 404';
  if (declared.fidelity === 'unsupported') return 'translated, it answers a v2 error: NerdGraph cannot serve it';
  const parts = [`fidelity ${declared.fidelity}`];
  parts.push(declared.knownGaps.length === 0 ? 'no known gaps' : `${declared.knownGaps.length} known gap${declared.knownGaps.length === 1 ? '' : 's'}`);
  if (parity.readiness === 'differs') parts.push(parity.verdict);
  if (parity.mode === 'translate' || parity.mode === 'candidate') parts.unshift('already answered by the translation');
  return parts.join('; ');
}

function patternsOf(entry: RouteStats | undefined): PatternParity[] {
  if (!entry) return [];
  return [...entry.patterns].map(([pattern, p]) => ({ pattern, ...p.counts, kinds: { ...p.kinds }, example: p.example, reportable: isReportable(p.counts) })).sort(byWorst);
}

/** One route and method as the report shows it, declared or only seen. */
export function routeParity(tallies: ParityTallies, route: string, method: string): RouteParity {
  const entry = tallies.stats.get(key(route, method));
  const declared = declaredOf(tallies, route, method);
  const outcomes = entry ? { ...entry.outcomes } : zeroOutcomes();
  const patterns = patternsOf(entry);
  return {
    route,
    method,
    mode: entry?.mode ?? null,
    fidelity: declared.fidelity,
    summary: declared.summary,
    knownGaps: declared.knownGaps.length,
    requests: entry?.requests ?? 0,
    outcomes,
    ...readinessOf(declared, outcomes, patterns, entry?.agreedOnSuccess ?? 0),
    worstPatterns: patterns.slice(0, WORST_PER_ROUTE),
    patternsTracked: patterns.length,
  };
}

/** The whole report at `now`; `recent` bounds the records shown (default RECENT_DEFAULT). */
export function reportOf(tallies: ParityTallies, now: number, reportOptions: { recent?: number } = {}): ParityReport {
  const { declarations, stats, ring, ringNext, maxRecords } = tallies;
  const keys = new Map<string, { route: string; method: string }>();
  for (const k of declarations.keys()) {
    const space = k.indexOf(' ');
    keys.set(k, { method: k.slice(0, space), route: k.slice(space + 1) });
  }
  for (const [k, entry] of stats) keys.set(k, { route: entry.route, method: entry.method });
  const routes = [...keys.values()].map(({ route, method }) => routeParity(tallies, route, method));
  routes.sort(
    (a, b) =>
      b.outcomes.mismatch - a.outcomes.mismatch ||
      b.outcomes.error - a.outcomes.error ||
      b.requests - a.requests ||
      a.route.localeCompare(b.route) ||
      a.method.localeCompare(b.method),
  );

  const readinessByKey = new Map(routes.map((r) => [key(r.route, r.method), r.readiness]));

  const worstPatterns = routes
    .flatMap((r) => r.worstPatterns.map((p) => ({ route: r.route, method: r.method, ...p })))
    .sort((a, b) => byWorst(a, b) || a.route.localeCompare(b.route))
    .slice(0, WORST_OVERALL);

  const usageRows: RouteUsage[] = routes
    .filter((r) => r.requests > 0)
    .sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route) || a.method.localeCompare(b.method))
    .map((r) => {
      const declared = declaredOf(tallies, r.route, r.method);
      return {
        route: r.route,
        method: r.method,
        requests: r.requests,
        mode: r.mode,
        byMode: { ...stats.get(key(r.route, r.method))?.byMode },
        fidelity: r.fidelity,
        readiness: r.readiness,
        knownGaps: declared.knownGaps,
        ifSwitched: ifSwitched(declared, r),
      };
    });

  const wanted = Math.max(0, Math.min(reportOptions.recent ?? RECENT_DEFAULT, maxRecords));
  // Newest first: the ring's write position walks backwards. Other replicas' records arrive
  // up to a second or so after they were made: the newest arrivals, a margin beyond those
  // wanted, are put in time order (stable: ties keep arrival order) without sorting the ring.
  const recent: ComparisonRecord[] = [];
  const window = wanted === 0 ? 0 : Math.min(ring.length, wanted + RECENT_ARRIVAL_MARGIN);
  for (let i = 1; i <= window; i += 1) {
    const record = ring[(ringNext - i + ring.length * 2) % ring.length];
    if (record) recent.push(record);
  }
  recent.sort((a, b) => b.at - a.at);
  recent.length = Math.min(recent.length, wanted);

  const outcomes = zeroOutcomes();
  for (const r of routes) for (const outcome of OUTCOMES) outcomes[outcome] += r.outcomes[outcome];
  return {
    generatedAt: new Date(now).toISOString(),
    totals: { requests: routes.reduce((n, r) => n + r.requests, 0), outcomes },
    routes,
    worstPatterns,
    usage: usageRows,
    recent,
    recordsKept: ring.length,
    maxRecords,
    integrations: integrationsReport(tallies.callers, (route, method) => readinessByKey.get(key(route, method)) ?? routeParity(tallies, route, method).readiness),
    integrationsMax: MAX_INTEGRATIONS,
    series: seriesReport(tallies.series),
  };
}
