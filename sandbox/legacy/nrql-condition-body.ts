/**
 * The v2 NRQL condition contract both faces keep (the legacy face validates bodies with it; the
 * NerdGraph face turns its inputs into v2 fields and validates them with it too). Written field
 * by field from New Relic's two REST pages (docs-website, src/content/docs/alerts/scale-automate/
 * rest-api/), read at docs-website commit 131498c (field names) and 0bc3792 (calls):
 *
 * - FN = alerts-conditions-api-field-names.mdx, cited by its collapser id;
 * - CALLS = rest-api-calls-alerts.mdx, "Conditions for NRQL" (#conditions-nrql), its
 *   create-nrql-conditions and update-nrql-conditions examples.
 *
 * Where the pages are silent the choice is the sandbox's and UNCONFIRMED (sandbox/README.md): the
 * JSON types of the answer's signal and expiration values (the documented create body's types are
 * used: aggregation_window, fill_value and expiration_duration as text, the delay, timer and slide
 * as numbers), since_value null when the condition has no evaluation offset, a term duration in
 * minutes that is not whole ("1.5" for 90 s) and the 300-second lower bound of the time limit
 * (NerdGraph's, AlertsNrqlConditionStaticInput.violationTimeLimitSeconds).
 */
import { z } from 'zod';
import type { ConditionFields } from '../alerts.ts';
import type { JsonValue } from './wire.ts';

export const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** A list: an array as is; an XML list (`{term: [...]}` or `{term: {...}}`) unwrapped; blank text as empty. */
export const asList = (value: unknown): unknown => {
  if (Array.isArray(value) || value === undefined || value === null) return value;
  if (value === '') return [];
  if (typeof value === 'object') {
    const items = Object.values(value as Record<string, unknown>);
    if (items.length === 1) return Array.isArray(items[0]) ? items[0] : [items[0]];
  }
  return value;
};
/** XML and form bodies send an empty element for "none": null, as JSON's null. */
const blankAsNull = (value: unknown): unknown => (value === '' ? null : value);

const Flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((flag) => flag === 'true')], { error: 'must be true or false' });
const Whole = z.union([z.number().int().nonnegative(), z.string().trim().regex(/^\d{1,9}$/).transform(Number)], { error: 'must be a whole number' });
const wholeIn = (low: number, high: number, unit: string) => Whole.refine((n) => n >= low && n <= high, `must be ${low} to ${high} ${unit}`);
const NumberText = z.union([z.number().finite().transform(String), z.string().trim().regex(NUMERIC)], { error: 'must be a number' });
const optionalNull = <T extends z.ZodType>(schema: T) => z.preprocess(blankAsNull, schema.nullable().optional());

/** FN #terms_operator: "above, above_or_equals (NRQL conditions only), below, below_or_equals (NRQL conditions only), equal, not_equals (NRQL conditions only)". */
export const NRQL_OPERATORS = ['above', 'above_or_equals', 'below', 'below_or_equals', 'equal', 'not_equals'] as const;

/**
 * FN #terms_duration: "the time (in minutes) for the condition to persist". Minutes that are not
 * whole are kept as given when they are whole seconds ("1.5" is 90 s, as NerdGraph can hold it),
 * in canonical text; at most a day (NerdGraph's thresholdDuration bound).
 */
const Minutes = z
  .union([z.number().finite(), z.string().trim().regex(NUMERIC).transform(Number)], { error: 'must be a number of minutes' })
  .refine((minutes) => minutes > 0 && minutes <= 1440 && Number.isInteger(Math.round(minutes * 60 * 1e6) / 1e6), 'must be 1 second to 1440 minutes, in whole seconds')
  .transform((minutes) => String(Math.round(minutes * 60) / 60));

const Term = z.object({
  duration: Minutes,
  operator: z.enum(NRQL_OPERATORS, { error: `must be one of ${NRQL_OPERATORS.join(', ')}` }),
  // FN #terms_priority: critical or warning.
  priority: z.enum(['critical', 'warning']),
  // FN #terms_threshold: "a numeric value"; NRQL thresholds may be negative in NerdGraph (Float).
  threshold: NumberText,
  // FN #terms_time_function: all or any.
  time_function: z.enum(['all', 'any']),
});

