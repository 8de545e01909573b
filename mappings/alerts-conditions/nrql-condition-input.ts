import { z } from 'zod';
import { invalidParameter, isBodyObject, V2Error, type BodyObject, type BodyValue } from '../../src/mapping-api.ts';
import {
  DEFAULT_DELAY_SECONDS,
  DEFAULT_TIME_LIMIT_SECONDS,
  DEFAULT_TIMER_SECONDS,
  DEFAULT_WINDOW_SECONDS,
  NrqlConditionTitles,
  OPERATOR_OF,
  type ConditionType,
  type NrqlCondition,
  type TermExtras,
} from './nrql-conditions.ts';

/**
 * A v2 nrql_condition body turned into NerdGraph's condition input (the create and update
 * mappings): validated with v2's rules (FN = alerts-conditions-api-field-names.mdx, CALLS =
 * rest-api-calls-alerts.mdx, docs-website src/content/docs/alerts/scale-automate/rest-api/), and, on
 * an update, only what differs from the condition read, so that a read written back changes nothing.
 */
const OPERATOR_TO: Record<string, string> = Object.fromEntries(Object.entries(OPERATOR_OF).map(([to, of]) => [of, to]));
const OCCURRENCES_TO: Record<string, string> = { all: 'ALL', any: 'AT_LEAST_ONCE' };

/** A list: as sent, or an XML list (`{term: [...]}` / `{term: {...}}`) unwrapped. */
const asList = (value: unknown): unknown => {
  if (Array.isArray(value) || !isBodyObject(value as BodyValue)) return value;
  const items = Object.values(value as BodyObject);
  return items.length === 1 ? (Array.isArray(items[0]) ? items[0] : [items[0]]) : value;
};
/** XML and form bodies send an empty element for "none": null, as JSON's null. */
const blankAsNull = (value: unknown): unknown => (value === '' ? null : value);
const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const Flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')], { error: 'must be true or false' });
const Whole = (what: string) => z.union([z.number().int(), z.string().trim().regex(/^\d{1,9}$/).transform(Number)], { error: `must be ${what}` });
const WholeIn = (low: number, high: number, unit: string) => Whole(`${low} to ${high} ${unit}`).refine((n) => n >= low && n <= high, `must be ${low} to ${high} ${unit}`);
const Finite = z.union([z.number().finite(), z.string().trim().regex(NUMBER_TEXT).transform(Number)], { error: 'must be a number' }).refine(Number.isFinite, 'must be a finite number');
const nullable = <T extends z.ZodType>(schema: T) => z.preprocess(blankAsNull, schema.nullable().optional());

