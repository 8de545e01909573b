/**
 * The NerdGraph face of the alert store's NRQL conditions (alerts.ts keeps them as v2 field
 * objects): `AlertsNrqlStaticCondition` / `AlertsNrqlBaselineCondition` computed from the v2
 * fields, and the reverse, NerdGraph condition inputs turned into v2 fields for the store.
 *
 * The correspondence is the sandbox's own, written from New Relic's documents (never from the
 * gateway's mappings):
 * - REST v2 NRQL condition fields (docs.newrelic.com/docs/alerts/rest-api-alerts/
 *   new-relic-alerts-rest-api/alerts-conditions-api-field-names, "NRQL conditions"):
 *   terms[].duration is in minutes, time_function `all` | `any`, operator `above` | `below` |
 *   `equal`, priority `critical` | `warning`, threshold a number (sent as text),
 *   nrql.since_value "the value to be used in the SINCE <X> minutes ago clause" (1 to 20),
 *   violation_time_limit_seconds, value_function `single_value` | `sum`.
 * - NerdGraph (docs.newrelic.com/docs/apis/nerdgraph/examples/nerdgraph-api-nrql-condition-alerts,
 *   "NRQL condition threshold types" and "Signal"/"Terms" sections): thresholdDuration is in
 *   seconds and a multiple of the aggregation window; thresholdOccurrences ALL ("for at least")
 *   or AT_LEAST_ONCE ("at least once in"), which the UI and docs give as the successors of REST's
 *   `all` and `any`; operators ABOVE, BELOW, EQUALS (and three more REST never had); priorities
 *   CRITICAL, WARNING.
 * - since_value: REST conditions evaluated one-minute windows over "SINCE X minutes ago"; NerdGraph's
 *   deprecated `nrql.evaluationOffset` is the same count of windows ("with evaluation_offset set
 *   to 3 windows and an aggregation_window of 60 seconds, the NRQL time window applied to your
 *   query will be SINCE 3 minutes ago UNTIL 2 minutes ago", New Relic's Terraform provider docs,
 *   nrql_alert_condition `evaluation_offset`), and its successor under the CADENCE aggregation
 *   method is `signal.aggregationDelay` in seconds. So since_value N is shown as aggregationWindow
 *   60, aggregationMethod CADENCE, aggregationDelay N×60; either input spelling is accepted.
 * - value_function has no readable NerdGraph field (the deprecated valueFunction is absent from the
 *   schema the sandbox follows): it is kept in the store, never shown; a NerdGraph create stores v2's
 *   default, single_value.
 * - Baseline conditions: REST's `type` named the threshold type (static, baseline, outlier); the
 *   direction is v2 `baseline_direction` (lower-case of NerdGraph's baselineDirection, UNCONFIRMED:
 *   sandbox/README.md). NerdGraph baseline terms take operator ABOVE only.
 * - Fields REST never had (description, title template, expiration, fill, seasonality) are shown
 *   with NerdGraph's "off" values; an input that sets one is refused: the store keeps what v2 kept.
 */
import { conditionEntityGuid, type AlertCondition, type ConditionFields } from './alerts.ts';
import { invalidInput } from './nerdgraph-errors.ts';
import type { JsonValue } from './legacy/wire.ts';

/** REST's threshold types the store keeps; NerdGraph names them in upper case. */
export type NrqlThresholdType = 'static' | 'baseline';

const OPERATORS: Record<string, string> = { above: 'ABOVE', below: 'BELOW', equal: 'EQUALS' };
const OCCURRENCES: Record<string, string> = { all: 'ALL', any: 'AT_LEAST_ONCE' };
/** REST's violation time limits (legacy/alert-bodies.ts): a NerdGraph value outside them cannot be stored. */
const TIME_LIMITS = [3600, 7200, 14400, 28800, 43200, 86400];
const WINDOW_SECONDS = 60;
/** The recommended offset of three windows (nerdgraph-api-nrql-condition-alerts, "evaluationOffset"). */
const DEFAULT_SINCE_MINUTES = 3;
/** NerdGraph's default violation time limit is UNCONFIRMED; the sandbox stores one REST allowed. */
const DEFAULT_TIME_LIMIT = 86400;

const reverse = (table: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(table).map(([k, v]) => [v, k]));
const OPERATOR_OF = reverse(OPERATORS);
const OCCURRENCE_OF = reverse(OCCURRENCES);

const text = (value: JsonValue | undefined): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));
const record = (value: JsonValue | undefined): Record<string, JsonValue> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, JsonValue>) : {};

