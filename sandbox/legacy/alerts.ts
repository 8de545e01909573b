/**
 * The legacy face's alert routes: REST v2's `alerts_*` namespaces that New Relic keeps alive
 * after the end of life, served from the alert store (../alerts.ts). The gateway passes these
 * through, never translates them, so here they are the only implementation: list (v2 paging,
 * Link header, ETag with If-None-Match), show, create, update and delete, for policies and
 * every condition family, and the entity-condition links. Every answer carries v2's
 * rate-limit headers (rest-v2.md §3.11) so that passthrough can be shown to keep them.
 *
 * Shapes are rest-v2-shapes.md §9. Unconfirmed choices (see sandbox/README.md): the page
 * size (50), `show` on a single policy or condition, the entity-condition wrappers, the 404
 * and 422 titles, and 201 for creates.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { V2Error, notFound, CONTENT_TYPES, serialise, type V2Body, type JsonValue } from './wire.ts';
import {
  ALERT_FAMILIES,
  INCIDENT_PREFERENCES,
  createCondition,
  createPolicy,
  deleteCondition,
  deletePolicy,
  updatePolicy,
  type AlertCondition,
  type AlertFamily,
  type AlertPolicy,
  type ConditionFields,
} from '../alerts.ts';
import type { SandboxData } from '../model.ts';
import { CACHE_CONTROL, etagMatches, invalid, pageOf, text, valuesOf, type LegacyRequest, type LegacyRoute } from './common.ts';
import { bodyParams, type Params } from './bodies.ts';

/** v2's alerts page size is UNCONFIRMED; the sandbox pages every alert list by 50. */
export const ALERTS_PAGE_SIZE = 50;
/** v2's documented limit: 1,000 calls per minute per key (reported, not enforced here). */
export const RATE_LIMIT_PER_MINUTE = 1000;

export const AlertTitles = {
  policyNotFound: 'No Policy found with the given ID',
  conditionNotFound: 'No Condition found with the given ID',
  policyIdRequired: 'Invalid parameter policy_id: a policy id is required',
  idInvalid: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
  missing: (wrapper: string): string => `missing parameter: ${wrapper}`,
  invalid: (wrapper: string, detail: string): string => `Invalid ${wrapper}: ${detail}`,
  entityType: 'Invalid parameter entity_type: expected one of Application, BrowserApplication, MobileApplication, KeyTransaction, Server',
  conditionIdRequired: 'Invalid parameter condition_id: a condition id is required',
  entityNotFound: 'No entity found with the given ID and entity_type',
  entityTypeMismatch: 'Invalid parameter entity_type: the condition does not target entities of this type',
} as const;

// ---------------------------------------------------------------------------------------------
// Body schemas. Bodies come as JSON, XML or form data (bodies.ts bodyParams), so numbers and
// flags may arrive as text, and a list in XML as a hash holding its repeated element.

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** A list: an array as is; an XML list (`{term: [...]}` or `{term: {...}}`) unwrapped; blank text as empty. */
const asList = (value: unknown): unknown => {
  if (Array.isArray(value) || value === undefined || value === null) return value;
  if (value === '') return [];
  if (typeof value === 'object') {
    const items = Object.values(value as Record<string, unknown>);
    if (items.length === 1) return Array.isArray(items[0]) ? items[0] : [items[0]];
  }
  return value;
};

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

const NrqlConditionSchema = z.object({
  type: z.enum(['static']).default('static'),
  name: Name,
  enabled: Flag.default(true),
  runbook_url: Runbook.optional(),
  value_function: z.enum(['single_value', 'sum']).default('single_value'),
  violation_time_limit_seconds: oneOf([3600, 7200, 14400, 28800, 43200, 86400]).default(3600),
  terms: Terms,
  nrql: z.object({
    query: z.string({ error: 'is required' }).trim().min(1, "can't be blank").max(4096, 'is too long (maximum is 4096 characters)'),
    since_value: z.union([z.number().int().transform(String), z.string().trim()]).pipe(z.enum(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '20'])),
  }),
});

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