const V2Term = z.object({
  // FN #terms_duration: minutes; NerdGraph holds whole seconds, so minutes that are not whole seconds cannot be written (never rounded).
  duration: Finite.refine((minutes) => minutes > 0 && minutes <= 1440, 'must be more than 0 and at most 1440 minutes').refine(
    (minutes) => Math.abs(minutes * 60 - Math.round(minutes * 60)) < 1e-9,
    'must be whole seconds (NerdGraph keeps thresholdDuration in seconds)',
  ),
  operator: z.enum(['above', 'above_or_equals', 'below', 'below_or_equals', 'equal', 'not_equals'], { error: 'must be one of above, above_or_equals, below, below_or_equals, equal, not_equals' }),
  priority: z.enum(['critical', 'warning']),
  // Text past a double's range ("1e400") parses to Infinity: refused here, not by NerdGraph.
  threshold: Finite,
  time_function: z.enum(['all', 'any']),
});
const V2Signal = z.object({
  aggregation_window: nullable(WholeIn(30, 21_600, 'seconds')),
  aggregation_method: nullable(z.preprocess((v) => (typeof v === 'string' ? v.trim().toUpperCase() : v), z.enum(['EVENT_FLOW', 'CADENCE', 'EVENT_TIMER'], { error: 'must be one of EVENT_FLOW, CADENCE, EVENT_TIMER' }))),
  aggregation_delay: nullable(WholeIn(0, 1200, 'seconds')),
  aggregation_timer: nullable(WholeIn(5, 1200, 'seconds')),
  slide_by: nullable(WholeIn(1, 21_600, 'seconds')),
  fill_option: nullable(z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['none', 'static', 'last_value'], { error: 'must be one of none, static, last_value' }))),
  fill_value: nullable(Finite),
  evaluation_offset: nullable(WholeIn(1, 20, 'windows')),
});
const V2Expiration = z.object({
  expiration_duration: nullable(WholeIn(30, 172_800, 'seconds')),
  open_violation_on_expiration: nullable(Flag),
  close_violations_on_expiration: nullable(Flag),
});
const V2Condition = z.object({
  type: z.enum(['static', 'baseline', 'outlier']).optional(),
  name: z.string({ error: "can't be blank" }).trim().min(1, "can't be blank").max(255, 'is too long (maximum is 255 characters)').optional(),
  enabled: Flag.optional(),
  runbook_url: z.string({ error: 'must be text' }).max(2048, 'is too long (maximum is 2048 characters)').nullable().optional(),
  value_function: z.enum(['single_value', 'sum']).optional(),
  baseline_direction: z.enum(['upper_only', 'lower_only', 'upper_and_lower']).optional(),
  expected_groups: nullable(Whole('a whole number of groups').refine((n) => n >= 1, 'must be at least 1')),
  ignore_overlap: nullable(Flag),
  // FN #violation_time_limit_seconds: "Maximum is 30 days"; NerdGraph's input: 300 to 2,592,000.
  // null (a condition read without one) is "not given", so that a read written back is accepted.
  violation_time_limit_seconds: nullable(WholeIn(300, 2_592_000, 'seconds')),
  terms: z.preprocess(asList, z.array(V2Term).min(1, 'must hold at least one term')).optional(),
  nrql: z
    .object({
      // Kept as sent (a Terraform heredoc ends in a newline): compared and written untrimmed.
      query: z.string({ error: 'is required' }).refine((query) => query.trim() !== '', "can't be blank").max(4096, 'is too long (maximum is 4096 characters)').optional(),
      // FN #nrql-since: deprecated, optional, 1 to 20.
      since_value: nullable(WholeIn(1, 20, 'minutes')),
    })
    .optional(),
  signal: z.preprocess(blankAsNull, V2Signal.nullable().optional()),
  expiration: z.preprocess(blankAsNull, V2Expiration.nullable().optional()),
});
export type V2NrqlCondition = z.infer<typeof V2Condition>;

const WRAPPER = 'nrql_condition';
const refuse = (detail: string): V2Error => invalidParameter(NrqlConditionTitles.invalid(WRAPPER, detail));
const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** The body's nrql_condition, validated; 400 without the wrapper, 422 with the first problem. */
export function v2ConditionOf(body: BodyObject, creating: boolean): V2NrqlCondition {
  const value = Object.hasOwn(body, WRAPPER) ? body[WRAPPER] : undefined;
  if (!isBodyObject(value)) throw new V2Error(400, NrqlConditionTitles.missing(WRAPPER), { kind: 'invalid_parameter' });
  const parsed = V2Condition.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')} ` : '';
    throw refuse(`${where}${issue?.message ?? 'is not valid'}`);
  }
  const condition = parsed.data;
  if (creating) {
    if (condition.name === undefined) throw refuse("name can't be blank");
    if (condition.terms === undefined) throw refuse('terms is required');
    if (condition.nrql?.query === undefined) throw refuse('nrql.query is required');
  }
  const offset = offsetOf(condition);
  const signal = condition.signal ?? {};
  // FN #nrql-since, #signal_evaluation_offset: deprecated "in favor of an aggregation_method with either an aggregation_delay or aggregation_timer".
  if (offset !== undefined && (given(signal.aggregation_method) || given(signal.aggregation_delay) || given(signal.aggregation_timer))) {
    throw refuse('nrql.since_value cannot be set with signal aggregation_method, aggregation_delay or aggregation_timer');
  }
  if (given(condition.nrql?.since_value) && given(signal.evaluation_offset) && condition.nrql.since_value !== signal.evaluation_offset) throw refuse('signal.evaluation_offset must equal nrql.since_value');
  return condition;
}

/** The offset a body gives (since_value, or the deprecated signal evaluation_offset). */
const offsetOf = (condition: V2NrqlCondition): number | undefined => condition.nrql?.since_value ?? condition.signal?.evaluation_offset ?? undefined;

/** The threshold type a body asks for (create: default static, CALLS create-nrql-conditions). */
export const thresholdType = (condition: V2NrqlCondition): ConditionType => condition.type ?? 'static';

