import { createCallerTallies, type CallerTallies } from './parity-callers.ts';
import { cleanText, DIFFERENCE_KINDS, OTHER_PATTERNS, VERDICTS } from './parity-clean.ts';
import { noteSeries, type SeriesTally } from './parity-series.ts';
import type { KnownGap } from '../routes/mapping.ts';
import type { ParityEvent } from './parity-event.ts';
import type { RouteMode } from '../ops/route-modes.ts';
import type { ComparisonRecord, DifferenceKind, JudgedDifference, Outcome, PatternTally, Verdict } from './types.ts';

/**
 * The parity store's recording part (parity-store.ts): the tallies it keeps, per route and
 * method and per field pattern, and the named steps that fold usage, drops, matches and records
 * into them, whether this replica's or another's (applyRemote). Labels are bounded whatever
 * callers send: routes are the mappings' templates plus `unmapped`, methods the HTTP ones plus
 * `OTHER`, at most MAX_PATTERNS_PER_ROUTE patterns per route and method (the rest folded into
 * one row), and a ring of the last `maxRecords` non-match records. No metrics here: the store
 * counts those for its own events only.
 */

/** The request shown as the example of a pattern only folded records (counts, no record) brought. */
export const FOLDED_REQUEST = '(counted only: no record kept)';

/** Whether a comparison agreed on a 2xx legacy answer: what "safe to translate" needs. */
export function agreedOnSuccess(outcome: Outcome, legacyStatus: number | null): boolean {
  return (outcome === 'match' || outcome === 'noise') && legacyStatus !== null && legacyStatus >= 200 && legacyStatus < 300;
}

/** A kept record's pattern counts, as the store counts them: its tally, else one per kept difference. */
export function patternCountsOf(record: ComparisonRecord): PatternTally[] {
  if (record.tally) return record.tally;
  const rows = new Map<string, PatternTally>();
  for (const difference of record.differences) {
    const slot = `${difference.kind} ${difference.verdict} ${difference.pattern}`;
    const row = rows.get(slot);
    if (row) row.count += 1;
    else rows.set(slot, { pattern: difference.pattern, kind: difference.kind, verdict: difference.verdict, count: 1 });
  }
  return [...rows.values()];
}

/** The label every route no mapping declares is counted under. */
export const UNMAPPED_ROUTE = 'unmapped';
export const OUTCOMES: readonly Outcome[] = ['match', 'mismatch', 'noise', 'error', 'dropped', 'dry_run'];
export const ROUTE_MODES: readonly RouteMode[] = ['translate', 'passthrough', 'compare', 'candidate'];
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

export const MAX_PATTERNS_PER_ROUTE = 200;

export type OutcomeCounts = Record<Outcome, number>;

/** The example kept for a pattern: the latest mismatch, else the latest difference of any verdict. */
export interface PatternExample {
  at: number;
  request: string;
  path: string;
  kind: DifferenceKind;
  verdict: Verdict;
  /** Absent when the legacy answer lacks the field. */
  legacy?: unknown;
  /** Absent when the translation lacks the field. */
  translated?: unknown;
}

export interface PatternStats {
  counts: Record<Verdict, number>;
  kinds: Partial<Record<DifferenceKind, number>>;
  example: PatternExample;
}

export interface RouteStats {
  route: string;
  method: string;
  mode: RouteMode | null;
  requests: number;
  byMode: Partial<Record<RouteMode, number>>;
  outcomes: OutcomeCounts;
  /** Matches (or noise only) where the legacy answer was a 2xx: what "safe to translate" needs. */
  agreedOnSuccess: number;
  patterns: Map<string, PatternStats>;
}

export interface Declared {
  fidelity: string;
  summary: string;
  knownGaps: string[];
}

export const zeroOutcomes = (): OutcomeCounts => ({ match: 0, mismatch: 0, noise: 0, error: 0, dropped: 0, dry_run: 0 });

/** What the store holds: the declared routes, the tallies, and the ring of recent non-match records. */
export interface ParityTallies {
  /** By `METHOD route`: what each declared route and method says of itself. */
  declarations: Map<string, Declared>;
  knownRoutes: Set<string>;
  /** By `METHOD route`, labels as routeLabel and methodLabel make them. */
  stats: Map<string, RouteStats>;
  ring: ComparisonRecord[];
  /** Where the next record goes in `ring`. */
  ringNext: number;
  maxRecords: number;
  /** Who calls what (parity-callers.ts). */
  callers: CallerTallies;
  /** Matches, mismatches and noise per hour (parity-series.ts). */
  series: SeriesTally;
}