export const thresholdTypeOf = (condition: AlertCondition): NrqlThresholdType => (condition.fields.type === 'baseline' ? 'baseline' : 'static');

/** The NerdGraph object of one stored NRQL condition (static or baseline). */
export function nrqlConditionView(condition: AlertCondition): Record<string, unknown> {
  const fields = condition.fields;
  const nrql = record(fields.nrql);
  const since = Number(text(nrql.since_value)) || DEFAULT_SINCE_MINUTES;
  const runbook = text(fields.runbook_url);
  const type = thresholdTypeOf(condition);
  const terms = (Array.isArray(fields.terms) ? fields.terms : []).map((raw) => {
    const term = record(raw);
    return {
      __typename: type === 'baseline' ? 'AlertsNrqlConditionTerms' : 'AlertsNrqlConditionTermsWithPrediction',
      operator: OPERATORS[text(term.operator)] ?? 'ABOVE',
      priority: text(term.priority).toUpperCase(),
      threshold: Number(text(term.threshold)),
      thresholdDuration: Number(text(term.duration)) * 60,
      thresholdOccurrences: OCCURRENCES[text(term.time_function)] ?? 'ALL',
      disableHealthStatusReporting: false,
      prediction: null,
    };
  });
  return {
    __typename: type === 'baseline' ? 'AlertsNrqlBaselineCondition' : 'AlertsNrqlStaticCondition',
    id: String(condition.id),
    name: text(fields.name),
    policyId: String(condition.policyId),
    type: type.toUpperCase(),
    enabled: fields.enabled === true,
    description: null,
    runbookUrl: runbook === '' ? null : runbook,
    entityGuid: conditionEntityGuid(condition),
    nrql: { query: text(nrql.query), dataAccountId: null },
    signal: {
      aggregationWindow: WINDOW_SECONDS,
      aggregationMethod: 'CADENCE',
      aggregationDelay: since * WINDOW_SECONDS,
      aggregationTimer: null,
      evaluationDelay: null,
      fillOption: 'NONE',
      fillValue: null,
      slideBy: null,
    },
    expiration: { expirationDuration: null, openViolationOnExpiration: false, closeViolationsOnExpiration: false, ignoreOnExpectedTermination: false },
    terms,
    violationTimeLimitSeconds: typeof fields.violation_time_limit_seconds === 'number' ? fields.violation_time_limit_seconds : null,
    ...(type === 'baseline' && { baselineDirection: text(fields.baseline_direction || 'upper_only').toUpperCase(), signalSeasonality: 'NEW_RELIC_CALCULATION' }),
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
  prediction?: unknown;
}

export interface ConditionInput {
  name?: string | null;
  enabled?: boolean | null;
  description?: string | null;
  runbookUrl?: string | null;
  titleTemplate?: string | null;
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
  expiration?: Record<string, unknown> | null;
  violationTimeLimit?: string | null;
  violationTimeLimitSeconds?: number | null;
  baselineDirection?: string | null;
  signalSeasonality?: string | null;
}

const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** The one refusal text for what the store cannot keep: REST v2's condition fields are all it holds. */
const notStorable = (what: string): Error => invalidInput(`${what}: the sandbox keeps NRQL conditions as REST v2 did and cannot store this`);

function v2Term(term: TermInput, index: number): ConditionFields {
  const at = `terms[${index}]`;
  const operator = OPERATOR_OF[term.operator];
  if (operator === undefined) throw notStorable(`${at}.operator ${term.operator}`);
  if (!Number.isFinite(term.threshold)) throw invalidInput(`${at}.threshold must be a number`);
  // NerdGraph: "thresholdDuration must be a multiple of aggregationWindow" (60 s here), at most 86400.
  if (!Number.isInteger(term.thresholdDuration) || term.thresholdDuration <= 0 || term.thresholdDuration % WINDOW_SECONDS !== 0 || term.thresholdDuration > 86400) {
    throw invalidInput(`${at}.thresholdDuration must be a positive multiple of the aggregation window (${WINDOW_SECONDS} seconds), at most 86400`);
  }
  if (given(term.prediction) || term.disableHealthStatusReporting === true) throw notStorable(`${at}.prediction and disableHealthStatusReporting`);
  return {
    duration: String(term.thresholdDuration / 60),
    operator,
    priority: term.priority.toLowerCase(),
    threshold: String(term.threshold),
    time_function: OCCURRENCE_OF[term.thresholdOccurrences] ?? 'all',
  };
}

/** since_value (minutes) from evaluationOffset (windows) or a CADENCE aggregationDelay (seconds); undefined: keep. */
function sinceOf(input: ConditionInput): string | undefined {
  const signal = input.signal ?? {};
  if (given(signal.aggregationWindow) && signal.aggregationWindow !== WINDOW_SECONDS) throw notStorable(`signal.aggregationWindow ${signal.aggregationWindow}`);
  if (given(signal.aggregationMethod) && signal.aggregationMethod !== 'CADENCE') throw notStorable(`signal.aggregationMethod ${signal.aggregationMethod}`);
  if (given(signal.fillOption) && signal.fillOption !== 'NONE') throw notStorable(`signal.fillOption ${signal.fillOption}`);
  if (given(signal.aggregationTimer) || given(signal.evaluationDelay) || given(signal.fillValue) || given(signal.slideBy)) throw notStorable('signal timer, delay, fill value and slide');
  const offset = input.nrql?.evaluationOffset ?? signal.evaluationOffset;
  const windows = given(offset) ? offset : given(signal.aggregationDelay) ? signal.aggregationDelay / WINDOW_SECONDS : undefined;
  if (windows === undefined) return undefined;
  // REST's since_value was 1 to 20 minutes; NerdGraph's evaluationOffset has the same bounds.
  if (!Number.isInteger(windows) || windows < 1 || windows > 20) throw invalidInput('evaluationOffset (aggregationDelay / aggregationWindow) must be between 1 and 20 windows');
  return String(windows);
}

function timeLimitOf(input: ConditionInput): number | undefined {
  if (given(input.violationTimeLimit)) throw notStorable('violationTimeLimit (deprecated; use violationTimeLimitSeconds)');
  const seconds = input.violationTimeLimitSeconds;
  if (!given(seconds)) return undefined;
  if (!TIME_LIMITS.includes(seconds)) throw notStorable(`violationTimeLimitSeconds ${seconds}`);
  return seconds;
}

/**
 * The v2 fields of a condition after `input` (a create when `stored` is undefined, else an
 * update of `stored`), in the legacy face's field order so both faces render one object.
 */
export function v2FieldsOf(type: NrqlThresholdType, input: ConditionInput, stored?: ConditionFields): ConditionFields {
  if (given(input.description) && input.description !== '') throw notStorable('description');
  if (given(input.titleTemplate) || given(input.expiration) || given(input.nrql?.dataAccountId)) throw notStorable('titleTemplate, expiration and nrql.dataAccountId');
  if (given(input.signalSeasonality) && input.signalSeasonality !== 'NEW_RELIC_CALCULATION') throw notStorable(`signalSeasonality ${input.signalSeasonality}`);
  const before = stored ?? {};
  const name = given(input.name) ? input.name.trim() : text(before.name);
  if (name === '') throw invalidInput('name must not be blank');
  if (name.length > 255) throw invalidInput('name must be at most 255 characters');
  const query = given(input.nrql?.query) ? input.nrql.query.trim() : text(record(before.nrql).query);
  if (query === '') throw invalidInput('nrql.query must not be blank');
  if (query.length > 4096) throw invalidInput('nrql.query must be at most 4096 characters');
  const terms = given(input.terms) ? input.terms.map(v2Term) : Array.isArray(before.terms) ? before.terms : [];
  // NerdGraph: "at least one of terms or expiration ... must be provided"; the store's conditions always have terms.
  if (terms.length === 0) throw invalidInput('terms: at least one term is required');
  const priorities = terms.map((term) => record(term).priority);
  if (new Set(priorities).size !== priorities.length) throw invalidInput('terms: at most one term per priority');
  const runbook = input.runbookUrl === undefined ? text(before.runbook_url) : (input.runbookUrl ?? '');
  if (runbook.length > 2048) throw invalidInput('runbookUrl must be at most 2048 characters');
  const direction = given(input.baselineDirection) ? input.baselineDirection.toLowerCase() : text(before.baseline_direction) || 'upper_only';
  return {
    type,
    name,
    enabled: given(input.enabled) ? input.enabled : before.enabled !== false,
    runbook_url: runbook,
    value_function: text(before.value_function) || 'single_value',
    ...(type === 'baseline' && { baseline_direction: direction }),
    violation_time_limit_seconds: timeLimitOf(input) ?? (typeof before.violation_time_limit_seconds === 'number' ? before.violation_time_limit_seconds : DEFAULT_TIME_LIMIT),
    terms,
    nrql: { query, since_value: sinceOf(input) ?? (text(record(before.nrql).since_value) || String(DEFAULT_SINCE_MINUTES)) },
  };
}
