import type { AnswerSnapshot, ComparisonRecord, JudgedDifference, Outcome, PatternTally } from '../compare/types.ts';
import type { RouteMode } from '../ops/route-modes.ts';

/**
 * Where the other pieces of the migration modes plug in: the diff engine (src/compare/diff.ts)
 * is a Comparer, the parity store (src/compare/parity-store.ts) a ParitySink. Nothing handed to
 * either holds an API key.
 */
export interface Comparer {
  /** In-process, or on the diff engine's thread (src/compare/thread-comparer.ts): then a promise. */
  (input: { legacy: AnswerSnapshot; legacyAgain?: AnswerSnapshot; translated: AnswerSnapshot; gapPatterns: readonly string[] }): ComparerJudgement | Promise<ComparerJudgement>;
}

export interface ComparerJudgement {
  outcome: Extract<Outcome, 'match' | 'mismatch' | 'noise' | 'error'>;
  differences: JudgedDifference[];
  /** All differences counted by pattern (the kept `differences` are capped). */
  tally?: PatternTally[];
}

export interface ParitySink {
  /** Every caller /v2 request: its route label (template, `unmapped` or `unmatched`) and mode. */
  noteUsage(route: string, method: string, mode: RouteMode): void;
  record(record: ComparisonRecord): void;
  /** Shadow work shed because the queue was full. */
  dropped(route: string, method: string): void;
  observeSide(route: string, side: 'legacy' | 'translated', seconds: number): void;
}
