import type { RouteMode } from '../ops/route-modes.ts';

/**
 * The vocabulary shared by the migration modes (src/modes/), the diff engine (diff.ts) and the
 * parity store and its pages (parity-store.ts, src/bridge/): what one comparison of a legacy
 * answer with a translated one produces. Nothing here holds an API key: requests are kept as
 * redacted paths, callers not at all.
 */

export type DifferenceKind = 'missing' | 'extra' | 'type' | 'value' | 'length';

/** One difference between the legacy answer (primary) and the translation, at one field path. */
export interface Difference {
  /**
   * Concrete path: `applications[id=5].name`, `metric_data.metrics[0].timeslices[2].values.call_count`;
   * `(status)`, `(content-type)` and `(link).<rel>` (`(link).next`) for the status, the media
   * type and each Link relation; `` for the body root.
   */
  path: string;
  /**
   * The path with element selectors dropped (`applications[].name`), in the notation of
   * mappings' knownGaps paths: what reports aggregate by and rules match.
   */
  pattern: string;
  kind: DifferenceKind;
  /** The legacy value (absent when missing there), shortened for storage. */
  legacy?: unknown;
  /** The translated value (absent when missing there), shortened for storage. */
  translated?: unknown;
}

/**
 * What a difference means: a real `mismatch`; `noise` (the two legacy answers differ there too);
 * `gap` (a mapping documents it); `tolerated` (inside the path's numeric threshold).
 */
export type Verdict = 'mismatch' | 'noise' | 'gap' | 'tolerated';

export interface JudgedDifference extends Difference {
  verdict: Verdict;
}

/**
 * How ready a route is to be translated: from its fidelity, then from what comparisons found.
 * `comparison errors` and `dry runs only` say why a compared route is not called safe.
 */
export type Readiness = 'unsupported' | 'passthrough only' | 'differs' | 'comparison errors' | 'dry runs only' | 'safe to translate' | 'not compared yet';

/**
 * One comparison's outcome: `match` (no difference left after judging), `mismatch`,
 * `noise` (only noise), `error` (a side failed or could not be compared), `dropped` (shadow
 * work shed under load: counted, never run), `dry_run` (a write: the other side only recorded
 * what it would have sent).
 */
export type Outcome = 'match' | 'mismatch' | 'noise' | 'error' | 'dropped' | 'dry_run';

/**
 * How many differences of one kind and verdict a comparison found at one field pattern: the
 * counts behind the report, complete even when only the first differences are kept as examples.
 */
export interface PatternTally {
  pattern: string;
  kind: DifferenceKind;
  verdict: Verdict;
  count: number;
}

/** One side's answer, as the diff engine reads it. */
export interface AnswerSnapshot {
  status: number;
  contentType: string;
  /** The body text (JSON or v2 XML). */
  body: string;
  link: string | null;
  /** Time to the whole answer. */
  ms: number;
}

/** A mutation a dry run would have sent (translated side) or a legacy request it would have made. */
export interface DryRunCall {
  operation: string;
  variables: Record<string, unknown>;
}

/** One comparison, as stored (bounded) and shown; every string in it is redacted. */
export interface ComparisonRecord {
  id: string;
  /** Epoch ms. */
  at: number;
  /** The route template (`/v2/applications/{id}.{format}`) or the passthrough label. */
  route: string;
  method: string;
  mode: Extract<RouteMode, 'compare' | 'candidate'>;
  /** Path and query as sent, with anything key-shaped masked. */
  request: string;
  outcome: Outcome;
  status: { legacy: number | null; translated: number | null };
  /** Capped (at most 50), values shortened. */
  differences: JudgedDifference[];
  /** Every difference counted by pattern, kind and verdict (bounded by distinct patterns); absent: count `differences`. */
  tally?: PatternTally[];
  ms: { legacy: number | null; translated: number | null };
  /** For writes: what the side that did not answer would have sent. */
  dryRun?: { side: 'translated' | 'legacy'; calls: DryRunCall[] };
  /** Why the comparison is an error (a side's failure), redacted. */
  error?: string;
}