/** FN #nrql-query and #nrql-since: since_value is "Deprecated ... must be between 1 and 20"; the CALLS create example has none. */
const Nrql = z.object({
  // Kept as sent (FN #nrql-query says nothing of trimming; a Terraform heredoc ends in a newline).
  query: z.string({ error: 'is required' }).refine((query) => query.trim() !== '', "can't be blank").max(4096, 'is too long (maximum is 4096 characters)'),
  since_value: optionalNull(wholeIn(1, 20, 'minutes').transform(String)),
});

const Method = z.preprocess((value) => (typeof value === 'string' ? value.trim().toUpperCase() : value), z.enum(['EVENT_FLOW', 'CADENCE', 'EVENT_TIMER'], { error: 'must be one of EVENT_FLOW, CADENCE, EVENT_TIMER' }));

/** FN #signal_*: every signal key optional; defaults applied by `settled` below. */
const Signal = z.object({
  // FN #signal_aggregation_window: "Default is 60 seconds. Maximum is 6 hours."; at least 30 s (NerdGraph's input).
  aggregation_window: optionalNull(wholeIn(30, 21600, 'seconds')),
  // FN #signal_aggregation_method: EVENT_FLOW (default), CADENCE, EVENT_TIMER.
  aggregation_method: optionalNull(Method),
  // FN #signal_aggregation_delay: "Default is 120 seconds"; FN #signal_aggregation_timer: "Default is 60 seconds".
  aggregation_delay: optionalNull(wholeIn(0, 1200, 'seconds')),
  aggregation_timer: optionalNull(wholeIn(5, 1200, 'seconds')),
  // FN #signal_slide_by: "must divide evenly into your aggregation window ... must also be less than the window".
  slide_by: optionalNull(wholeIn(1, 21600, 'seconds')),
  // FN #signal_fill_option: none (default), static, last_value; FN #signal_fill_value: "The default is 0".
  fill_option: optionalNull(z.enum(['none', 'static', 'last_value'])),
  fill_value: optionalNull(NumberText),
  // FN #signal_evaluation_offset: deprecated, the same offset as since_value.
  evaluation_offset: optionalNull(wholeIn(1, 20, 'windows')),
});

/** FN #expiration_*: expiration_duration "The default is null"; both flags "The default is false". */
const Expiration = z.object({
  expiration_duration: optionalNull(wholeIn(30, 172800, 'seconds')),
  open_violation_on_expiration: Flag.default(false),
  close_violations_on_expiration: Flag.default(false),
});

const DAY = 86_400;
const Body = z.object({
  // CALLS create-nrql-conditions: "If you omit type or set it as static, it will default to standard NRQL alerting."
  type: z.enum(['static', 'baseline', 'outlier']).default('static'),
  name: z.string({ error: "can't be blank" }).trim().min(1, "can't be blank").max(255, 'is too long (maximum is 255 characters)'),
  // FN #required and #enabled: "enabled (defaults to false)", "The default is false."
  enabled: Flag.default(false),
  // FN #runbook_url: optional; '' is "none" (UNCONFIRMED) and clears it.
  runbook_url: z.preprocess((value) => (value === null ? '' : value), z.string({ error: 'must be text' }).max(2048, 'is too long (maximum is 2048 characters)')).default(''),
  // FN #value_function: single_value or sum.
  value_function: z.enum(['single_value', 'sum']).default('single_value'),
  baseline_direction: z.enum(['upper_only', 'lower_only', 'upper_and_lower']).optional(),
  // Outlier conditions (rest-v2-shapes.md: expected_groups, ignore_overlap).
  expected_groups: optionalNull(Whole.refine((n) => n >= 1, 'must be at least 1')),
  ignore_overlap: optionalNull(Flag),
  // FN #violation_time_limit_seconds: "Default is 259,200 seconds (3 days). Maximum is 30 days."
  violation_time_limit_seconds: wholeIn(300, 30 * DAY, 'seconds').default(3 * DAY),
  terms: z.preprocess(asList, z.array(Term).min(1, 'must hold at least one term')),
  nrql: Nrql,
  signal: z.preprocess(blankAsNull, Signal.nullable().default({})),
  expiration: z.preprocess(blankAsNull, Expiration.nullable().default({ open_violation_on_expiration: false, close_violations_on_expiration: false })),
});

