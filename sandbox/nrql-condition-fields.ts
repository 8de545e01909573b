/**
 * The NerdGraph face of the alert store's NRQL conditions (alerts.ts keeps them as v2 field
 * objects, in the contract of legacy/nrql-condition-body.ts): `AlertsNrqlStaticCondition`,
 * `AlertsNrqlBaselineCondition` and `AlertsNrqlOutlierCondition` computed from the v2 fields, and
 * the reverse, NerdGraph condition inputs turned into v2 fields and validated by the same contract.
 *
 * The correspondence is the sandbox's own, written from New Relic's documents (never from the
 * gateway's mappings):
 * - the 2025-04-15 schema (../shared/nerdgraph/schema-client-go-2025-04-15.tutone.json), which
 *   keeps the deprecated fields: `nrql.evaluationOffset` and `signal.evaluationOffset` ("the number
 *   of time windows we look back", "With an evaluationOffset of 3 ... SINCE 3 minutes ago UNTIL 2
 *   minutes ago"), the v2 `since_value` and `signal[evaluation_offset]`; the static condition's
 *   `valueFunction` SINGLE_VALUE | SUM, v2's `value_function`; the outlier condition's
 *   `expectedGroups` and `openViolationOnGroupOverlap` (v2 `expected_groups`, `ignore_overlap`
 *   its negation: rest-v2-shapes.md);
 * - terms: thresholdDuration seconds = v2 minutes × 60 (FN #terms_duration: minutes); the six
 *   operators by name (ABOVE_OR_EQUALS is above_or_equals, EQUALS is equal); thresholdOccurrences
 *   ALL / AT_LEAST_ONCE = all / any ("for at least" / "at least once in", FN #terms_time_function);
 * - signal and expiration key by key in snake case (FN #signal_*, #expiration_*); fillOption in
 *   lower case;
 * - runbookUrl: null on an update input is "not given" (kept), '' clears it; NerdGraph's answer
 *   is null when there is none (UNCONFIRMED: what null does on a real update is the probe's).
 * - a term's `disableHealthStatusReporting` (AlertsNrqlConditionTermsInput and
 *   AlertsNrqlDynamicConditionTermsInput) and a static term's `prediction`
 *   (AlertsNrqlConditionTermsInput.prediction: AlertsNrqlConditionPredictionInput, `predictBy`
 *   Seconds and `preferPredictionViolation` Boolean; read back on AlertsNrqlConditionTermsWithPrediction),
 *   both schema files: NerdGraph-only, v2 never had them; kept beside the v2 fields, per priority,
 *   and replaced with the terms (a term input without them has none: false and null);
 * - Fields v2 never had (description, title template, evaluation delay, data account, seasonality
 *   other than New Relic's) are shown with NerdGraph's "off" values; an input that sets one is
 *   refused: the store keeps what v2 kept.
 */
import { conditionEntityGuid, type AlertCondition, type ConditionFields } from './alerts.ts';
import { invalidInput } from './nerdgraph-errors.ts';
import { NrqlConditionBody } from './legacy/nrql-condition-body.ts';
import type { JsonValue } from './legacy/wire.ts';
import { NRQL_OCCURRENCE_WORDS, NRQL_OPERATOR_WORDS } from '../facts/nrql-condition-terms.ts';

/** REST's threshold types the store keeps; NerdGraph names them in upper case. */
export type NrqlThresholdType = 'static' | 'baseline' | 'outlier';

const OPERATOR_OF = NRQL_OPERATOR_WORDS;
const OCCURRENCE_OF = NRQL_OCCURRENCE_WORDS;
const reverse = (table: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(table).map(([k, v]) => [v, k]));
const OPERATORS = reverse(OPERATOR_OF);
const OCCURRENCES = reverse(OCCURRENCE_OF);
const TYPENAMES: Record<NrqlThresholdType, string> = { static: 'AlertsNrqlStaticCondition', baseline: 'AlertsNrqlBaselineCondition', outlier: 'AlertsNrqlOutlierCondition' };

const text = (value: JsonValue | undefined): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const record = (value: JsonValue | undefined): Record<string, JsonValue> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, JsonValue>) : {};
const numberOrNull = (value: JsonValue | undefined): number | null => (value === undefined || value === null || value === '' ? null : Number(value));

export const thresholdTypeOf = (condition: AlertCondition): NrqlThresholdType =>
  condition.fields.type === 'baseline' ? 'baseline' : condition.fields.type === 'outlier' ? 'outlier' : 'static';

