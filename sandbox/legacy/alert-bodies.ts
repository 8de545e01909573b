/**
 * What the legacy alert routes (alerts.ts) accept: the error titles, and the zod schemas of
 * policy and condition bodies per family (shapes: rest-v2-shapes.md §9), validated into
 * v2-style 422 text; a body without its wrapper is Rails' missing-parameter 400. The titles
 * are UNCONFIRMED (see sandbox/README.md).
 */
import { z } from 'zod';
import { V2Error, type JsonValue } from './wire.ts';
import { INCIDENT_PREFERENCES, type AlertFamily, type ConditionFields } from '../alerts.ts';
import { invalid, type LegacyRequest } from './common.ts';
import { bodyParams, type Params } from './bodies.ts';
import { asList, NrqlConditionBody, NUMERIC } from './nrql-condition-body.ts';
import { missingParameter } from '../../facts/v2-titles.ts';
import { ALERT_RULE_TITLES } from '../../facts/rule-titles.ts';
export const AlertTitles = {
  policyNotFound: ALERT_RULE_TITLES.policyNotFound,
  conditionNotFound: ALERT_RULE_TITLES.conditionNotFound,
  policyIdRequired: ALERT_RULE_TITLES.policyIdRequired,
  idInvalid: ALERT_RULE_TITLES.idInvalid,
  missing: missingParameter,
  invalid: ALERT_RULE_TITLES.invalid,
  entityType: 'Invalid parameter entity_type: expected one of Application, BrowserApplication, MobileApplication, KeyTransaction, Server',
  conditionIdRequired: 'Invalid parameter condition_id: a condition id is required',
  entityNotFound: 'No entity found with the given ID and entity_type',
  entityTypeMismatch: 'Invalid parameter entity_type: the condition does not target entities of this type',
} as const;

// ---------------------------------------------------------------------------------------------
// Body schemas. Bodies come as JSON, XML or form data (bodies.ts bodyParams), so numbers and
// flags may arrive as text, and a list in XML as a hash holding its repeated element.


const Name = z.string({ error: "can't be blank" }).trim().min(1, "can't be blank").max(255, 'is too long (maximum is 255 characters)');
const Flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((flag) => flag === 'true')], { error: 'must be true or false' });
const WholeNumber = z.union([z.number().int(), z.string().trim().regex(/^\d{1,9}$/).transform(Number)], { error: 'must be a whole number' });
const oneOf = (allowed: readonly number[]) => WholeNumber.refine((value) => allowed.includes(value), `must be one of ${allowed.join(', ')}`);
const NumberText = z.union([z.number().finite().transform(String), z.string().trim().regex(NUMERIC)], { error: 'must be a number' });
const Runbook = z.string({ error: 'must be text' }).max(2048, 'is too long (maximum is 2048 characters)');
const Priority = z.enum(['critical', 'warning']);

const Term = z.object({
  duration: z.union([z.number().int().positive().transform(String), z.string().trim().regex(/^[1-9]\d{0,3}$/)], { error: 'must be a whole number of minutes' }),
  operator: z.enum(['above', 'below', 'equal']),
  priority: Priority,
  threshold: NumberText,
  time_function: z.enum(['all', 'any']),
});
const Terms = z.preprocess(asList, z.array(Term).min(1, 'must hold at least one term'));
const EntityIds = z.preprocess(
  asList,
  z.array(z.union([z.number().int().positive().transform(String), z.string().trim().regex(/^[1-9]\d{0,15}$/)], { error: 'must be entity ids' })),
);

const ConditionSchema = z
  .object({
    type: z.enum(['apm_app_metric', 'apm_kt_metric', 'apm_jvm_metric', 'browser_metric', 'mobile_metric', 'servers_metric']),
    name: Name,
    enabled: Flag.default(true),
    entities: EntityIds.default([]),
    metric: z.string({ error: 'is required' }).trim().regex(/^[a-z_]{1,64}$/, 'must be a metric such as apdex or error_percentage'),
    condition_scope: z.enum(['application', 'instance']).optional(),
    violation_close_timer: oneOf([1, 2, 4, 8, 12, 24]).optional(),
    runbook_url: Runbook.optional(),
    terms: Terms,
    user_defined: z.object({ metric: Name, value_function: z.enum(['average', 'min', 'max', 'total', 'sample_size']) }).optional(),
    gc_metric: z.string().trim().min(1).optional(),
  })
  .refine((condition) => condition.metric !== 'user_defined' || condition.user_defined !== undefined, {
    message: 'is required when metric is user_defined',
    path: ['user_defined'],
  });