/** NerdGraph's type of a condition read. */
export const storedType = (stored: NrqlCondition): ConditionType => (stored.type === 'BASELINE' ? 'baseline' : stored.type === 'OUTLIER' ? 'outlier' : 'static');

type TermInput = Record<string, unknown>;
type CoreTerm = { operator: string; priority: string; threshold: number; thresholdDuration: number; thresholdOccurrences: string };
const coreTerms = (terms: readonly CoreTerm[]): string =>
  terms.map((term) => JSON.stringify([term.priority, term.operator, term.threshold, term.thresholdDuration, term.thresholdOccurrences])).sort().join('|');

const builtTerms = (terms: NonNullable<V2NrqlCondition['terms']>): CoreTerm[] =>
  terms.map((term) => ({
    operator: OPERATOR_TO[term.operator] as string,
    priority: term.priority.toUpperCase(),
    threshold: term.threshold,
    thresholdDuration: Math.round(term.duration * 60),
    thresholdOccurrences: OCCURRENCES_TO[term.time_function] as string,
  }));

/** Whether an update's terms differ from the stored ones (an echo of a read leaves the terms alone). */
export const termsChange = (condition: V2NrqlCondition, stored: NrqlCondition): boolean => condition.terms !== undefined && coreTerms(builtTerms(condition.terms)) !== coreTerms(stored.terms);

/**
 * The terms input, or undefined on an update whose terms equal the stored ones. NerdGraph replaces
 * all terms, and AlertsNrqlConditionTermsInput also holds disableHealthStatusReporting and (static
 * inputs only) prediction, which v2 has not: each is carried over from `extras`, the stored term of
 * the same priority, so that a v2 write never drops them.
 */
function termsInput(terms: NonNullable<V2NrqlCondition['terms']>, type: ConditionType, stored: NrqlCondition | undefined, extras: readonly TermExtras[]): TermInput[] | undefined {
  const built = builtTerms(terms);
  if (stored && coreTerms(built) === coreTerms(stored.terms)) return undefined;
  return built.map((term): TermInput => {
    const before = extras.find((old) => old.priority === term.priority);
    return {
      ...term,
      ...(given(before?.disableHealthStatusReporting) && { disableHealthStatusReporting: before.disableHealthStatusReporting }),
      // Field by field: the stored term may be the answer's own object, not a copy holding the
      // schema's keys alone, and a key NerdGraph sent beyond them is no input to send back.
      ...(type === 'static' && given(before?.prediction) && { prediction: { predictBy: before.prediction.predictBy, preferPredictionViolation: before.prediction.preferPredictionViolation } }),
    };
  });
}

type Input = Record<string, unknown>;
/** `whole` when any of its keys differs from `before` (an update), else undefined: a changed object is always sent whole. */
const wholeIfChanged = (whole: Input, before: Record<string, unknown> | undefined): Input | undefined =>
  before === undefined || Object.entries(whole).some(([key, value]) => value !== (before[key] ?? null)) ? whole : undefined;
/** A create sends only what it sets: NerdGraph's create defaults the rest. */
const withoutNulls = (input: Input): Input | undefined => {
  const out = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));
  return Object.keys(out).length > 0 ? out : undefined;
};

/**
 * The offset (the deprecated nrql.evaluationOffset) after the write: the one given; else the stored
 * one, unless an aggregation method, delay or timer is given (they replace it, FN #nrql-since); null
 * when the condition is in aggregation-method mode.
 */
function offsetAfter(condition: V2NrqlCondition, stored: NrqlCondition | undefined): number | null {
  const offset = offsetOf(condition);
  if (offset !== undefined) return offset;
  const signal = condition.signal ?? {};
  if (given(signal.aggregation_method) || given(signal.aggregation_delay) || given(signal.aggregation_timer)) return null;
  return stored?.nrql.evaluationOffset ?? null;
}

/**
 * The whole signal after the write: on a create, v2's documented defaults for what is not given
 * (EVENT_FLOW, a 60 s window, a 120 s delay, or a 60 s timer for EVENT_TIMER), unless the body
 * gives the deprecated offset, which takes no method; on an update, the stored signal with the
 * given keys over it, a null given being v2's default (FN: window 60 s, fill_option none, fill_value
 * 0 with static, no slide), the new method's default delay or timer, and explicit nulls for what the
 * mode does not use (an offset has no method, delay or timer; a method uses a delay or a timer).
 */