/**
 * What the store reads of a mapping. Structural, so every mapping kind fits, the passthrough
 * kind included (fidelity 'passthrough', several `methods`).
 */
export interface RouteDeclaration {
  route: string;
  method?: string;
  methods?: readonly string[];
  readOnlyPost?: boolean;
  fidelity: string;
  summary: string;
  knownGaps?: readonly KnownGap[];
}

export const key = (route: string, method: string): string => `${method} ${route}`;

function methodsOfDeclaration(declaration: RouteDeclaration): string[] {
  const methods = [...(declaration.methods ?? []), ...(declaration.method ? [declaration.method] : []), ...(declaration.readOnlyPost ? ['POST'] : [])];
  return [...new Set(methods.map((m) => m.toUpperCase()))];
}

/** Empty tallies for the routes `mappings` declare (the first declaration of a route and method wins). */
export function createTallies(mappings: readonly RouteDeclaration[], maxRecords: number): ParityTallies {
  const declarations = new Map<string, Declared>();
  const knownRoutes = new Set<string>();
  for (const mapping of mappings) {
    knownRoutes.add(mapping.route);
    const declared: Declared = {
      fidelity: String(mapping.fidelity),
      summary: mapping.summary,
      knownGaps: (mapping.knownGaps ?? []).map((gap) => (gap.path ? `${gap.path}: ${gap.description}` : gap.description)),
    };
    for (const method of methodsOfDeclaration(mapping)) {
      if (!declarations.has(key(mapping.route, method))) declarations.set(key(mapping.route, method), declared);
    }
  }
  return {
    declarations,
    knownRoutes,
    stats: new Map(),
    ring: [],
    ringNext: 0,
    maxRecords: Math.max(0, Math.floor(maxRecords)),
    callers: createCallerTallies(),
    series: new Map(),
  };
}

export const routeLabel = (tallies: ParityTallies, route: string): string => (tallies.knownRoutes.has(route) ? route : UNMAPPED_ROUTE);

export function methodLabel(method: string): string {
  const upper = method.toUpperCase();
  // A HEAD is a GET without its body: counted with the route's GET, as the modes route it.
  if (upper === 'HEAD') return 'GET';
  return HTTP_METHODS.has(upper) ? upper : 'OTHER';
}

export function declaredOf(tallies: ParityTallies, route: string, method: string): Declared {
  if (route === UNMAPPED_ROUTE) return { fidelity: UNMAPPED_ROUTE, summary: 'v2 paths no mapping declares', knownGaps: [] };
  return tallies.declarations.get(key(route, method)) ?? { fidelity: 'unsupported', summary: `no ${method} mapping for this route`, knownGaps: [] };
}

function statsOf(tallies: ParityTallies, rawRoute: string, rawMethod: string): RouteStats {
  const route = routeLabel(tallies, rawRoute);
  const method = methodLabel(rawMethod);
  let entry = tallies.stats.get(key(route, method));
  if (!entry) {
    entry = { route, method, mode: null, requests: 0, byMode: {}, outcomes: zeroOutcomes(), agreedOnSuccess: 0, patterns: new Map() };
    tallies.stats.set(key(route, method), entry);
  }
  return entry;
}

function statsOfPattern(entry: RouteStats, rawPattern: string, example: PatternExample): PatternStats {
  let pattern = rawPattern;
  if (!entry.patterns.has(pattern) && entry.patterns.size >= MAX_PATTERNS_PER_ROUTE) pattern = OTHER_PATTERNS;
  let patternStats = entry.patterns.get(pattern);
  if (!patternStats) {
    patternStats = { counts: { mismatch: 0, noise: 0, gap: 0, tolerated: 0 }, kinds: {}, example };
    entry.patterns.set(pattern, patternStats);
  }
  return patternStats;
}

function exampleOf(difference: JudgedDifference, record: ComparisonRecord): PatternExample {
  return {
    at: record.at,
    request: record.request,
    path: difference.path,
    kind: difference.kind,
    verdict: difference.verdict,
    ...(difference.legacy === undefined ? {} : { legacy: difference.legacy }),
    ...(difference.translated === undefined ? {} : { translated: difference.translated }),
  };
}

/** A kept difference: its example (a mismatch is the one worth showing; among equals, the latest), counted unless a tally counts it. */
function notePattern(entry: RouteStats, difference: JudgedDifference, record: ComparisonRecord, count: boolean): void {
  const example = exampleOf(difference, record);
  const patternStats = statsOfPattern(entry, difference.pattern, example);
  if (difference.verdict === 'mismatch' || patternStats.example.verdict !== 'mismatch') patternStats.example = example;
  if (!count) return;
  patternStats.counts[difference.verdict] += 1;
  patternStats.kinds[difference.kind] = (patternStats.kinds[difference.kind] ?? 0) + 1;
}

