/**
 * Numeric tolerances per field path (COMPARE_THRESHOLDS): where a translated number may differ
 * from the legacy one and still count as the same answer. Metric values computed by NRQL and by
 * the REST rules differ in their last bits, and some fields (rates, averages) legitimately move
 * a little between two reads.
 *
 * Syntax: `PATTERN=rel:0.05,abs:1;PATTERN2=abs:0.5`. A PATTERN is a dotted field pattern in the
 * notation of difference patterns (`applications[].application_summary.response_time`), where a
 * `*` inside a segment matches any text in that one segment (`*` alone: any one segment,
 * `timeslices[]` included, since `[]` belongs to its segment) and a `**` segment matches any
 * number of segments, none included. A number is within an entry when |a-b| <= abs or
 * |a-b| <= rel * max(|a|,|b|).
 */

export interface Threshold {
  pattern: string;
  absolute?: number;
  relative?: number;
}

export class ThresholdSyntaxError extends Error {
  override name = 'ThresholdSyntaxError';
}

/**
 * Always applied beside the configured thresholds: a relative 1e-9 everywhere absorbs float
 * formatting (a value printed by Ruby and re-read vs computed in JavaScript), never a real change.
 */
export const DEFAULT_THRESHOLDS: readonly Threshold[] = Object.freeze([Object.freeze({ pattern: '**', relative: 1e-9 })]);

// A segment: optional name text (no separators, `*` as a wildcard), then any number of `[]`;
// or `**` alone. Names are what v2 keys look like; `[]` marks an array's elements.
const SEGMENT = /^(?:\*\*|[A-Za-z0-9_\-*()]*(?:\[\])*)$/;
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function patternProblem(pattern: string): string | undefined {
  if (pattern === '') return 'the pattern is empty';
  for (const segment of pattern.split('.')) {
    if (segment === '') return 'the pattern has an empty segment';
    if (!SEGMENT.test(segment)) return `segment "${segment}" is not a field name, *, ** or name[]`;
  }
  return undefined;
}

function parseEntry(entry: string, index: number): Threshold {
  const fail = (why: string): never => {
    throw new ThresholdSyntaxError(`threshold entry ${index + 1} "${entry}": ${why} (expected PATTERN=rel:N,abs:N)`);
  };
  const equals = entry.indexOf('=');
  if (equals === -1) fail('no "="');
  const pattern = entry.slice(0, equals).trim();
  const problem = patternProblem(pattern);
  if (problem) fail(problem);
  const threshold: Threshold = { pattern };
  const options = entry.slice(equals + 1).split(',').map((o) => o.trim());
  if (options.length === 1 && options[0] === '') fail('no rel: or abs: option');
  for (const option of options) {
    const match = /^(rel|abs):(.*)$/.exec(option);
    if (!match) fail(`"${option}" is not rel:N or abs:N`);
    const [, name, text] = match as RegExpExecArray;
    const value = (text ?? '').trim();
    if (!NUMBER.test(value)) fail(`"${option}" needs a non-negative decimal number`);
    const key = name === 'rel' ? 'relative' : 'absolute';
    if (threshold[key] !== undefined) fail(`${name}: is given twice`);
    const number = Number(value);
    if (!Number.isFinite(number)) fail(`"${option}" is not a finite number`);
    threshold[key] = number;
  }
  return threshold;
}

/** Parses COMPARE_THRESHOLDS; empty entries (a trailing `;`) are allowed. Throws ThresholdSyntaxError. */
export function parseThresholds(text: string): Threshold[] {
  const entries = text.split(';');
  const thresholds: Threshold[] = [];
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    if (entry !== '') thresholds.push(parseEntry(entry, index));
  });
  return thresholds;
}

/** The text parseThresholds reads back into the same thresholds. */
export function formatThresholds(thresholds: readonly Threshold[]): string {
  return thresholds
    .map((t) => {
      const options: string[] = [];
      if (t.relative !== undefined) options.push(`rel:${t.relative}`);
      if (t.absolute !== undefined) options.push(`abs:${t.absolute}`);
      return `${t.pattern}=${options.join(',')}`;
    })
    .join(';');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

type SegmentTest = '**' | ((segment: string) => boolean);

const compiled = new Map<string, SegmentTest[]>();

function compile(pattern: string): SegmentTest[] {
  let tests = compiled.get(pattern);
  if (tests) return tests;
  tests = pattern.split('.').map((segment): SegmentTest => {
    if (segment === '**') return '**';
    if (!segment.includes('*')) return (s) => s === segment;
    const regex = new RegExp(`^${segment.split('*').map(escapeRegExp).join('[^.]*')}$`);
    return (s) => regex.test(s);
  });
  // Patterns come from configuration: few, so the cache stays small; bound it anyway.
  if (compiled.size > 1000) compiled.clear();
  compiled.set(pattern, tests);
  return tests;
}

/**
 * Whether a glob `pattern` (`**.values.*`) covers a difference's `fieldPattern`
 * (`metric_data.metrics[].timeslices[].values.call_count`).
 */
export function matchesPattern(pattern: string, fieldPattern: string): boolean {
  const tests = compile(pattern);
  const segments = fieldPattern.split('.');
  // Positions (in segments) the pattern prefix can have consumed: a set, so `**` stays linear.
  let positions = new Set<number>([0]);
  for (const test of tests) {
    const next = new Set<number>();
    for (const at of positions) {
      if (test === '**') {
        for (let i = at; i <= segments.length; i++) next.add(i);
      } else if (at < segments.length && test(segments[at] as string)) {
        next.add(at + 1);
      }
    }
    if (next.size === 0) return false;
    positions = next;
  }
  return positions.has(segments.length);
}

/** Whether two numbers are within one threshold's tolerance. */
export function withinThreshold(threshold: Threshold, a: number, b: number): boolean {
  const delta = Math.abs(a - b);
  if (threshold.absolute !== undefined && delta <= threshold.absolute) return true;
  if (threshold.relative !== undefined && delta <= threshold.relative * Math.max(Math.abs(a), Math.abs(b))) return true;
  return false;
}