function signalAfter(condition: V2NrqlCondition, stored: NrqlCondition | undefined, offset: number | null): Input {
  const signal = condition.signal ?? {};
  const before = stored?.signal;
  const pick = <T>(value: T | null | undefined, was: T | null | undefined, fallback: T | null): T | null => (value === undefined ? (was ?? fallback) : (value ?? fallback));
  const window = pick(signal.aggregation_window, before?.aggregationWindow, DEFAULT_WINDOW_SECONDS);
  let method: string | null = null;
  let delay: number | null = null;
  let timer: number | null = null;
  if (offset === null) {
    const wasMethod = before?.aggregationMethod ?? null;
    method = signal.aggregation_method ?? wasMethod ?? 'EVENT_FLOW';
    const keep = method === wasMethod;
    // The CALLS create example sends a delay and a timer with any method: only the one the method uses is kept (FN #signal_aggregation_delay, #signal_aggregation_timer).
    if (method === 'EVENT_TIMER') timer = signal.aggregation_timer ?? (keep ? before?.aggregationTimer : undefined) ?? DEFAULT_TIMER_SECONDS;
    else delay = signal.aggregation_delay ?? (keep ? before?.aggregationDelay : undefined) ?? DEFAULT_DELAY_SECONDS;
  }
  const fillOption = pick(signal.fill_option === undefined || signal.fill_option === null ? signal.fill_option : signal.fill_option.toUpperCase(), before?.fillOption, 'NONE');
  // FN #signal_fill_value: the value of fill_option static ("The default is 0"); with another option it has no use.
  const fillValue = fillOption === 'STATIC' ? pick(signal.fill_value, before?.fillValue, 0) : null;
  return {
    aggregationWindow: window,
    aggregationMethod: method,
    aggregationDelay: delay,
    aggregationTimer: timer,
    slideBy: signal.slide_by === undefined ? (before?.slideBy ?? null) : signal.slide_by,
    fillOption,
    fillValue,
    ...(stored && { evaluationDelay: stored.signal.evaluationDelay ?? null }),
  };
}

function signalInput(condition: V2NrqlCondition, stored: NrqlCondition | undefined, offset: number | null): Input | undefined {
  const whole = signalAfter(condition, stored, offset);
  return stored ? wholeIfChanged(whole, stored.signal) : withoutNulls(whole);
}

function expirationInput(condition: V2NrqlCondition, stored: NrqlCondition | undefined): Input | undefined {
  const expiration = condition.expiration;
  if (!stored) {
    if (!expiration) return undefined;
    return withoutNulls({ expirationDuration: expiration.expiration_duration, openViolationOnExpiration: expiration.open_violation_on_expiration, closeViolationsOnExpiration: expiration.close_violations_on_expiration });
  }
  const before = stored.expiration;
  // A flag given null is "not given" (kept); expiration_duration null clears it (FN: "The default is null").
  const whole: Input = {
    expirationDuration: expiration?.expiration_duration === undefined ? before.expirationDuration : expiration.expiration_duration,
    openViolationOnExpiration: expiration?.open_violation_on_expiration ?? before.openViolationOnExpiration,
    closeViolationsOnExpiration: expiration?.close_violations_on_expiration ?? before.closeViolationsOnExpiration,
    ignoreOnExpectedTermination: before.ignoreOnExpectedTermination ?? null,
  };
  return wholeIfChanged(whole, before);
}

/**
 * nrql's input. evaluationOffset is deprecated and cannot be set with an aggregation method, delay
 * or timer (Terraform newrelic_nrql_alert_condition, evaluation_offset). An update sends the whole
 * object (query, offset, data account) when any of it changes, the offset null in aggregation-method
 * mode, and nothing when none does: a client sending back the whole condition it read (as
 * newrelic-client-go does) changes nothing.
 */
function nrqlInput(condition: V2NrqlCondition, stored: NrqlCondition | undefined, offset: number | null): Input | undefined {
  if (!stored) return withoutNulls({ query: condition.nrql?.query, evaluationOffset: offset });
  const whole: Input = { query: condition.nrql?.query ?? stored.nrql.query, evaluationOffset: offset, dataAccountId: stored.nrql.dataAccountId ?? null };
  return wholeIfChanged(whole, stored.nrql);
}

