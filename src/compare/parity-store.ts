import { Counter, Histogram, type Registry } from 'prom-client';
import { redactKeys } from '../caller/redact.ts';
import { isSecretPath, maskSecrets, secretMark } from './secrets.ts';
import type { KnownGap } from '../routes/mapping.ts';
import type { ComparisonRecord, DifferenceKind, DryRunCall, JudgedDifference, Outcome, PatternTally, RouteMode, Verdict } from './types.ts';

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
 */
export interface ParityStore {
  /** Every caller /v2 request, with the mode it was served in. */
  noteUsage(route: string, method: string, mode: RouteMode): void;
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
   * Absent: this store is the whole story.
   */
  refresh?(): Promise<void>;
}

/**
 * One change to the store, as another replica's store applies it (shared-parity.ts). Labels are
 * already the store's (route template or `unmapped`, HTTP method or `OTHER`); a record is the
 * cleaned one the store keeps, with its tally, so nothing in an event holds more than the store
 * itself would.
 */
export type ParityEvent =
  | { kind: 'usage'; route: string; method: string; mode: RouteMode; count: number }
  | { kind: 'dropped'; route: string; method: string; count: number }
  /**
   * Matches with nothing to keep (no difference of any verdict, no tally): counts only, so the
   * comparisons that agree, most of them once a route is ready, cost a few bytes a batch.
   * `onSuccess`: how many of them agreed on a 2xx legacy answer.
   */
  | { kind: 'matched'; route: string; method: string; mode: ComparisonRecord['mode']; count: number; onSuccess: number }
  | { kind: 'record'; record: ComparisonRecord };

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

/** The label every route no mapping declares is counted under. */
export const UNMAPPED_ROUTE = 'unmapped';
export const OUTCOMES: readonly Outcome[] = ['match', 'mismatch', 'noise', 'error', 'dropped', 'dry_run'];
export const ROUTE_MODES: readonly RouteMode[] = ['translate', 'passthrough', 'compare', 'candidate'];
const DIFFERENCE_KINDS: readonly DifferenceKind[] = ['missing', 'extra', 'type', 'value', 'length'];
const VERDICTS: readonly Verdict[] = ['mismatch', 'noise', 'gap', 'tolerated'];
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

export const MAX_PATTERNS_PER_ROUTE = 200;
/** Where patterns beyond MAX_PATTERNS_PER_ROUTE are counted, so no count is lost. */
export const OTHER_PATTERNS = '(other patterns)';
const WORST_PER_ROUTE = 10;
const WORST_OVERALL = 25;
export const RECENT_DEFAULT = 50;
/** Records beyond those a report shows that are put in time order with them (see report()). */
const RECENT_ARRIVAL_MARGIN = 200;
const MAX_DIFFERENCES_PER_RECORD = 50;
const MAX_TEXT = 500;
const MAX_VALUE_ITEMS = 20;
const MAX_VALUE_DEPTH = 4;
const MAX_VALUE_NODES = 200;
/** A difference's legacy or translated value, as JSON text. */
const MAX_VALUE_CHARS = 512;
/** A dry-run call's variables, as JSON text. */
const MAX_VARIABLES_CHARS = 2048;
const MAX_DRY_RUN_CALLS = 10;

/**
 * How ready a route is to be translated: from its fidelity, then from what comparisons found.
 * `comparison errors` and `dry runs only` say why a compared route is not called safe.
 */
export type Readiness = 'unsupported' | 'passthrough only' | 'differs' | 'comparison errors' | 'dry runs only' | 'safe to translate' | 'not compared yet';

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
}

interface PatternStats {
  counts: Record<Verdict, number>;
  kinds: Partial<Record<DifferenceKind, number>>;
  example: PatternExample;
}

