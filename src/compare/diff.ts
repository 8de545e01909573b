import { maskSecrets } from './secrets.ts';
import { decodeAnswerBody } from './answer.ts';
import { diffValues, headerDifferences, TooDeepError } from './diff-walk.ts';
import { noiseOf, type NoiseIndex } from './diff-noise.ts';
import { DEFAULT_THRESHOLDS, matchesPattern, withinThreshold, type Threshold } from './thresholds.ts';
import type { AnswerSnapshot, Difference, JudgedDifference, PatternTally, Verdict } from './types.ts';

// The engine's parts, re-exported: importers keep reading them from here.
export { diffValues, MAX_DEPTH, storedValue, TooDeepError } from './diff-walk.ts';
export { ancestorPaths, NOISE_FLOOR, NOISE_SPREAD } from './diff-noise.ts';

/**
 * The diff engine: typed differences between the legacy answer and the translated one, per
 * field path, then judged (gap, tolerated, noise, mismatch). Pure and linear in the size of the
 * answers. This module judges and concludes (compareAnswers); diff-walk.ts finds the
 * differences (paths, array matching, stored values), diff-noise.ts tells where the legacy
 * answer moves by itself.
 */

export interface DiffRules {
  /** Mappings' knownGaps paths; selectors such as `[id=5]` are read as `[]`. */
  gapPatterns: readonly string[];
  /** Configured thresholds; DEFAULT_THRESHOLDS always apply beside them. */
  thresholds: readonly Threshold[];
}

export interface Comparison {
  outcome: 'match' | 'mismatch' | 'noise' | 'error';
  /** At most MAX_KEPT_DIFFERENCES, mismatches first. */
  differences: JudgedDifference[];
  /** How many differences there were in all. */
  total: number;
  /** Every difference counted by pattern, kind and verdict (at most MAX_TALLY_ENTRIES rows). */
  tally: PatternTally[];
  /** Why the bodies could not be compared (outcome `error`): a short fixed text. */
  error?: string;
}

export const MAX_KEPT_DIFFERENCES = 50;
/** Distinct (pattern, kind, verdict) rows counted per comparison; the rest fold into OTHER_PATTERN. */
export const MAX_TALLY_ENTRIES = 500;
export const OTHER_PATTERN = '(other patterns)';

// ---------------------------------------------------------------------------------------------
// Judging.

const VERDICT_RANK: Record<Verdict, number> = { mismatch: 0, noise: 1, tolerated: 2, gap: 3 };

function gapPatternOf(path: string): string {
  return path.replace(/\[[^\]]*\]/g, '[]');
}

function isUnder(pattern: string, gap: string): boolean {
  return pattern === gap || (pattern.startsWith(gap) && (pattern[gap.length] === '.' || pattern[gap.length] === '['));
}

function judge(d: Difference, gaps: readonly string[], thresholds: readonly Threshold[], noise: NoiseIndex | undefined): Verdict {
  if (gaps.some((gap) => isUnder(d.pattern, gap))) return 'gap';
  if (d.kind === 'value' && typeof d.legacy === 'number' && typeof d.translated === 'number') {
    const [a, b] = [d.legacy, d.translated];
    if (thresholds.some((t) => withinThreshold(t, a, b) && matchesPattern(t.pattern, d.pattern))) return 'tolerated';
  }
  if (noise?.covers(d)) return 'noise';
  return 'mismatch';
}

/** Every judged difference counted by (pattern, kind, verdict), bounded by MAX_TALLY_ENTRIES rows. */
function tallyOf(judged: readonly JudgedDifference[]): PatternTally[] {
  const rows = new Map<string, PatternTally>();
  for (const d of judged) {
    let key = `${d.pattern}\0${d.kind}\0${d.verdict}`;
    let pattern = d.pattern;
    if (!rows.has(key) && rows.size >= MAX_TALLY_ENTRIES - 20) {
      pattern = OTHER_PATTERN;
      key = `${pattern}\0${d.kind}\0${d.verdict}`;
    }
    const row = rows.get(key);
    if (row) row.count++;
    else rows.set(key, { pattern, kind: d.kind, verdict: d.verdict, count: 1 });
  }
  return [...rows.values()];
}

function conclude(differences: Difference[], rules: DiffRules, noise: NoiseIndex | undefined, error?: string): Comparison {
  const gaps = rules.gapPatterns.filter((g) => g !== '').map(gapPatternOf);
  const thresholds = [...rules.thresholds, ...DEFAULT_THRESHOLDS];
  const judged: JudgedDifference[] = differences.map((d) => ({ ...d, verdict: judge(d, gaps, thresholds, noise) }));
  const has = (verdict: Verdict): boolean => judged.some((d) => d.verdict === verdict);
  // Array.prototype.sort is stable: within a verdict the legacy answer's order stays.
  const tally = tallyOf(judged);
  const kept = judged.sort((a, b) => VERDICT_RANK[a.verdict] - VERDICT_RANK[b.verdict]).slice(0, MAX_KEPT_DIFFERENCES);
  const outcome = error !== undefined ? 'error' : has('mismatch') ? 'mismatch' : has('noise') ? 'noise' : 'match';
  return { outcome, differences: kept, total: judged.length, tally, ...(error === undefined ? {} : { error }) };
}

/**
 * Compares the legacy answer (primary) with the translated one. `legacyAgain`, a second legacy
 * call made for the same request, turns whatever moves between two legacy reads into noise.
 */
export function compareAnswers(input: { legacy: AnswerSnapshot; legacyAgain?: AnswerSnapshot; translated: AnswerSnapshot; rules: DiffRules }): Comparison {
  const { legacy, legacyAgain, translated, rules } = input;
  const headers = headerDifferences(legacy, translated);
  const legacyBody = decodeAnswerBody(legacy.contentType, legacy.body);
  const translatedBody = decodeAnswerBody(translated.contentType, translated.body);
  if (!legacyBody.ok || !translatedBody.ok) {
    const reason = !legacyBody.ok ? `legacy: ${legacyBody.reason}` : `translated: ${(translatedBody as { reason: string }).reason}`;
    return conclude(headers, rules, undefined, reason);
  }
  try {
    // Secrets the legacy API echoes (a channel's service_key, auth_password, headers) are masked
    // in both answers before anything is compared or kept (src/compare/secrets.ts).
    const [legacyValue, translatedValue] = [maskSecrets(legacyBody.value), maskSecrets(translatedBody.value)];
    const noise = noiseOf(legacy, legacyValue, legacyAgain);
    return conclude([...headers, ...diffValues(legacyValue, translatedValue)], rules, noise);
  } catch (error) {
    if (error instanceof TooDeepError) return conclude(headers, rules, undefined, error.message);
    throw error;
  }
}
