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
 * and 422 titles, and 201 for creates. Bodies and titles: alert-bodies.ts; answers, rate-limit
 * headers and lookups: alert-answers.ts.
 */
import { notFound } from './wire.ts';
import type { Params } from './bodies.ts';
import {
  ALERT_FAMILIES,
  createCondition,
  createPolicy,
  deleteCondition,
  deletePolicy,
  updatePolicy,
  type AlertCondition,
  type AlertFamily,
  type AlertPolicy,
} from '../alerts.ts';
import { invalid, text, valuesOf, type LegacyRequest, type LegacyRoute } from './common.ts';
import { AlertTitles, FAMILIES, PolicyChangesSchema, PolicySchema, validated, wrapped } from './alert-bodies.ts';
import { mergedNrqlUpdate } from './nrql-condition-body.ts';
import { alertRoute, byId, conditionBody, conditionIn, idOf, page, policyBody, policyIn, read, written } from './alert-answers.ts';

// ---------------------------------------------------------------------------------------------
// Policies

/**
 * filter[name] is an exact match of the name as stored (trimmed on write), so the value is
 * trimmed too: docs-website alerts/scale-automate/rest-api/manage-entities-alerts-conditions.mdx,
 * #example step 3 sends `filter[name]= Logjam Alert` and step 4 shows "Logjam Alert" found; so
 * does disable-enable-alerts-conditions-using-api.mdx, #example step 1 (curl --data-urlencode).
 */
function listPolicies(req: LegacyRequest): Response {
  const raw = text(req.params, 'filter[name]');
  // Behaviour legacyPolicyFilterNameTrimmed (on by default); off (test-only) matches the value as sent.
  const trimmed = req.data.behaviours.legacyPolicyFilterNameTrimmed;
  const name = raw === undefined || raw.trim() === '' || !trimmed ? raw : raw.trim();
  const policies = req.data.alerts.policies.filter((p) => p.accountId === req.accountId && (name === undefined || p.name === name)).sort(byId);
  return page(req, policies, 'policies', (policy) => policyBody(policy, req.data.behaviours.legacyShowsCustomPreference));
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
    const merged: Params = family === 'alerts_nrql_conditions' ? mergedNrqlUpdate(condition.fields, given) : { ...condition.fields };
    // defineProperty: a `__proto__` key from a JSON body stays a plain (then refused) field, never a prototype.
    if (family !== 'alerts_nrql_conditions') for (const [key, value] of Object.entries(given)) if (key !== 'id') Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
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
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'GET', (req) => read(req, { policy: policyBody(policyIn(req, req.path.policy_id), req.data.behaviours.legacyShowsCustomPreference) })),
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'PUT', updatePolicyRoute),
  alertRoute('/v2/alerts_policies/{policy_id}.{format}', 'DELETE', deletePolicyRoute),
  ...ALERT_FAMILIES.flatMap(familyRoutes),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'GET', listEntityConditions),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'PUT', linkEntity(true)),
  alertRoute('/v2/alerts_entity_conditions/{entity_id}.{format}', 'DELETE', linkEntity(false)),
];