interface RouteStats {
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

interface Declared {
  fidelity: string;
  summary: string;
  knownGaps: string[];
}

const zeroOutcomes = (): OutcomeCounts => ({ match: 0, mismatch: 0, noise: 0, error: 0, dropped: 0, dry_run: 0 });

/** Key-shaped text masked, and long text cut (once: text it cut already is kept as it is). */
export function cleanText(text: string, max = MAX_TEXT): string {
  const redacted = redactKeys(text);
  const cutAlready = redacted.length === max + 1 && redacted.endsWith('…');
  return redacted.length > max && !cutAlready ? Buffer.from(`${redacted.slice(0, max)}…`, 'utf8').toString('utf8') : redacted;
}

/** A JSON-ish value with every string (keys too) redacted, its walk bounded (items, depth, nodes). */
export function cleanValue(value: unknown, depth = 0, budget = { nodes: MAX_VALUE_NODES }): unknown {
  budget.nodes -= 1;
  if (budget.nodes < 0) return '…';
  if (value === undefined || value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) {
    if (depth >= MAX_VALUE_DEPTH) return '[…]';
    const items = value.slice(0, MAX_VALUE_ITEMS).map((item) => cleanValue(item, depth + 1, budget));
    return value.length > MAX_VALUE_ITEMS ? [...items, `… ${value.length - MAX_VALUE_ITEMS} more`] : items;
  }
  if (typeof value === 'object') {
    if (depth >= MAX_VALUE_DEPTH) return '{…}';
    const entries = Object.entries(value).slice(0, MAX_VALUE_ITEMS);
    return Object.fromEntries(entries.map(([key, item]) => [cleanText(key, 100), cleanValue(item, depth + 1, budget)]));
  }
  // bigint, symbol, function: never in a parsed answer; kept as text.
  return cleanText(String(value));
}

/**
 * A cleaned value whose JSON stays under `maxChars`; past that, its JSON text cut (so each kept
 * value has a known size, and memory a known bound: patterns x examples, ring x differences).
 */
export function boundedValue(value: unknown, maxChars: number): unknown {
  const cleaned = cleanValue(value);
  const text = JSON.stringify(cleaned);
  // A slice keeps its whole parent string alive in V8: the kept text is copied out of it.
  return text !== undefined && text.length > maxChars ? Buffer.from(`${text.slice(0, maxChars)}…`, 'utf8').toString('utf8') : cleaned;
}

function cleanDifference(difference: JudgedDifference): JudgedDifference {
  const cleaned: JudgedDifference = {
    path: cleanText(difference.path),
    pattern: cleanText(difference.pattern),
    kind: DIFFERENCE_KINDS.includes(difference.kind) ? difference.kind : 'value',
    verdict: VERDICTS.includes(difference.verdict) ? difference.verdict : 'mismatch',
  };
  // A secret's path (a channel's configuration.service_key, ...) keeps no value but its mask.
  const secret = isSecretPath(difference.path) || isSecretPath(difference.pattern);
  if (difference.legacy !== undefined) cleaned.legacy = boundedValue(secret ? secretMark(difference.legacy) : maskSecrets(difference.legacy), MAX_VALUE_CHARS);
  if (difference.translated !== undefined) cleaned.translated = boundedValue(secret ? secretMark(difference.translated) : maskSecrets(difference.translated), MAX_VALUE_CHARS);
  return cleaned;
}

function cleanCall(call: DryRunCall): DryRunCall {
  const variables = boundedValue(maskSecrets(call.variables), MAX_VARIABLES_CHARS);
  // Cut variables are kept as their JSON text, under one key, so the type stays a record.
  return { operation: cleanText(call.operation), variables: typeof variables === 'object' && variables !== null && !Array.isArray(variables) ? (variables as Record<string, unknown>) : { truncated: variables } };
}

/** A record rebuilt field by field: nothing unredacted or unbounded is kept. */
function cleanRecord(record: ComparisonRecord, route: string, method: string, outcome: Outcome): ComparisonRecord {
  const cleaned: ComparisonRecord = {
    id: cleanText(record.id, 100),
    at: record.at,
    route,
    method,
    mode: record.mode,
    request: cleanText(record.request),
    outcome,
    status: { legacy: record.status.legacy, translated: record.status.translated },
    differences: record.differences.slice(0, MAX_DIFFERENCES_PER_RECORD).map(cleanDifference),
    ms: { legacy: record.ms.legacy, translated: record.ms.translated },
  };
  if (record.dryRun) cleaned.dryRun = { side: record.dryRun.side, calls: record.dryRun.calls.slice(0, MAX_DRY_RUN_CALLS).map(cleanCall) };
  if (record.error !== undefined) cleaned.error = cleanText(record.error);
  return cleaned;
}

/** Rows of a record's tally an event carries; the rest summed into (other patterns) rows, one per kind and verdict. */
const MAX_TALLY_ROWS = 500;

/** A tally with its patterns cleaned and its rows bounded (every count kept). */
function cleanTally(tally: readonly PatternTally[]): PatternTally[] {
  const valid = tally.filter((row) => VERDICTS.includes(row.verdict) && DIFFERENCE_KINDS.includes(row.kind) && Number.isSafeInteger(row.count) && row.count >= 0);
  const kept = valid.slice(0, MAX_TALLY_ROWS).map((row) => ({ pattern: cleanText(row.pattern), kind: row.kind, verdict: row.verdict, count: row.count }));
  const folded = new Map<string, PatternTally>();
  for (const row of valid.slice(MAX_TALLY_ROWS)) {
    const sum = folded.get(`${row.kind} ${row.verdict}`) ?? { pattern: OTHER_PATTERNS, kind: row.kind, verdict: row.verdict, count: 0 };
    sum.count += row.count;
    folded.set(`${row.kind} ${row.verdict}`, sum);
  }
  return [...kept, ...folded.values()];
}

/** Every string of a JSON-ish value (object keys too) with key-shaped text masked; nothing cut. */
function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactKeys(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, item]) => [redactKeys(k), redactDeep(item)]));
  return value;
}