interface TermExtras {
  disableHealthStatusReporting: boolean;
  prediction: { predictBy: number | null; preferPredictionViolation: boolean | null } | null;
}
/** The NerdGraph-only term settings of each condition, by priority (the store's fields stay v2's). */
const TERM_EXTRAS = new WeakMap<AlertCondition, Map<string, TermExtras>>();

/** A NerdGraph write's terms replace the stored term settings as a whole. */
export function storeTermExtras(condition: AlertCondition, terms: readonly TermInput[] | null | undefined): void {
  if (!given(terms)) return;
  TERM_EXTRAS.set(
    condition,
    new Map(
      terms.map((term) => [
        term.priority.toLowerCase(),
        {
          disableHealthStatusReporting: term.disableHealthStatusReporting === true,
          prediction: given(term.prediction) ? { predictBy: term.prediction.predictBy ?? null, preferPredictionViolation: term.prediction.preferPredictionViolation ?? null } : null,
        },
      ]),
    ),
  );
}

/** The NerdGraph object of one stored NRQL condition. */
export function nrqlConditionView(condition: AlertCondition): Record<string, unknown> {
  const fields = condition.fields;
  const nrql = record(fields.nrql);
  const signal = record(fields.signal);
  const expiration = record(fields.expiration);
  const offset = numberOrNull(nrql.since_value);
  const runbook = text(fields.runbook_url);
  const type = thresholdTypeOf(condition);
  const terms = (Array.isArray(fields.terms) ? fields.terms : []).map((raw) => {
    const term = record(raw);
    const extras = TERM_EXTRAS.get(condition)?.get(text(term.priority));
    return {
      __typename: type === 'static' ? 'AlertsNrqlConditionTermsWithPrediction' : 'AlertsNrqlConditionTerms',
      operator: OPERATORS[text(term.operator)] ?? 'ABOVE',
      priority: text(term.priority).toUpperCase(),
      threshold: Number(text(term.threshold)),
      thresholdDuration: Math.round(Number(text(term.duration)) * 60),
      thresholdOccurrences: OCCURRENCES[text(term.time_function)] ?? 'ALL',
      disableHealthStatusReporting: extras?.disableHealthStatusReporting ?? false,
      ...(type === 'static' && { prediction: extras?.prediction ?? null }),
    };
  });
  return {
    __typename: TYPENAMES[type],
    id: String(condition.id),
    name: text(fields.name),
    policyId: String(condition.policyId),
    type: type.toUpperCase(),
    enabled: fields.enabled === true,
    description: null,
    runbookUrl: runbook === '' ? null : runbook,
    entityGuid: conditionEntityGuid(condition),
    nrql: { query: text(nrql.query), dataAccountId: null, evaluationOffset: offset },
    signal: {
      aggregationWindow: numberOrNull(signal.aggregation_window) ?? 60,
      aggregationMethod: signal.aggregation_method ?? null,
      aggregationDelay: numberOrNull(signal.aggregation_delay),
      aggregationTimer: numberOrNull(signal.aggregation_timer),
      evaluationDelay: null,
      evaluationOffset: offset,
      fillOption: text(signal.fill_option || 'none').toUpperCase(),
      fillValue: numberOrNull(signal.fill_value),
      slideBy: numberOrNull(signal.slide_by),
    },
    expiration: {
      expirationDuration: numberOrNull(expiration.expiration_duration),
      openViolationOnExpiration: expiration.open_violation_on_expiration === true,
      closeViolationsOnExpiration: expiration.close_violations_on_expiration === true,
      ignoreOnExpectedTermination: false,
    },
    terms,
    violationTimeLimitSeconds: typeof fields.violation_time_limit_seconds === 'number' ? fields.violation_time_limit_seconds : null,
    ...(type === 'static' && { valueFunction: text(fields.value_function || 'single_value').toUpperCase() }),
    ...(type === 'baseline' && { baselineDirection: text(fields.baseline_direction || 'upper_only').toUpperCase(), signalSeasonality: 'NEW_RELIC_CALCULATION' }),
    ...(type === 'outlier' && { expectedGroups: Number(fields.expected_groups ?? 1), openViolationOnGroupOverlap: fields.ignore_overlap !== true }),
  };
}

// ---------------------------------------------------------------------------------------------
// NerdGraph inputs -> the store's v2 fields

export interface TermInput {
  operator: string;
  priority: string;
  threshold: number;
  thresholdDuration: number;
  thresholdOccurrences: string;
  disableHealthStatusReporting?: boolean | null;
  prediction?: { predictBy?: number | null; preferPredictionViolation?: boolean | null } | null;
}