/** NerdGraph's condition input from the fields the body gave (an update sends only those, `stored` being the condition read, `extras` its terms' NerdGraph-only settings). */
export function nerdgraphInput(condition: V2NrqlCondition, type: ConditionType, stored?: NrqlCondition, extras: readonly TermExtras[] = []): Record<string, unknown> {
  const creating = stored === undefined;
  if (type !== 'static' && condition.terms?.some((term) => term.operator !== 'above')) throw refuse(`terms must use operator above in a ${type} condition`);
  // valueFunction is on NerdGraph's static inputs only.
  if (type !== 'static' && condition.value_function === 'sum') throw refuse(`value_function sum is only for static conditions, not ${type}`);
  // A static or outlier condition has no direction: refused, never dropped (as the legacy face does).
  if (type !== 'baseline' && condition.baseline_direction !== undefined) throw refuse('baseline_direction is used only in a baseline condition');
  if (type !== 'outlier' && (given(condition.expected_groups) || given(condition.ignore_overlap))) throw refuse('expected_groups and ignore_overlap are only for outlier conditions');
  if (type === 'outlier' && creating && !given(condition.expected_groups)) throw refuse('expected_groups is required in an outlier condition');
  // Checked here so that the refusal is v2's, naming the field, before anything is sent.
  const window = condition.signal?.aggregation_window ?? stored?.signal.aggregationWindow ?? DEFAULT_WINDOW_SECONDS;
  const slide = condition.signal?.slide_by ?? (condition.signal?.aggregation_window === undefined ? undefined : stored?.signal.slideBy ?? undefined);
  // FN #signal_slide_by: "must divide evenly into your aggregation window ... must also be less than the window duration".
  if (given(slide) && (slide >= window || window % slide !== 0)) throw refuse('signal.slide_by must be less than the aggregation window and divide it evenly');
  // NerdGraph: "thresholdDuration must be a multiple of aggregationWindow" (nerdgraph-api-nrql-condition-alerts).
  const terms = condition.terms ?? (condition.signal?.aggregation_window === undefined || !stored ? [] : stored.terms.map((term) => ({ duration: term.thresholdDuration / 60 })));
  terms.forEach((term, index) => {
    if (Math.round(term.duration * 60) % window !== 0) throw refuse(`terms.${index}.duration must be a multiple of the aggregation window (${window} seconds)`);
  });
  const input: Record<string, unknown> = {};
  if (condition.name !== undefined) input.name = condition.name;
  // FN #enabled: "The default is false."
  if (condition.enabled !== undefined || creating) input.enabled = condition.enabled ?? false;
  // Clearing is '' (client-go's update input sends runbookUrl without omitempty); null on an update may keep the old one.
  const runbook = condition.runbook_url ?? (condition.runbook_url === null ? '' : undefined);
  if (runbook !== undefined && (creating ? runbook !== '' : runbook !== (stored.runbookUrl ?? ''))) input.runbookUrl = runbook;
  // FN #violation_time_limit_seconds: "Default is 259,200 seconds (3 days)".
  if (given(condition.violation_time_limit_seconds) || creating) input.violationTimeLimitSeconds = condition.violation_time_limit_seconds ?? DEFAULT_TIME_LIMIT_SECONDS;
  if (type === 'static' && condition.value_function !== undefined && (creating ? condition.value_function !== 'single_value' : condition.value_function.toUpperCase() !== (stored.valueFunction ?? 'SINGLE_VALUE'))) {
    input.valueFunction = condition.value_function.toUpperCase();
  }
  if (type === 'baseline' && (condition.baseline_direction !== undefined || creating)) input.baselineDirection = (condition.baseline_direction ?? 'upper_only').toUpperCase();
  if (type === 'outlier') {
    if (given(condition.expected_groups)) input.expectedGroups = condition.expected_groups;
    if (given(condition.ignore_overlap) || creating) input.openViolationOnGroupOverlap = !(condition.ignore_overlap ?? false);
  }
  const termList = condition.terms === undefined ? undefined : termsInput(condition.terms, type, stored, extras);
  if (termList !== undefined) input.terms = termList;
  const offset = offsetAfter(condition, stored);
  const nrql = nrqlInput(condition, stored, offset);
  if (nrql !== undefined) input.nrql = nrql;
  const signal = signalInput(condition, stored, offset);
  if (signal !== undefined) input.signal = signal;
  const expiration = expirationInput(condition, stored);
  if (expiration !== undefined) input.expiration = expiration;
  return input;
}