/** NRQL conditions: the contract written from New Relic's two REST pages (nrql-condition-body.ts). */
const NrqlConditionSchema = NrqlConditionBody;

const ExternalServiceConditionSchema = z.object({
  type: z.enum(['apm', 'mobile']),
  name: Name,
  enabled: Flag.default(true),
  entities: EntityIds.default([]),
  external_service_url: z.string({ error: 'is required' }).trim().min(1, "can't be blank").max(1024),
  metric: z.enum(['response_time_average', 'response_time_minimum', 'response_time_maximum', 'throughput']),
  runbook_url: Runbook.optional(),
  terms: Terms,
});

const SyntheticsConditionSchema = z.object({
  name: Name,
  monitor_id: z.string({ error: 'is required' }).trim().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a monitor UUID'),
  runbook_url: Runbook.optional(),
  enabled: Flag.default(true),
});

const LocationFailureConditionSchema = z.object({
  name: Name,
  enabled: Flag.default(true),
  entities: z.preprocess(asList, z.array(z.string().trim().min(1)).min(1, 'must name at least one monitor')),
  terms: z.preprocess(asList, z.array(z.object({ priority: Priority, threshold: WholeNumber.refine((n) => n >= 1, 'must be at least 1') })).min(1, 'must hold at least one term')),
  violation_time_limit_seconds: oneOf([3600, 7200, 14400, 28800, 43200, 86400]).default(3600),
  runbook_url: Runbook.optional(),
});

export interface FamilySpec {
  /** The list wrapper and the single-object wrapper (also the create/update body's wrapper). */
  plural: string;
  singular: string;
  schema: z.ZodType<ConditionFields, unknown>;
}

export const FAMILIES: Record<AlertFamily, FamilySpec> = {
  alerts_conditions: { plural: 'conditions', singular: 'condition', schema: ConditionSchema as z.ZodType<ConditionFields, unknown> },
  alerts_nrql_conditions: { plural: 'nrql_conditions', singular: 'nrql_condition', schema: NrqlConditionSchema as z.ZodType<ConditionFields, unknown> },
  alerts_external_service_conditions: {
    plural: 'external_service_conditions',
    singular: 'external_service_condition',
    schema: ExternalServiceConditionSchema as z.ZodType<ConditionFields, unknown>,
  },
  alerts_synthetics_conditions: { plural: 'synthetics_conditions', singular: 'synthetics_condition', schema: SyntheticsConditionSchema as z.ZodType<ConditionFields, unknown> },
  alerts_location_failure_conditions: {
    plural: 'location_failure_conditions',
    singular: 'location_failure_condition',
    schema: LocationFailureConditionSchema as z.ZodType<ConditionFields, unknown>,
  },
};

// v2's text for a bad incident_preference is UNCONFIRMED; the sandbox names the allowed values.
const IncidentPreference = z.enum(INCIDENT_PREFERENCES as [string, ...string[]], { error: `must be one of ${INCIDENT_PREFERENCES.join(', ')}` });
export const PolicySchema = z.object({
  name: Name,
  incident_preference: IncidentPreference.default('PER_POLICY'),
});
export const PolicyChangesSchema = PolicySchema.partial().extend({ incident_preference: IncidentPreference.optional() });

/** The first problem, as v2-style text: `Invalid policy: name can't be blank`. */
export function validated<T>(schema: z.ZodType<T, unknown>, input: unknown, wrapper: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')} ` : '';
  throw invalid(AlertTitles.invalid(wrapper, `${where}${issue?.message ?? 'is not valid'}`));
}

const isHash = (value: JsonValue | undefined): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body's `{wrapper: {...}}`; a body without it is v2's (Rails') missing-parameter 400. */
export async function wrapped(req: LegacyRequest, wrapper: string): Promise<Params> {
  const params = await bodyParams(req.request);
  const value = Object.hasOwn(params, wrapper) ? params[wrapper] : undefined;
  if (!isHash(value)) throw new V2Error(400, AlertTitles.missing(wrapper));
  return value;
}