interface FamilySpec {
  /** The list wrapper and the single-object wrapper (also the create/update body's wrapper). */
  plural: string;
  singular: string;
  schema: z.ZodType<ConditionFields, unknown>;
}

const FAMILIES: Record<AlertFamily, FamilySpec> = {
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

const PolicySchema = z.object({
  name: Name,
  incident_preference: z.enum(INCIDENT_PREFERENCES as [string, ...string[]]).default('PER_POLICY'),
});
const PolicyChangesSchema = PolicySchema.partial().extend({ incident_preference: z.enum(INCIDENT_PREFERENCES as [string, ...string[]]).optional() });

/** The first problem, as v2-style text: `Invalid policy: name can't be blank`. */
function validated<T>(schema: z.ZodType<T, unknown>, input: unknown, wrapper: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')} ` : '';
  throw invalid(AlertTitles.invalid(wrapper, `${where}${issue?.message ?? 'is not valid'}`));
}

const isHash = (value: JsonValue | undefined): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body's `{wrapper: {...}}`; a body without it is v2's (Rails') missing-parameter 400. */
async function wrapped(req: LegacyRequest, wrapper: string): Promise<Params> {
  const params = await bodyParams(req.request);
  const value = Object.hasOwn(params, wrapper) ? params[wrapper] : undefined;
  if (!isHash(value)) throw new V2Error(400, AlertTitles.missing(wrapper));
  return value;
}

// ---------------------------------------------------------------------------------------------
// Answers: v2 bodies, the ETag on reads, the rate-limit headers on everything.

const policyBody = (policy: AlertPolicy): V2Body => ({
  id: policy.id,
  incident_preference: policy.incidentPreference,
  name: policy.name,
  created_at: policy.createdAt,
  updated_at: policy.updatedAt,
});

const conditionBody = (condition: AlertCondition): V2Body => ({ id: condition.id, ...structuredClone(condition.fields) });



/** A read: 200 with a strong ETag over the body, or a bodiless 304 when the client has it. */
function read(req: LegacyRequest, body: V2Body, headers: Record<string, string> = {}): Response {
  const text = serialise(body, req.format);
  const etag = `"${createHash('sha256').update(text).digest('base64url')}"`;
  const common = { etag, 'cache-control': CACHE_CONTROL, ...headers };
  if (etagMatches(req.ifNoneMatch, etag)) return new Response(null, { status: 304, headers: common });
  return new Response(text, { status: 200, headers: { 'content-type': CONTENT_TYPES[req.format], ...common } });
}

function written(req: LegacyRequest, status: 200 | 201, body: V2Body): Response {
  return new Response(serialise(body, req.format), { status, headers: { 'content-type': CONTENT_TYPES[req.format] } });
}

/** Calls per key in the current minute, per sandbox world. */
const rateWindows = new WeakMap<SandboxData, Map<string, { minute: number; calls: number }>>();

/** v2's X-RateLimit-* headers: counted per key per clock minute, reported but never enforced. */
function rateLimitHeaders(req: LegacyRequest): Record<string, string> {
  let windows = rateWindows.get(req.data);
  if (!windows) rateWindows.set(req.data, (windows = new Map()));
  const key = (req.request.headers.get('x-api-key') ?? req.request.headers.get('api-key') ?? '').trim();
  const minute = Math.floor(req.now / 60_000);
  const window = windows.get(key);
  const calls = window && window.minute === minute ? window.calls + 1 : 1;
  windows.set(key, { minute, calls });
  return {
    'x-ratelimit-limit': String(RATE_LIMIT_PER_MINUTE),
    'x-ratelimit-remaining': String(Math.max(0, RATE_LIMIT_PER_MINUTE - calls)),
    'x-ratelimit-reset': String((minute + 1) * 60),
  };
}

/** One alert route: its answer, and any v2 error it throws, carry the rate-limit headers. */
function alertRoute(template: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', handler: (req: LegacyRequest) => Response | Promise<Response>): LegacyRoute {
  return {
    template,
    methods: [method],
    // Writes read their own body (or only the query string, for entity conditions).
    ...(method !== 'GET' && { body: 'own' as const }),
    handler: async (req) => {
      const limits = rateLimitHeaders(req);
      try {
        const response = await handler(req);
        for (const [name, value] of Object.entries(limits)) response.headers.set(name, value);
        return response;
      } catch (error) {
        if (!(error instanceof V2Error)) throw error;
        throw new V2Error(error.status, error.title, { headers: { ...error.headers, ...limits }, ...(error.messages && { messages: error.messages }) });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Lookups, scoped to the caller's account.

function idOf(raw: string | undefined, key: string): number {
  const value = raw?.trim() ?? '';
  if (!/^[1-9]\d{0,14}$/.test(value)) throw invalid(AlertTitles.idInvalid(key));
  return Number(value);
}

function policyIn(req: LegacyRequest, raw: string | undefined): AlertPolicy {
  const id = /^[1-9]\d{0,14}$/.test(raw ?? '') ? Number(raw) : undefined;
  const policy = id === undefined ? undefined : req.data.alerts.policies.find((p) => p.id === id && p.accountId === req.accountId);
  if (!policy) throw notFound(AlertTitles.policyNotFound);
  return policy;
}

function conditionIn(req: LegacyRequest, family: AlertFamily, raw: string | undefined): AlertCondition {
  const id = /^[1-9]\d{0,14}$/.test(raw ?? '') ? Number(raw) : undefined;
  const condition =
    id === undefined ? undefined : req.data.alerts.conditions.find((c) => c.id === id && c.family === family && c.accountId === req.accountId);
  if (!condition) throw notFound(AlertTitles.conditionNotFound);
  return condition;
}

/** One page of `items` under `wrapper`, with v2's Link header. */
function page<T>(req: LegacyRequest, items: readonly T[], wrapper: string, render: (item: T) => V2Body): Response {
  const number = pageOf(req.params);
  const lastPage = Math.ceil(items.length / ALERTS_PAGE_SIZE);
  const shown = items.slice((number - 1) * ALERTS_PAGE_SIZE, number * ALERTS_PAGE_SIZE).map(render);
  const link = req.link(number, lastPage);
  return read(req, { [wrapper]: shown }, link ? { link } : {});
}

const byId = <T extends { id: number }>(a: T, b: T): number => a.id - b.id;

// ---------------------------------------------------------------------------------------------
// Policies

function listPolicies(req: LegacyRequest): Response {
  const name = text(req.params, 'filter[name]');
  const policies = req.data.alerts.policies.filter((p) => p.accountId === req.accountId && (name === undefined || p.name === name)).sort(byId);
  return page(req, policies, 'policies', policyBody);
}

async function createPolicyRoute(req: LegacyRequest): Promise<Response> {
  const fields = validated(PolicySchema, await wrapped(req, 'policy'), 'policy');
  const policy = createPolicy(req.data.alerts, req.accountId, fields.name, fields.incident_preference as AlertPolicy['incidentPreference'], req.now);
  return written(req, 201, { policy: policyBody(policy) });
}

async function updatePolicyRoute(req: LegacyRequest): Promise<Response> {
  const policy = policyIn(req, req.path.policy_id);
  const changes = validated(PolicyChangesSchema, await wrapped(req, 'policy'), 'policy');
  updatePolicy(
    policy,
    {
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.incident_preference !== undefined && { incidentPreference: changes.incident_preference as AlertPolicy['incidentPreference'] }),
    },
    req.now,
  );
  return written(req, 200, { policy: policyBody(policy) });
}

function deletePolicyRoute(req: LegacyRequest): Response {
  const policy = policyIn(req, req.path.policy_id);
  deletePolicy(req.data.alerts, policy);
  return written(req, 200, { policy: policyBody(policy) });
}

// ---------------------------------------------------------------------------------------------
// Conditions of every family

function conditionsOf(req: LegacyRequest, family: AlertFamily, policy: AlertPolicy): AlertCondition[] {
  return req.data.alerts.conditions.filter((c) => c.family === family && c.accountId === req.accountId && c.policyId === policy.id).sort(byId);
}

/** `GET /v2/F.{format}?policy_id=`: the policy is required (422 without it, 404 when unknown). */
function listConditions(family: AlertFamily) {
  return (req: LegacyRequest): Response => {
    const raw = valuesOf(req.params, 'policy_id').at(-1);
    if (raw === undefined || raw.trim() === '') throw invalid(AlertTitles.policyIdRequired);
    const policy = policyIn(req, String(idOf(raw, 'policy_id')));
    return page(req, conditionsOf(req, family, policy), FAMILIES[family].plural, conditionBody);
  };
}

function listConditionsOfPathPolicy(family: AlertFamily) {
  return (req: LegacyRequest): Response => page(req, conditionsOf(req, family, policyIn(req, req.path.policy_id)), FAMILIES[family].plural, conditionBody);
}

function createConditionRoute(family: AlertFamily) {
  return async (req: LegacyRequest): Promise<Response> => {
    const spec = FAMILIES[family];
    const policy = policyIn(req, req.path.policy_id);
    const fields = validated(spec.schema, await wrapped(req, spec.singular), spec.singular);
    return written(req, 201, { [spec.singular]: conditionBody(createCondition(req.data.alerts, policy, family, fields)) });
  };
}

function showCondition(family: AlertFamily) {
  return (req: LegacyRequest): Response => read(req, { [FAMILIES[family].singular]: conditionBody(conditionIn(req, family, req.path.condition_id)) });
}

/** PUT: the given fields replace the stored ones; the result must be a valid condition. */
function updateConditionRoute(family: AlertFamily) {
  return async (req: LegacyRequest): Promise<Response> => {
    const spec = FAMILIES[family];
    const condition = conditionIn(req, family, req.path.condition_id);
    const given = await wrapped(req, spec.singular);
    const merged: Params = { ...condition.fields };
    // defineProperty: a `__proto__` key from a JSON body stays a plain (then refused) field, never a prototype.
    for (const [key, value] of Object.entries(given)) if (key !== 'id') Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
    condition.fields = validated(spec.schema, merged, spec.singular);
    return written(req, 200, { [spec.singular]: conditionBody(condition) });
  };
}

function deleteConditionRoute(family: AlertFamily) {
  return (req: LegacyRequest): Response => {
    const condition = conditionIn(req, family, req.path.condition_id);
    deleteCondition(req.data.alerts, condition);
    return written(req, 200, { [FAMILIES[family].singular]: conditionBody(condition) });
  };
}

// ---------------------------------------------------------------------------------------------
// Entity conditions: which APM-style conditions (alerts_conditions) target one entity.

const ENTITY_CONDITION_TYPES: Record<string, readonly string[]> = {
  Application: ['apm_app_metric', 'apm_jvm_metric'],
  KeyTransaction: ['apm_kt_metric'],
  BrowserApplication: ['browser_metric'],
  MobileApplication: ['mobile_metric'],
  Server: ['servers_metric'],
};

function entityOf(req: LegacyRequest, params: URLSearchParams): { id: string; types: readonly string[] } {
  const entityType = params.get('entity_type')?.trim() ?? '';
  const types = Object.hasOwn(ENTITY_CONDITION_TYPES, entityType) ? ENTITY_CONDITION_TYPES[entityType] : undefined;
  if (!types) throw invalid(AlertTitles.entityType);
  const id = idOf(req.path.entity_id, 'entity_id');
  const { data, accountId } = req;
  const exists =
    entityType === 'Application'
      ? data.apps.some((app) => app.id === id && app.accountId === accountId)
      : entityType === 'KeyTransaction'
        ? data.keyTransactions.some((kt) => kt.id === id && kt.accountId === accountId)
        : entityType === 'BrowserApplication'
          ? data.browserApps.some((app) => app.id === id && app.accountId === accountId)
          : entityType === 'MobileApplication'
            ? data.mobileApps.some((app) => app.id === id && app.accountId === accountId)
            : false; // The sandbox has no servers.
  if (!exists) throw notFound(AlertTitles.entityNotFound);
  return { id: String(id), types };
}

const entitiesOf = (condition: AlertCondition): string[] => (Array.isArray(condition.fields.entities) ? (condition.fields.entities as string[]) : []);

function listEntityConditions(req: LegacyRequest): Response {
  const entity = entityOf(req, req.query);
  const conditions = req.data.alerts.conditions
    .filter((c) => c.family === 'alerts_conditions' && c.accountId === req.accountId && entity.types.includes(String(c.fields.type)) && entitiesOf(c).includes(entity.id))
    .sort(byId);
  return read(req, { conditions: conditions.map(conditionBody) });
}

/** PUT adds the entity to the condition's entities, DELETE removes it; both answer the condition. */
function linkEntity(add: boolean) {
  return (req: LegacyRequest): Response => {
    const entity = entityOf(req, req.query);
    const raw = req.query.get('condition_id');
    if (raw === null || raw.trim() === '') throw invalid(AlertTitles.conditionIdRequired);
    const condition = conditionIn(req, 'alerts_conditions', String(idOf(raw, 'condition_id')));
    if (!entity.types.includes(String(condition.fields.type))) throw invalid(AlertTitles.entityTypeMismatch);
    const others = entitiesOf(condition).filter((id) => id !== entity.id);
    condition.fields = { ...condition.fields, entities: add ? [...others, entity.id] : others };
    return written(req, 200, { condition: conditionBody(condition) });
  };
}

// ---------------------------------------------------------------------------------------------

function familyRoutes(family: AlertFamily): LegacyRoute[] {
  const base = `/v2/${family}`;
  if (family === 'alerts_location_failure_conditions') {
    return [
      alertRoute(`${base}/policies/{policy_id}.{format}`, 'GET', listConditionsOfPathPolicy(family)),
      alertRoute(`${base}/policies/{policy_id}.{format}`, 'POST', createConditionRoute(family)),
      alertRoute(`${base}/{condition_id}.{format}`, 'PUT', updateConditionRoute(family)),
      alertRoute(`${base}/{condition_id}.{format}`, 'DELETE', deleteConditionRoute(family)),
    ];
  }
  return [
    alertRoute(`${base}.{format}`, 'GET', listConditions(family)),
    alertRoute(`${base}/policies/{policy_id}.{format}`, 'POST', createConditionRoute(family)),
    alertRoute(`${base}/{condition_id}.{format}`, 'GET', showCondition(family)),
    alertRoute(`${base}/{condition_id}.{format}`, 'PUT', updateConditionRoute(family)),
    alertRoute(`${base}/{condition_id}.{format}`, 'DELETE', deleteConditionRoute(family)),
  ];
}

export const ALERT_ROUTES: readonly LegacyRoute[] = [
  alertRoute('/v2/alerts_policies.{format}', 'GET', listPolicies),
  alertRoute('/v2/alerts_policies.{format}', 'POST', createPolicyRoute),
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'GET', (req) => read(req, { policy: policyBody(policyIn(req, req.path.policy_id)) })),
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'PUT', updatePolicyRoute),
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'DELETE', deletePolicyRoute),
  ...ALERT_FAMILIES.flatMap(familyRoutes),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'GET', listEntityConditions),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'PUT', linkEntity(true)),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'DELETE', linkEntity(false)),
];
