import { redactKeys } from '../ops/redact.ts';
import { isSecretPath, maskSecrets, secretMark } from './secrets.ts';
import type { ComparisonRecord, DifferenceKind, DryRunCall, JudgedDifference, Outcome, PatternTally, Verdict } from './types.ts';

/**
 * What the parity store keeps of a comparison, cleaned and bounded (parity-store.ts): every
 * string redacted again (records arrive redacted, but answer values can still carry key-shaped
 * text), secrets masked, text and values cut to a known size, so memory has a known bound
 * (patterns x examples, ring x differences). A record of this replica is cleaned in full
 * (cleanRecord); another replica's, cleaned there already, is only redacted and masked again
 * (recheckRecord). Also the vocabulary every kept difference is checked against.
 */

export const DIFFERENCE_KINDS: readonly DifferenceKind[] = ['missing', 'extra', 'type', 'value', 'length'];
export const VERDICTS: readonly Verdict[] = ['mismatch', 'noise', 'gap', 'tolerated'];
/** Where patterns beyond MAX_PATTERNS_PER_ROUTE (parity-recording.ts) are counted, so no count is lost. */
export const OTHER_PATTERNS = '(other patterns)';

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

/** A difference rebuilt field by field: text cut, values bounded, a secret's value masked. */
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
export function cleanRecord(record: ComparisonRecord, route: string, method: string, outcome: Outcome): ComparisonRecord {
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
export function cleanTally(tally: readonly PatternTally[]): PatternTally[] {
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
export function recheckRecord(record: ComparisonRecord, route: string, method: string, outcome: Outcome): ComparisonRecord {
  const rechecked = redactDeep({
    ...record,
    route,
    method,
    outcome,
    differences: record.differences.slice(0, MAX_DIFFERENCES_PER_RECORD).map((difference) => {
      // As cleanDifference: a secret's path keeps no value but its mask (a mark stays as it is),
      // and secrets nested in a value (a channel's configuration.url) are masked.
      const secret = isSecretPath(difference.path) || isSecretPath(difference.pattern);
      const masked: JudgedDifference = { ...difference };
      if (difference.legacy !== undefined) masked.legacy = secret ? secretMark(difference.legacy) : maskSecrets(difference.legacy);
      if (difference.translated !== undefined) masked.translated = secret ? secretMark(difference.translated) : maskSecrets(difference.translated);
      return masked;
    }),
    ...(record.dryRun ? { dryRun: { side: record.dryRun.side, calls: record.dryRun.calls.slice(0, MAX_DRY_RUN_CALLS).map((call) => ({ operation: call.operation, variables: maskSecrets(call.variables) })) } } : {}),
  }) as ComparisonRecord;
  delete rechecked.tally;
  return rechecked;
}