/**
 * Another replica's record: cleaned there already (and its sizes checked by shared-parity.ts),
 * so its text is redacted again but not cut again, and this replica keeps what the other keeps.
 */
function recheckRecord(record: ComparisonRecord, route: string, method: string, outcome: Outcome): ComparisonRecord {
  const rechecked = redactDeep({
    ...record,
    route,
    method,
    outcome,
    differences: record.differences.slice(0, MAX_DIFFERENCES_PER_RECORD).map((difference) => {
      // As cleanDifference: a secret's path keeps no value but its mask (a mark stays as it is).
      if (!isSecretPath(difference.path) && !isSecretPath(difference.pattern)) return difference;
      const masked: JudgedDifference = { ...difference };
      if (difference.legacy !== undefined) masked.legacy = secretMark(difference.legacy);
      if (difference.translated !== undefined) masked.translated = secretMark(difference.translated);
      return masked;
    }),
    ...(record.dryRun ? { dryRun: { side: record.dryRun.side, calls: record.dryRun.calls.slice(0, MAX_DRY_RUN_CALLS) } } : {}),
  }) as ComparisonRecord;
  delete rechecked.tally;
  return rechecked;
}

const key = (route: string, method: string): string => `${method} ${route}`;

function methodsOfDeclaration(declaration: RouteDeclaration): string[] {
  const methods = [...(declaration.methods ?? []), ...(declaration.method ? [declaration.method] : []), ...(declaration.readOnlyPost ? ['POST'] : [])];
  return [...new Set(methods.map((m) => m.toUpperCase()))];
}

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