export interface ConditionInput {
  name?: string | null;
  enabled?: boolean | null;
  description?: string | null;
  runbookUrl?: string | null;
  titleTemplate?: string | null;
  valueFunction?: string | null;
  nrql?: { query?: string | null; evaluationOffset?: number | null; dataAccountId?: number | null } | null;
  terms?: readonly TermInput[] | null;
  signal?: {
    aggregationWindow?: number | null;
    aggregationMethod?: string | null;
    aggregationDelay?: number | null;
    aggregationTimer?: number | null;
    evaluationDelay?: number | null;
    evaluationOffset?: number | null;
    fillOption?: string | null;
    fillValue?: number | null;
    slideBy?: number | null;
  } | null;
  expiration?: {
    expirationDuration?: number | null;
    openViolationOnExpiration?: boolean | null;
    closeViolationsOnExpiration?: boolean | null;
    ignoreOnExpectedTermination?: boolean | null;
  } | null;
  violationTimeLimit?: string | null;
  violationTimeLimitSeconds?: number | null;
  baselineDirection?: string | null;
  signalSeasonality?: string | null;
  expectedGroups?: number | null;
  openViolationOnGroupOverlap?: boolean | null;
}

const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** The one refusal text for what the store cannot keep: REST v2's condition fields are all it holds. */
const notStorable = (what: string): Error => invalidInput(`${what}: the sandbox keeps NRQL conditions as REST v2 did and cannot store this`);

function v2Term(term: TermInput, index: number): Record<string, JsonValue> {
  const at = `terms[${index}]`;
  const operator = OPERATOR_OF[term.operator];
  if (operator === undefined) throw invalidInput(`${at}.operator ${term.operator} is not an operator`);
  if (!Number.isFinite(term.threshold)) throw invalidInput(`${at}.threshold must be a number`);
  if (!Number.isInteger(term.thresholdDuration) || term.thresholdDuration <= 0 || term.thresholdDuration > 86400) throw invalidInput(`${at}.thresholdDuration must be 1 to 86400 seconds`);
  return {
    duration: String(term.thresholdDuration / 60),
    operator,
    priority: term.priority.toLowerCase(),
    threshold: String(term.threshold),
    time_function: OCCURRENCE_OF[term.thresholdOccurrences] ?? 'all',
  };
}

/** The v2 keys an input gives (undefined: not given, kept on an update). */
function v2Given(type: NrqlThresholdType, input: ConditionInput): Record<string, JsonValue> {
  if (given(input.description) && input.description !== '') throw notStorable('description');
  if (given(input.titleTemplate) || given(input.nrql?.dataAccountId)) throw notStorable('titleTemplate and nrql.dataAccountId');
  if (given(input.signalSeasonality) && input.signalSeasonality !== 'NEW_RELIC_CALCULATION') throw notStorable(`signalSeasonality ${input.signalSeasonality}`);
  if (given(input.violationTimeLimit)) throw notStorable('violationTimeLimit (deprecated; use violationTimeLimitSeconds)');
  if (given(input.signal?.evaluationDelay)) throw notStorable('signal.evaluationDelay');
  if (input.expiration?.ignoreOnExpectedTermination === true) throw notStorable('expiration.ignoreOnExpectedTermination');
  const out: Record<string, JsonValue> = {};
  if (given(input.name)) out.name = input.name;
  if (given(input.enabled)) out.enabled = input.enabled;
  if (given(input.runbookUrl)) out.runbook_url = input.runbookUrl;
  if (given(input.valueFunction)) out.value_function = input.valueFunction.toLowerCase();
  if (given(input.violationTimeLimitSeconds)) out.violation_time_limit_seconds = input.violationTimeLimitSeconds;
  if (type === 'baseline' && given(input.baselineDirection)) out.baseline_direction = input.baselineDirection.toLowerCase();
  if (type === 'outlier' && given(input.expectedGroups)) out.expected_groups = input.expectedGroups;
  if (type === 'outlier' && given(input.openViolationOnGroupOverlap)) out.ignore_overlap = !input.openViolationOnGroupOverlap;
  if (given(input.terms)) out.terms = input.terms.map(v2Term);
  const nrql: Record<string, JsonValue> = {};
  if (given(input.nrql?.query)) nrql.query = input.nrql.query;
  const offset = input.nrql?.evaluationOffset ?? input.signal?.evaluationOffset;
  if (given(offset)) nrql.since_value = offset;
  if (Object.keys(nrql).length > 0) out.nrql = nrql;
  const signal: Record<string, JsonValue> = {};
  const s = input.signal ?? {};
  if (given(s.aggregationWindow)) signal.aggregation_window = s.aggregationWindow;
  if (given(s.aggregationMethod)) signal.aggregation_method = s.aggregationMethod;
  if (given(s.aggregationDelay)) signal.aggregation_delay = s.aggregationDelay;
  if (given(s.aggregationTimer)) signal.aggregation_timer = s.aggregationTimer;
  if (given(s.slideBy)) signal.slide_by = s.slideBy;
  if (given(s.fillOption)) signal.fill_option = s.fillOption.toLowerCase();
  if (given(s.fillValue)) signal.fill_value = s.fillValue;
  if (Object.keys(signal).length > 0) out.signal = signal;
  const e = input.expiration ?? {};
  const expiration: Record<string, JsonValue> = {};
  if (e.expirationDuration !== undefined) expiration.expiration_duration = e.expirationDuration;
  if (given(e.openViolationOnExpiration)) expiration.open_violation_on_expiration = e.openViolationOnExpiration;
  if (given(e.closeViolationsOnExpiration)) expiration.close_violations_on_expiration = e.closeViolationsOnExpiration;
  if (Object.keys(expiration).length > 0) out.expiration = expiration;
  return out;
}

