import { z } from 'zod';
import { fieldNotesUnder, notFound, parseAnswer, v2IdOf, type FieldNote, type KnownGap, type V2Body, v2KeysOf } from '../../src/mapping-api.ts';
import { NRQL_OCCURRENCE_WORDS, NRQL_OPERATOR_WORDS } from '../../facts/nrql-condition-terms.ts';
import { missingParameter } from '../../facts/v2-titles.ts';
import { ALERT_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * alerts_nrql_conditions over NerdGraph's NRQL conditions (nrqlConditionsSearch, nrqlCondition,
 * alertsNrqlConditionStatic/Baseline/OutlierCreate/Update, alertsConditionDelete): the NerdGraph
 * answer's schema, its reshape into v2's nrql_condition, and a v2 body turned into NerdGraph's input.
 *
 * v2's fields are New Relic's REST pages (docs-website src/content/docs/alerts/scale-automate/
 * rest-api/): FN = alerts-conditions-api-field-names.mdx by collapser id, CALLS =
 * rest-api-calls-alerts.mdx #conditions-nrql. Their NerdGraph counterparts are how New Relic's own
 * tools map them (newrelic-client-go @dc87be3 pkg/alerts/nrql_conditions.go, graphqlNrqlConditionStructFields
 * and NrqlConditionUpdateInput; terraform-provider-newrelic @6cec439 newrelic/structures_newrelic_nrql_alert_condition.go
 * expandNrql, expandUpdateNrql and flattenNrql for since_value = nrql.evaluationOffset, and
 * resource_newrelic_nrql_alert_condition.go for the defaults EVENT_FLOW, a 120 s delay for
 * EVENT_FLOW and CADENCE, a 60 s timer for EVENT_TIMER): terms[].duration minutes =
 * thresholdDuration / 60; time_function all/any = thresholdOccurrences ALL/AT_LEAST_ONCE; the six
 * operators (FN #terms_operator) by name (equal = EQUALS); nrql.since_value = the deprecated
 * nrql.evaluationOffset; signal[...] and expiration[...] key by key; value_function = the deprecated
 * AlertsNrqlStaticCondition.valueFunction; outlier expected_groups = expectedGroups, ignore_overlap =
 * not openViolationOnGroupOverlap; type = STATIC/BASELINE/OUTLIER.
 */
export const NRQL_CONDITIONS_PAGE_SIZE = 50;

/**
 * The titles of the NRQL condition routes. v2's own words for them are UNCONFIRMED (no probe: a
 * title shows only on a refused write or a bad read, which the read-only probes do not make), so
 * they are the project's: the alert rules' wording both faces answer (facts/rule-titles.ts);
 * `missing`, v2's words for a deployment without its wrapper (facts/v2-titles.ts), used for this
 * wrapper too; `tooMany` and `typeChange`, refusals only the gateway makes.
 */
export const NrqlConditionTitles = {
  policyNotFound: ALERT_RULE_TITLES.policyNotFound,
  conditionNotFound: ALERT_RULE_TITLES.conditionNotFound,
  policyIdRequired: ALERT_RULE_TITLES.policyIdRequired,
  idInvalid: ALERT_RULE_TITLES.idInvalid,
  missing: missingParameter,
  invalid: ALERT_RULE_TITLES.invalid,
  tooMany: (pages: number): string =>
    `The policy has more NRQL conditions than the gateway reads in one request (${pages} NerdGraph pages of nrqlConditionsSearch); nothing partial is shown: list them through NerdGraph, or split the policy`,
  typeChange: 'Invalid nrql_condition: type cannot be changed: NerdGraph keeps a condition\'s threshold type; delete it and create one of the new type',
} as const;

// ---------------------------------------------------------------------------------------------
// NerdGraph's answer

const Term = z.object({
  operator: z.string(),
  priority: z.string(),
  threshold: z.number(),
  thresholdDuration: z.number(),
  thresholdOccurrences: z.string(),
});

const Signal = z.object({
  aggregationWindow: z.number().nullable(),
  aggregationMethod: z.string().nullable(),
  aggregationDelay: z.number().nullable(),
  aggregationTimer: z.number().nullable(),
  slideBy: z.number().nullable(),
  fillOption: z.string().nullable(),
  fillValue: z.number().nullable(),
  // NerdGraph-only: sent back as read when an update sends the whole signal.
  evaluationDelay: z.number().nullable().optional(),
});
const Expiration = z.object({
  expirationDuration: z.number().nullable(),
  openViolationOnExpiration: z.boolean().nullable(),
  closeViolationsOnExpiration: z.boolean().nullable(),
  ignoreOnExpectedTermination: z.boolean().nullable().optional(),
});

export const NrqlCondition = z.object({
  id: z.string(),
  name: z.string(),
  policyId: z.string(),
  type: z.string(),
  enabled: z.boolean(),
  runbookUrl: z.string().nullable(),
  violationTimeLimitSeconds: z.number().nullable(),
  nrql: z.object({ query: z.string(), evaluationOffset: z.number().nullable().optional(), dataAccountId: z.number().nullable().optional() }),
  signal: Signal,
  expiration: Expiration,
  terms: z.array(Term),
  valueFunction: z.string().optional(),
  baselineDirection: z.string().optional(),
  expectedGroups: z.number().optional(),
  openViolationOnGroupOverlap: z.boolean().optional(),
  entityGuid: z.string(),
});
export type NrqlCondition = z.infer<typeof NrqlCondition>;

export const OPERATOR_OF = NRQL_OPERATOR_WORDS;
const OCCURRENCES_OF = NRQL_OCCURRENCE_WORDS;
/** FN: aggregation_window default 60 s, aggregation_delay 120 s, aggregation_timer 60 s, time limit 259,200 s. */
export const DEFAULT_WINDOW_SECONDS = 60;
export const DEFAULT_DELAY_SECONDS = 120;
export const DEFAULT_TIMER_SECONDS = 60;
export const DEFAULT_TIME_LIMIT_SECONDS = 259_200;

/** since_value: the deprecated nrql.evaluationOffset (client-go's condition fields; Terraform flattenNrql), null when the condition has none. */
const sinceValueOf = (condition: NrqlCondition): string | null => (condition.nrql.evaluationOffset === null || condition.nrql.evaluationOffset === undefined ? null : String(condition.nrql.evaluationOffset));

/** Minutes as v2 text, exactly: 90 s is "1.5", never rounded. */
const minutesOf = (seconds: number): string => String(seconds / 60);

/** v2's signal, in the documented create body's key order and types (CALLS create-nrql-conditions). */
function v2Signal(condition: NrqlCondition): V2Body {
  const { signal } = condition;
  const offset = condition.nrql.evaluationOffset ?? null;
  return {
    aggregation_window: signal.aggregationWindow === null ? null : String(signal.aggregationWindow),
    aggregation_method: signal.aggregationMethod,
    aggregation_delay: signal.aggregationDelay,
    aggregation_timer: signal.aggregationTimer,
    slide_by: signal.slideBy,
    fill_option: signal.fillOption === null ? null : signal.fillOption.toLowerCase(),
    fill_value: signal.fillValue === null ? null : String(signal.fillValue),
    evaluation_offset: offset,
  };
}

/**
 * v2's nrql_condition, keys in v2's order: `type` before `id` (newrelic-client-go
 * pkg/alerts/nrql_conditions_test.go fixtures; XML clients see the order), signal and expiration
 * after nrql (CALLS create-nrql-conditions), entity_guid last.
 */
export function v2NrqlCondition(condition: NrqlCondition): V2Body {
  const type = condition.type.toLowerCase();
  return {
    type,
    id: Number(condition.id),
    name: condition.name,
    enabled: condition.enabled,
    runbook_url: condition.runbookUrl ?? '',
    value_function: (condition.valueFunction ?? 'SINGLE_VALUE').toLowerCase(),
    ...(type === 'baseline' && { baseline_direction: (condition.baselineDirection ?? 'UPPER_ONLY').toLowerCase() }),
    // rest-v2-shapes.md lists the outlier keys for every nrql_condition: null on the other types (UNCONFIRMED; probe: v2-nrql-conditions-field-by-field).
    expected_groups: condition.expectedGroups ?? null,
    ignore_overlap: condition.openViolationOnGroupOverlap === undefined ? null : !condition.openViolationOnGroupOverlap,
    violation_time_limit_seconds: condition.violationTimeLimitSeconds,
    terms: condition.terms.map((term) => ({
      duration: minutesOf(term.thresholdDuration),
      operator: OPERATOR_OF[term.operator] ?? term.operator.toLowerCase(),
      priority: term.priority.toLowerCase(),
      threshold: String(term.threshold),
      time_function: OCCURRENCES_OF[term.thresholdOccurrences] ?? term.thresholdOccurrences.toLowerCase(),
    })),
    nrql: { query: condition.nrql.query, since_value: sinceValueOf(condition) },
    signal: v2Signal(condition),
    expiration: {
      expiration_duration: condition.expiration.expirationDuration === null ? null : String(condition.expiration.expirationDuration),
      open_violation_on_expiration: condition.expiration.openViolationOnExpiration ?? false,
      close_violations_on_expiration: condition.expiration.closeViolationsOnExpiration ?? false,
    },
    entity_guid: condition.entityGuid,
  };
}

/** The three kinds of NRQL condition NerdGraph can write. */
export type ConditionType = 'static' | 'baseline' | 'outlier';

/** The six condition mutations, by v2 type and write, with the field each answers under. */
const MUTATIONS = {
  create: { static: 'alertsNrqlConditionStaticCreate', baseline: 'alertsNrqlConditionBaselineCreate', outlier: 'alertsNrqlConditionOutlierCreate' },
  update: { static: 'alertsNrqlConditionStaticUpdate', baseline: 'alertsNrqlConditionBaselineUpdate', outlier: 'alertsNrqlConditionOutlierUpdate' },
} as const;

/** The GraphQL document of each write, by type (queries/NrqlCondition*.graphql). */
export const NRQL_CONDITION_OPERATIONS = {
  create: { static: 'NrqlConditionStaticCreate', baseline: 'NrqlConditionBaselineCreate', outlier: 'NrqlConditionOutlierCreate' },
  update: { static: 'NrqlConditionStaticUpdate', baseline: 'NrqlConditionBaselineUpdate', outlier: 'NrqlConditionOutlierUpdate' },
} as const;
type MutationField = (typeof MUTATIONS)[keyof typeof MUTATIONS][ConditionType];
type MutatedAnswer = z.ZodType<Partial<Record<MutationField, NrqlCondition>>>;
/** Each mutation's answer schema, built once (zod compiles a schema on its first parse). */
const MUTATED = new Map<MutationField, MutatedAnswer>(
  Object.values(MUTATIONS).flatMap((byType) => Object.values(byType)).map((field) => [field, z.object({ [field]: NrqlCondition })]),
);

/** The v2 answer of a create or update of a condition of `type`: the condition NerdGraph returned under its mutation's field. */
export function mutatedConditionAnswer(write: keyof typeof MUTATIONS, type: ConditionType, operation: string): (payload: unknown) => V2Body {
  const field = MUTATIONS[write][type];
  return (payload) => {
    const condition = parseAnswer(MUTATED.get(field) as MutatedAnswer, payload, operation)[field] as NrqlCondition;
    return { nrql_condition: v2NrqlCondition(condition) };
  };
}

const Found = z.object({ actor: z.object({ account: z.object({ alerts: z.object({ nrqlCondition: NrqlCondition.nullable() }) }).nullable() }) });

/** The account's NRQL condition `id` names (NrqlConditionById), or null. */
export async function readNrqlCondition(ctx: { accountId: number; read(operation: string, variables: Record<string, unknown>): Promise<unknown> }, id: number): Promise<NrqlCondition | null> {
  const answer = parseAnswer(Found, await ctx.read('NrqlConditionById', { accountId: ctx.accountId, id: String(id) }), 'NrqlConditionById');
  return answer.actor.account?.alerts.nrqlCondition ?? null;
}

/** A term's NerdGraph-only settings (AlertsNrqlTerms.disableHealthStatusReporting, AlertsNrqlConditionTermsWithPrediction.prediction): never shown in v2. */
const TermExtras = z.object({
  priority: z.string(),
  disableHealthStatusReporting: z.boolean().nullable(),
  prediction: z.object({ predictBy: z.number().nullable(), preferPredictionViolation: z.boolean().nullable() }).nullable().optional(),
});
export type TermExtras = z.infer<typeof TermExtras>;
const FoundTerms = z.object({ actor: z.object({ account: z.object({ alerts: z.object({ nrqlCondition: z.object({ terms: z.array(TermExtras) }).nullable() }) }).nullable() }) });

/** The NerdGraph-only settings of condition `id`'s terms (NrqlConditionTermsById), to carry over when an update replaces them. */
export async function readTermExtras(ctx: Parameters<typeof readNrqlCondition>[0], id: number): Promise<TermExtras[]> {
  const answer = parseAnswer(FoundTerms, await ctx.read('NrqlConditionTermsById', { accountId: ctx.accountId, id: String(id) }), 'NrqlConditionTermsById');
  return answer.actor.account?.alerts.nrqlCondition?.terms ?? [];
}

/** The condition id of the path: a malformed one is v2's 404, as an unknown one. */
export function conditionIdOf(raw: string | undefined): number {
  const id = v2IdOf(raw ?? '');
  if (id === undefined) throw notFound(NrqlConditionTitles.conditionNotFound);
  return id;
}

/** The path's NRQL condition, as the account holds it: a malformed, unknown or other account's id is v2's 404. */
export async function pathNrqlCondition(ctx: Parameters<typeof readNrqlCondition>[0] & { pathParams: Readonly<Record<string, string>> }): Promise<{ id: number; stored: NrqlCondition }> {
  const id = conditionIdOf(ctx.pathParams.condition_id);
  const stored = await readNrqlCondition(ctx, id);
  if (!stored) throw notFound(NrqlConditionTitles.conditionNotFound);
  return { id, stored };
}

// ---------------------------------------------------------------------------------------------
// What the compatibility report says

const note = (prefix: string): FieldNote[] => {
  const at = fieldNotesUnder(prefix);
  return [
    at('type', 'exact', 'type STATIC/BASELINE/OUTLIER, lower case'),
    at('id', 'exact', 'id (NerdGraph condition ids are v2 ids, as text)'),
    at('name', 'exact', 'name'),
    at('enabled', 'exact', 'enabled (a create without it is disabled: v2 default false)'),
    at('runbook_url', 'exact', "runbookUrl ('' when null; '' or null clears it, sent as '')"),
    at('value_function', 'exact', 'the deprecated valueFunction of a static condition, lower case (single_value for baseline and outlier)'),
    at('baseline_direction', 'exact', 'baselineDirection, lower case (baseline conditions only)'),
    at('expected_groups', 'exact', 'expectedGroups (outlier conditions; null on the others)'),
    at('ignore_overlap', 'exact', 'not openViolationOnGroupOverlap (outlier conditions; null on the others)'),
    at('violation_time_limit_seconds', 'exact', 'violationTimeLimitSeconds (300 to 2,592,000; a create without it: 259,200)'),
    at('terms[].duration', 'exact', 'thresholdDuration seconds / 60, as text, never rounded (90 s is "1.5")'),
    at('terms[].operator', 'exact', 'operator, the six by name (EQUALS is equal)'),
    at('terms[].priority', 'exact', 'priority, lower case'),
    at('terms[].threshold', 'approximate', 'threshold (a float) as text: 1.50 reads back as 1.5'),
    at('terms[].time_function', 'exact', 'thresholdOccurrences ALL/AT_LEAST_ONCE -> all/any'),
    at('nrql.query', 'exact', 'nrql.query'),
    at('nrql.since_value', 'exact', 'the deprecated nrql.evaluationOffset, as text; null when the condition has none'),
    at('signal.aggregation_window', 'exact', 'signal.aggregationWindow, as text'),
    at('signal.aggregation_method', 'exact', 'signal.aggregationMethod'),
    at('signal.aggregation_delay', 'exact', 'signal.aggregationDelay'),
    at('signal.aggregation_timer', 'exact', 'signal.aggregationTimer'),
    at('signal.slide_by', 'exact', 'signal.slideBy'),
    at('signal.fill_option', 'exact', 'signal.fillOption, lower case'),
    at('signal.fill_value', 'exact', 'signal.fillValue, as text'),
    at('signal.evaluation_offset', 'exact', 'the deprecated nrql.evaluationOffset (as since_value)'),
    at('expiration.expiration_duration', 'exact', 'expiration.expirationDuration, as text'),
    at('expiration.open_violation_on_expiration', 'exact', 'expiration.openViolationOnExpiration'),
    at('expiration.close_violations_on_expiration', 'exact', 'expiration.closeViolationsOnExpiration'),
    at('entity_guid', 'exact', 'entityGuid (the condition entity: base64 of account|AIOPS|CONDITION|id)'),
  ];
};
export const nrqlConditionFields = (prefix: string): FieldNote[] => note(prefix);

export function nrqlConditionGaps(prefix: string): KnownGap[] {
  return [
    {
      path: `${prefix}.terms[].duration`,
      description: 'A duration that is not whole minutes reads as decimal minutes ("1.5" for 90 s) and writes back exactly; minutes that are not whole seconds ("0.01") are refused (422 naming terms.duration), never rounded.',
    },
    {
      description:
        'NerdGraph-only settings (description, title template, evaluation delay, data account, ignoreOnExpectedTermination, seasonality) are neither shown nor changed. A term\'s prediction and disableHealthStatusReporting are not shown; an update that changes the terms carries both over from the stored term of the same priority (a term of a new priority has none), and one whose terms equal the stored ones leaves the terms alone.',
    },
    {
      description:
        "Baseline (anomaly) conditions are listed, typed 'baseline', and can be created and updated, though CALLS #conditions-nrql says \"NRQL anomaly conditions are not available from this endpoint\": v2's own list left them out, which made a policy look empty of conditions it holds; an extra type a client can filter on is the lesser harm (UNCONFIRMED how a live list answers such a policy; probe: v2-nrql-conditions-field-by-field, which samples a baseline condition where the account has one).",
    },
    {
      path: `${prefix}.value_function`,
      description: "value_function sum exists only on static conditions (NerdGraph's valueFunction, deprecated, is on the static inputs only): on a baseline or outlier condition it is refused (422).",
    },
  ];
}

export const NRQL_CONDITION_ASSUMPTIONS: readonly string[] = [
  'since_value N is written as the deprecated nrql.evaluationOffset N and read back from it, as newrelic-client-go and Terraform do; a condition without an offset reads since_value null (UNCONFIRMED: whether live v2 sent null, no key or a value computed from the aggregation delay; probe: v2-nrql-conditions-field-by-field).',
  'An update sends nrql, signal and expiration each whole (merged from the condition read, nrql.dataAccountId, signal.evaluationDelay and expiration.ignoreOnExpectedTermination carried as read) when any of its keys changes, and not at all when none does, so a client sending back the whole condition it read (as newrelic-client-go does) changes nothing; nothing relies on NerdGraph merging an object key by key. evaluationOffset "cannot be set with aggregation_method, aggregation_delay, or aggregation_timer" (Terraform newrelic_nrql_alert_condition): a since_value given on a modern condition, or a method on an offset one, switches it, the other mode\'s fields sent as explicit nulls (UNCONFIRMED: that NerdGraph accepts those nulls as clearing them; no probe: it would have to write a condition, and the probes are read-only).',
  'The JSON types of signal and expiration in answers follow the documented create body (CALLS create-nrql-conditions): aggregation_window, fill_value and expiration_duration as text, delay, timer and slide_by as numbers (UNCONFIRMED; probe: v2-nrql-conditions-field-by-field).',
  'A create sends v2\'s documented signal defaults (FN: EVENT_FLOW, 60 s window, 120 s delay; 60 s timer for EVENT_TIMER) rather than relying on NerdGraph\'s (UNCONFIRMED that they agree; no probe: it would have to write a condition, and the probes are read-only).',
  "Clearing runbook_url ('' or null) sends runbookUrl '' (client-go's NrqlConditionUpdateInput sends runbookUrl without omitempty); null might leave the old runbook (UNCONFIRMED which NerdGraph does with null; no probe: it would have to write a condition, and the probes are read-only).",
  "A baseline condition's v2 fields (type 'baseline', baseline_direction upper_only/lower_only/upper_and_lower, default upper_only) are UNCONFIRMED: REST's baseline fields are undocumented (probe: v2-nrql-conditions-field-by-field, on a policy holding one).",
  "Outlier conditions: expected_groups = expectedGroups, ignore_overlap = not openViolationOnGroupOverlap (rest-v2-shapes.md names the v2 keys; the negation is UNCONFIRMED; probe: v2-nrql-conditions-field-by-field, with an outlier condition); static and baseline conditions carry both as null (UNCONFIRMED whether v2 sent them there; probe: v2-nrql-conditions-field-by-field).",
  "runbook_url is '' when the condition has none (UNCONFIRMED; probe: v2-nrql-conditions-field-by-field).",
  "entity_guid is on every answer, create and update included (UNCONFIRMED: client-go's list, show and delete fixtures carry it, its create and update fixtures do not, probably older captures; an extra key breaks no client, a missing one can; probe: v2-nrql-conditions-field-by-field for the list, no probe: it would have to write a condition, and the probes are read-only for create and update).",
];

/** A NRQL condition's keys under `wrapper`. */
export const nrqlConditionKeys = v2KeysOf(
  'SHAPES §9 (alerts_nrql_conditions, with its 2026-12-01 correction from docs-website alerts-conditions-api-field-names.mdx and rest-api-calls-alerts.mdx: signal and expiration; since_value deprecated)',
  {
    type: 'string',
    id: 'int',
    name: 'string',
    enabled: 'bool',
    runbook_url: 'string',
    value_function: 'string',
    violation_time_limit_seconds: 'int',
    expected_groups: 'int',
    ignore_overlap: 'bool',
    'terms[].duration': 'string',
    'terms[].operator': 'string',
    'terms[].priority': 'string',
    'terms[].threshold': 'string',
    'terms[].time_function': 'string',
    nrql: 'object',
    'nrql.query': 'string',
    'nrql.since_value?': 'string',
    signal: 'object',
    'signal.aggregation_window': 'string',
    'signal.aggregation_method': 'string',
    // A number, as the answers send it (NRQL_CONDITION_ASSUMPTIONS: the types of CALLS create-nrql-conditions).
    'signal.aggregation_delay': 'int',
    'signal.fill_option': 'string',
    expiration: 'object',
    'expiration.expiration_duration': 'string',
    'expiration.open_violation_on_expiration': 'bool',
    'expiration.close_violations_on_expiration': 'bool',
  },
);