export function createParityStore(options: {
  mappings: readonly RouteDeclaration[];
  registry: Registry;
  maxRecords: number;
  now?: () => number;
}): LocalParityStore {
  const now = options.now ?? Date.now;
  const maxRecords = Math.max(0, Math.floor(options.maxRecords));
  const declarations = new Map<string, Declared>();
  const knownRoutes = new Set<string>();
  for (const mapping of options.mappings) {
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

  const stats = new Map<string, RouteStats>();
  const ring: ComparisonRecord[] = [];
  let ringNext = 0;

  const routeLabel = (route: string): string => (knownRoutes.has(route) ? route : UNMAPPED_ROUTE);
  const methodLabel = (method: string): string => {
    const upper = method.toUpperCase();
    // A HEAD is a GET without its body: counted with the route's GET, as the modes route it.
    if (upper === 'HEAD') return 'GET';
    return HTTP_METHODS.has(upper) ? upper : 'OTHER';
  };

  function declaredOf(route: string, method: string): Declared {
    if (route === UNMAPPED_ROUTE) return { fidelity: UNMAPPED_ROUTE, summary: 'v2 paths no mapping declares', knownGaps: [] };
    return declarations.get(key(route, method)) ?? { fidelity: 'unsupported', summary: `no ${method} mapping for this route`, knownGaps: [] };
  }

  function statsOf(rawRoute: string, rawMethod: string): RouteStats {
    const route = routeLabel(rawRoute);
    const method = methodLabel(rawMethod);
    let entry = stats.get(key(route, method));
    if (!entry) {
      entry = { route, method, mode: null, requests: 0, byMode: {}, outcomes: zeroOutcomes(), agreedOnSuccess: 0, patterns: new Map() };
      stats.set(key(route, method), entry);
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
  function noteTally(entry: RouteStats, tally: readonly PatternTally[], record: ComparisonRecord): void {
    for (const row of tally) {
      if (!VERDICTS.includes(row.verdict) || !DIFFERENCE_KINDS.includes(row.kind) || !Number.isSafeInteger(row.count) || row.count < 0) continue;
      const placeholder: PatternExample = { at: record.at, request: record.request, path: cleanText(row.pattern), kind: row.kind, verdict: row.verdict };
      const patternStats = statsOfPattern(entry, cleanText(row.pattern), placeholder);
      patternStats.counts[row.verdict] += row.count;
      patternStats.kinds[row.kind] = (patternStats.kinds[row.kind] ?? 0) + row.count;
    }
  }

  function patternsOf(entry: RouteStats | undefined): PatternParity[] {
    if (!entry) return [];
    return [...entry.patterns].map(([pattern, p]) => ({ pattern, ...p.counts, kinds: { ...p.kinds }, example: p.example, reportable: isReportable(p.counts) })).sort(byWorst);
  }

  function routeParity(route: string, method: string): RouteParity {
    const entry = stats.get(key(route, method));
    const declared = declaredOf(route, method);
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

  const listeners: Array<(event: ParityEvent) => void> = [];
  const emit = (event: ParityEvent): void => {
    for (const listener of listeners) listener(event);
  };

  function applyUsage(route: string, method: string, mode: RouteMode, count: number): { entry: RouteStats; mode: RouteMode } {
    const entry = statsOf(route, method);
    const label = ROUTE_MODES.includes(mode) ? mode : 'translate';
    entry.requests += count;
    entry.byMode[label] = (entry.byMode[label] ?? 0) + count;
    entry.mode = label;
    return { entry, mode: label };
  }

  function applyDropped(route: string, method: string, count: number): RouteStats {
    const entry = statsOf(route, method);
    entry.outcomes.dropped += count;
    return entry;
  }

  /** What applyRecord does with matches that have nothing to keep, `count` at once. */
  function applyMatched(route: string, method: string, mode: ComparisonRecord['mode'], count: number, onSuccess: number): void {
    const entry = statsOf(route, method);
    entry.outcomes.match += count;
    entry.agreedOnSuccess += Math.min(onSuccess, count);
    if (entry.mode === null) entry.mode = mode;
  }

  /** Counts a record and keeps it (cleaned by `clean`): the part a local record and a remote one share. */
  function applyRecord(record: ComparisonRecord, clean: typeof cleanRecord): { entry: RouteStats; outcome: Outcome; cleaned: ComparisonRecord } {
    const entry = statsOf(record.route, record.method);
    const outcome = OUTCOMES.includes(record.outcome) ? record.outcome : 'error';
    entry.outcomes[outcome] += 1;
    const legacyStatus = record.status.legacy;
    if ((outcome === 'match' || outcome === 'noise') && legacyStatus !== null && legacyStatus >= 200 && legacyStatus < 300) entry.agreedOnSuccess += 1;
    if (entry.mode === null) entry.mode = record.mode;
    const cleaned = clean(record, entry.route, entry.method, outcome);
    // Examples first, so a pattern the tally adds keeps a real example when there is one.
    for (const difference of cleaned.differences) notePattern(entry, difference, cleaned, record.tally === undefined);
    if (record.tally) noteTally(entry, record.tally, cleaned);
    if (outcome !== 'match' && maxRecords > 0) {
      if (ring.length < maxRecords) ring.push(cleaned);
      else ring[ringNext] = cleaned;
      ringNext = (ringNext + 1) % maxRecords;
    }
    return { entry, outcome, cleaned };
  }

  return {
    noteUsage(route, method, mode) {
      const { entry, mode: label } = applyUsage(route, method, mode, 1);
      usage.inc({ route: entry.route, method: entry.method, mode: label });
      if (listeners.length > 0) emit({ kind: 'usage', route: entry.route, method: entry.method, mode: label, count: 1 });
    },

    record(record) {
      const { entry, outcome, cleaned } = applyRecord(record, cleanRecord);
      results.inc({ route: entry.route, outcome });
      if (listeners.length === 0) return;
      if (outcome === 'match' && cleaned.differences.length === 0 && (record.tally?.length ?? 0) === 0) {
        const onSuccess = record.status.legacy !== null && record.status.legacy >= 200 && record.status.legacy < 300 ? 1 : 0;
        emit({ kind: 'matched', route: entry.route, method: entry.method, mode: cleaned.mode, count: 1, onSuccess });
      } else emit({ kind: 'record', record: record.tally ? { ...cleaned, tally: cleanTally(record.tally) } : cleaned });
    },

    dropped(route, method) {
      const entry = applyDropped(route, method, 1);
      results.inc({ route: entry.route, outcome: 'dropped' });
      if (listeners.length > 0) emit({ kind: 'dropped', route: entry.route, method: entry.method, count: 1 });
    },

    applyRemote(event) {
      if (event.kind === 'usage') applyUsage(event.route, event.method, event.mode, event.count);
      else if (event.kind === 'dropped') applyDropped(event.route, event.method, event.count);
      else if (event.kind === 'matched') applyMatched(event.route, event.method, event.mode, event.count, event.onSuccess);
      else applyRecord(event.record, recheckRecord);
    },

    onLocalEvent(listener) {
      listeners.push(listener);
    },

    observeSide(route, side, seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) return;
      sideDuration.observe({ route: routeLabel(route), side: side === 'legacy' ? 'legacy' : 'translated' }, seconds);
    },

    report(reportOptions = {}) {
      const keys = new Map<string, { route: string; method: string }>();
      for (const k of declarations.keys()) {
        const space = k.indexOf(' ');
        keys.set(k, { method: k.slice(0, space), route: k.slice(space + 1) });
      }
      for (const [k, entry] of stats) keys.set(k, { route: entry.route, method: entry.method });
      const routes = [...keys.values()].map(({ route, method }) => routeParity(route, method));
      routes.sort(
        (a, b) =>
          b.outcomes.mismatch - a.outcomes.mismatch ||
          b.outcomes.error - a.outcomes.error ||
          b.requests - a.requests ||
          a.route.localeCompare(b.route) ||
          a.method.localeCompare(b.method),
      );

      const worstPatterns = routes
        .flatMap((r) => r.worstPatterns.map((p) => ({ route: r.route, method: r.method, ...p })))
        .sort((a, b) => byWorst(a, b) || a.route.localeCompare(b.route))
        .slice(0, WORST_OVERALL);

      const usageRows: RouteUsage[] = routes
        .filter((r) => r.requests > 0)
        .sort((a, b) => b.requests - a.requests || a.route.localeCompare(b.route) || a.method.localeCompare(b.method))
        .map((r) => {
          const declared = declaredOf(r.route, r.method);
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
        generatedAt: new Date(now()).toISOString(),
        totals: { requests: routes.reduce((n, r) => n + r.requests, 0), outcomes },
        routes,
        worstPatterns,
        usage: usageRows,
        recent,
        recordsKept: ring.length,
        maxRecords,
      };
    },
  };
}