/**
 * An update's given nrql, signal and expiration objects, each replacing the stored one as a whole:
 * what a given object omits is cleared, then defaulted as a create would default it (the v2
 * contract's create defaults: a 60 s window, EVENT_FLOW with a 120 s delay, a 60 s timer, fill
 * none, expiration flags false). The schema's update inputs (AlertsNrqlConditionUpdateQueryInput,
 * AlertsNrqlConditionSignalInput, AlertsNrqlConditionExpirationInput) are objects of optional
 * fields with no merge rule stated; replacing is the stricter reading, so that a client sending a
 * partial object loses the rest here rather than rely on a merge (UNCONFIRMED which NerdGraph does;
 * no probe: it would have to write a condition, and the probes are read-only).
 */
function replacedObjects(input: ConditionInput, stored: ConditionFields, body: Record<string, JsonValue>): void {
  const storedNrql = record(stored.nrql);
  if (given(input.nrql)) {
    body.nrql = { query: input.nrql.query ?? null, since_value: input.nrql.evaluationOffset ?? null };
    // One offset: the nrql given sets the signal's deprecated copy too, unless the signal is given.
    if (!given(input.signal)) body.signal = { ...record(stored.signal), evaluation_offset: input.nrql.evaluationOffset ?? null };
  } else {
    body.nrql = storedNrql;
  }
  if (given(input.signal)) {
    const s = input.signal;
    body.signal = {
      aggregation_window: s.aggregationWindow ?? null,
      aggregation_method: s.aggregationMethod ?? null,
      aggregation_delay: s.aggregationDelay ?? null,
      aggregation_timer: s.aggregationTimer ?? null,
      slide_by: s.slideBy ?? null,
      fill_option: given(s.fillOption) ? s.fillOption.toLowerCase() : null,
      fill_value: s.fillValue ?? null,
      evaluation_offset: s.evaluationOffset ?? (given(input.nrql) ? (input.nrql.evaluationOffset ?? null) : null),
    };
  }
  if (given(input.expiration)) {
    const e = input.expiration;
    body.expiration = { expiration_duration: e.expirationDuration ?? null, open_violation_on_expiration: e.openViolationOnExpiration ?? false, close_violations_on_expiration: e.closeViolationsOnExpiration ?? false };
  }
}

/**
 * The v2 fields of a condition after `input` (a create when `stored` is undefined, else an
 * update of `stored`: the given fields replace the stored ones, nrql, signal and expiration each
 * as a whole), validated by the v2 contract the legacy face keeps, so both faces store one
 * object; its first problem is NerdGraph's INVALID_INPUT.
 */
export function v2FieldsOf(type: NrqlThresholdType, input: ConditionInput, stored?: ConditionFields): ConditionFields {
  const changes = { ...v2Given(type, input), type };
  let body: Record<string, JsonValue> = changes;
  if (stored !== undefined) {
    body = { ...stored };
    for (const [key, value] of Object.entries(changes)) if (!['nrql', 'signal', 'expiration'].includes(key)) body[key] = value;
    replacedObjects(input, stored, body);
  }
  const parsed = NrqlConditionBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidInput(`${issue?.path.join('.') ?? ''} ${issue?.message ?? 'is not valid'}`.trim());
  }
  return parsed.data;
}