type Parsed = z.infer<typeof Body>;

/** The checks across fields, as `path: message` pairs, and the stored order with every default. */
function settled(c: Parsed, ctx: z.RefinementCtx): ConditionFields {
  const signal = c.signal ?? {};
  const expiration = c.expiration ?? { open_violation_on_expiration: false, close_violations_on_expiration: false };
  const offset = c.nrql.since_value ?? (signal.evaluation_offset === null || signal.evaluation_offset === undefined ? null : String(signal.evaluation_offset));
  const given = (value: unknown): boolean => value !== undefined && value !== null;
  const fail = (path: string[], message: string): void => ctx.addIssue({ code: 'custom', path, message });
  // FN #nrql-since and #signal_evaluation_offset: deprecated "in favor of an aggregation_method with either an aggregation_delay or aggregation_timer".
  if (offset !== null && (given(signal.aggregation_method) || given(signal.aggregation_delay) || given(signal.aggregation_timer))) {
    fail(['nrql', 'since_value'], 'cannot be set with signal aggregation_method, aggregation_delay or aggregation_timer');
  }
  if (c.nrql.since_value !== null && c.nrql.since_value !== undefined && given(signal.evaluation_offset) && String(signal.evaluation_offset) !== c.nrql.since_value) {
    fail(['signal', 'evaluation_offset'], 'must equal nrql.since_value');
  }
  const method = offset !== null ? null : (signal.aggregation_method ?? 'EVENT_FLOW');
  // FN #signal_aggregation_delay: "Used with event flow and cadence aggregation methods"; #signal_aggregation_timer:
  // "Required when using the EVENT_TIMER". The CALLS create example sends both with any method: the one the
  // method does not use is accepted and kept as null (UNCONFIRMED: what live v2 answers; no probe: it would have to write, and the probes are read-only).
  const window = signal.aggregation_window ?? 60;
  if (given(signal.slide_by) && (signal.slide_by! >= window || window % signal.slide_by! !== 0)) fail(['signal', 'slide_by'], 'must be less than the aggregation window and divide it evenly');
  // NerdGraph (nerdgraph-api-nrql-condition-alerts): "thresholdDuration must be a multiple of aggregationWindow".
  c.terms.forEach((term, index) => {
    if (Math.round(Number(term.duration) * 60) % window !== 0) fail(['terms', String(index), 'duration'], `must be a multiple of the aggregation window (${window} seconds)`);
  });
  const fillOption = signal.fill_option ?? 'none';
  // FN #signal_fill_value: "the value used by the fill_option custom value": kept only with fill_option static (the CALLS example sends it with any).
  if (c.type === 'baseline' && c.terms.some((term) => term.operator !== 'above')) fail(['terms'], 'must use operator above in a baseline condition');
  if (c.type === 'outlier' && c.terms.some((term) => term.operator !== 'above')) fail(['terms'], 'must use operator above in an outlier condition');
  if (c.type === 'outlier' && !given(c.expected_groups)) fail(['expected_groups'], 'is required in an outlier condition');
  if (c.type !== 'outlier' && (given(c.expected_groups) || given(c.ignore_overlap))) fail(['expected_groups'], 'is used only in an outlier condition');
  if (c.type !== 'baseline' && c.baseline_direction !== undefined) fail(['baseline_direction'], 'is used only in a baseline condition');
  const priorities = c.terms.map((term) => term.priority);
  if (new Set(priorities).size !== priorities.length) fail(['terms'], 'must hold at most one term per priority');
  return {
    type: c.type,
    name: c.name,
    enabled: c.enabled,
    runbook_url: c.runbook_url,
    value_function: c.value_function,
    ...(c.type === 'baseline' && { baseline_direction: c.baseline_direction ?? 'upper_only' }),
    // Every NRQL condition carries the outlier keys (rest-v2-shapes.md lists them for nrql_condition), null when not an outlier (UNCONFIRMED).
    expected_groups: c.type === 'outlier' ? (c.expected_groups ?? 1) : null,
    ignore_overlap: c.type === 'outlier' ? (c.ignore_overlap ?? false) : null,
    violation_time_limit_seconds: c.violation_time_limit_seconds,
    terms: c.terms,
    nrql: { query: c.nrql.query, since_value: offset },
    signal: {
      aggregation_window: String(window),
      aggregation_method: method,
      aggregation_delay: method === 'EVENT_FLOW' || method === 'CADENCE' ? (signal.aggregation_delay ?? 120) : null,
      aggregation_timer: method === 'EVENT_TIMER' ? (signal.aggregation_timer ?? 60) : null,
      slide_by: signal.slide_by ?? null,
      fill_option: fillOption,
      fill_value: fillOption === 'static' ? (signal.fill_value ?? '0') : null,
      evaluation_offset: offset === null ? null : Number(offset),
    },
    expiration: {
      expiration_duration: expiration.expiration_duration === null || expiration.expiration_duration === undefined ? null : String(expiration.expiration_duration),
      open_violation_on_expiration: expiration.open_violation_on_expiration,
      close_violations_on_expiration: expiration.close_violations_on_expiration,
    },
  };
}