/** The comparison's full counts (its kept differences are only the first ones). */
function noteTally(entry: RouteStats, tally: readonly PatternTally[], record: Pick<ComparisonRecord, 'at' | 'request'>): void {
  for (const row of tally) {
    if (!VERDICTS.includes(row.verdict) || !DIFFERENCE_KINDS.includes(row.kind) || !Number.isSafeInteger(row.count) || row.count < 0) continue;
    const placeholder: PatternExample = { at: record.at, request: record.request, path: cleanText(row.pattern), kind: row.kind, verdict: row.verdict };
    const patternStats = statsOfPattern(entry, cleanText(row.pattern), placeholder);
    patternStats.counts[row.verdict] += row.count;
    patternStats.kinds[row.kind] = (patternStats.kinds[row.kind] ?? 0) + row.count;
  }
}

export function applyUsage(tallies: ParityTallies, route: string, method: string, mode: RouteMode, count: number): { entry: RouteStats; mode: RouteMode } {
  const entry = statsOf(tallies, route, method);
  const label = ROUTE_MODES.includes(mode) ? mode : 'translate';
  entry.requests += count;
  entry.byMode[label] = (entry.byMode[label] ?? 0) + count;
  entry.mode = label;
  return { entry, mode: label };
}

export function applyDropped(tallies: ParityTallies, route: string, method: string, count: number): RouteStats {
  const entry = statsOf(tallies, route, method);
  entry.outcomes.dropped += count;
  return entry;
}

/** What applyRecord does with matches that have nothing to keep, `count` at once, the latest at `at`. */
export function applyMatched(tallies: ParityTallies, route: string, method: string, mode: ComparisonRecord['mode'], count: number, onSuccess: number, at: number): void {
  const entry = statsOf(tallies, route, method);
  entry.outcomes.match += count;
  noteSeries(tallies.series, at, 'match', count);
  entry.agreedOnSuccess += Math.min(onSuccess, count);
  if (entry.mode === null) entry.mode = mode;
}

/** What applyRecord does with records another replica folded into counts (no record kept). */
export function applyFolded(tallies: ParityTallies, event: Extract<ParityEvent, { kind: 'folded' }>): void {
  const entry = statsOf(tallies, event.route, event.method);
  const outcome = OUTCOMES.includes(event.outcome) ? event.outcome : 'error';
  entry.outcomes[outcome] += event.count;
  noteSeries(tallies.series, event.at, outcome, event.count);
  entry.agreedOnSuccess += Math.min(event.onSuccess, event.count);
  if (entry.mode === null) entry.mode = event.mode;
  noteTally(entry, event.tally, { at: event.at, request: FOLDED_REQUEST });
}

/** How a record is cleaned before it is kept: cleanRecord for this replica's, recheckRecord for another's (parity-clean.ts). */
export type RecordCleaner = (record: ComparisonRecord, route: string, method: string, outcome: Outcome) => ComparisonRecord;

/** Counts a record and keeps it (cleaned by `clean`): the part a local record and a remote one share. */
export function applyRecord(tallies: ParityTallies, record: ComparisonRecord, clean: RecordCleaner): { entry: RouteStats; outcome: Outcome; cleaned: ComparisonRecord } {
  const entry = statsOf(tallies, record.route, record.method);
  const outcome = OUTCOMES.includes(record.outcome) ? record.outcome : 'error';
  entry.outcomes[outcome] += 1;
  noteSeries(tallies.series, record.at, outcome, 1);
  if (agreedOnSuccess(outcome, record.status.legacy)) entry.agreedOnSuccess += 1;
  if (entry.mode === null) entry.mode = record.mode;
  const cleaned = clean(record, entry.route, entry.method, outcome);
  // Examples first, so a pattern the tally adds keeps a real example when there is one.
  for (const difference of cleaned.differences) notePattern(entry, difference, cleaned, record.tally === undefined);
  if (record.tally) noteTally(entry, record.tally, cleaned);
  const { maxRecords } = tallies;
  if (outcome !== 'match' && maxRecords > 0) {
    if (tallies.ring.length < maxRecords) tallies.ring.push(cleaned);
    else tallies.ring[tallies.ringNext] = cleaned;
    tallies.ringNext = (tallies.ringNext + 1) % maxRecords;
  }
  return { entry, outcome, cleaned };
}