/** A whole v2 NRQL condition (a create, or an update merged over the stored one) into the stored fields. */
export const NrqlConditionBody: z.ZodType<ConditionFields, unknown> = Body.transform(settled);

type Hash = Record<string, JsonValue>;
const hashOf = (value: JsonValue | undefined): Hash | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined);
const set = (value: JsonValue | undefined): boolean => value !== undefined && value !== null && value !== '';

/**
 * A PUT's fields over the stored condition. The given keys replace the stored ones; nrql, signal and
 * expiration merge key by key (the CALLS update example sends `nrql` with a query only, which must
 * not drop the condition's offset). An offset given replaces the aggregation method, delay and
 * timer, and a method, delay or timer given replaces the offset (FN #nrql-since: deprecated "in
 * favor of" them), so that an echo of a read and a switch from one to the other both validate.
 */
export function mergedNrqlUpdate(stored: ConditionFields, given: Hash): Hash {
  const merged: Hash = { ...stored };
  for (const [key, value] of Object.entries(given)) {
    if (key === 'id' || key === 'entity_guid') continue;
    const before = hashOf(stored[key]);
    const after = hashOf(value);
    // defineProperty: a `__proto__` key from a JSON body stays a plain (then refused) field, never a prototype.
    const next = before && after && ['nrql', 'signal', 'expiration'].includes(key) ? { ...before, ...after } : value;
    Object.defineProperty(merged, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  const givenNrql = hashOf(given.nrql) ?? {};
  const givenSignal = hashOf(given.signal) ?? {};
  const offsetGiven = set(givenNrql.since_value) || set(givenSignal.evaluation_offset);
  const aggregationGiven = set(givenSignal.aggregation_method) || set(givenSignal.aggregation_delay) || set(givenSignal.aggregation_timer);
  const nrql = hashOf(merged.nrql);
  const signal = hashOf(merged.signal);
  if (offsetGiven) {
    // One offset, under either spelling: the one given replaces both stored ones.
    const offset = set(givenNrql.since_value) ? givenNrql.since_value! : givenSignal.evaluation_offset!;
    if (nrql) merged.nrql = { ...nrql, since_value: offset };
    merged.signal = { ...(signal ?? {}), evaluation_offset: offset, ...(!aggregationGiven && { aggregation_method: null, aggregation_delay: null, aggregation_timer: null }) };
  }
  if (aggregationGiven && !offsetGiven) {
    if (nrql) merged.nrql = { ...nrql, since_value: null };
    if (signal) merged.signal = { ...hashOf(merged.signal), evaluation_offset: null };
  }
  // A method given alone takes its own default delay or timer, not the one of the method it replaces.
  if (set(givenSignal.aggregation_method) && !set(givenSignal.aggregation_delay) && !set(givenSignal.aggregation_timer)) {
    merged.signal = { ...hashOf(merged.signal), aggregation_delay: null, aggregation_timer: null };
  }
  // fill_option other than static drops the stored fill value.
  if (set(givenSignal.fill_option) && givenSignal.fill_option !== 'static' && !set(givenSignal.fill_value)) merged.signal = { ...hashOf(merged.signal), fill_value: null };
  return merged;
}
