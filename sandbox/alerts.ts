/**
 * The sandbox's alert store: policies and their conditions, per account, as REST v2's
 * `alerts_*` namespaces keep them. New Relic keeps these namespaces alive after the REST v2 end
 * of life, so the gateway passes them through unless a ROUTE_MODES rule names them. The legacy
 * face serves them all (legacy/alerts.ts); the NerdGraph face writes the same store's policies
 * (alert-policy-mutations.ts), reads and writes its NRQL conditions and deletes conditions of any
 * family (nrql-condition-fields.ts, alert-condition-mutations.ts).
 *
 * Conditions are kept as the v2 objects themselves (every field but `id`, in v2's field order),
 * because v2 writes and reads them field for field: a create or update stores what it
 * validated, a read renders it back. Generation draws from its own random stream after every
 * other entity exists, so adding the store changed no other value of the world.
 */
import type { JsonValue } from './legacy/wire.ts';
import { createRandom } from './world/draws.ts';
import { INCIDENT_PREFERENCES as V2_INCIDENT_PREFERENCES } from '../facts/v2-values.ts';

/** v2's three values (facts/v2-values.ts: docs-website rest-api-calls-alerts.mdx, #policies-create: "This must be one of the following"). */
export type IncidentPreference = (typeof V2_INCIDENT_PREFERENCES)[number];
export const INCIDENT_PREFERENCES: readonly IncidentPreference[] = V2_INCIDENT_PREFERENCES;
/**
 * NerdGraph's AlertsIncidentPreference gained CUSTOM after both schema files were pulled
 * (../shared/reference/nerdgraph.md §1, quirk 3: newrelic-sb-sdk's 2026-04-19 types). Only the
 * NerdGraph face writes it; the store keeps it, so the legacy face shows such a policy as it is.
 */
export type StoredIncidentPreference = IncidentPreference | 'CUSTOM';

export interface AlertPolicy {
  accountId: number;
  id: number;
  name: string;
  incidentPreference: StoredIncidentPreference;
  /** Epoch ms, as v2 shows them. */
  createdAt: number;
  updatedAt: number;
}

/** The condition families, named by their v2 namespace. */
export type AlertFamily =
  | 'alerts_conditions'
  | 'alerts_nrql_conditions'
  | 'alerts_external_service_conditions'
  | 'alerts_synthetics_conditions'
  | 'alerts_location_failure_conditions';

export const ALERT_FAMILIES: readonly AlertFamily[] = [
  'alerts_conditions',
  'alerts_nrql_conditions',
  'alerts_external_service_conditions',
  'alerts_synthetics_conditions',
  'alerts_location_failure_conditions',
];

export type ConditionFields = { [key: string]: JsonValue };

export interface AlertCondition {
  accountId: number;
  policyId: number;
  family: AlertFamily;
  id: number;
  /** The v2 object without `id`, in v2's field order. */
  fields: ConditionFields;
}

/**
 * A condition's entity GUID, the one value both faces show (NerdGraph `entityGuid`, v2's NRQL
 * `entity_guid`): base64 of `accountId|AIOPS|CONDITION|conditionId`, standard alphabet, no padding
 * (New Relic's terraform-provider-newrelic, newrelic/condition_helpers.go getConditionEntityGUID;
 * newrelic-client-go pkg/alerts/nrql_conditions_test.go's fixture GUID decodes to the same
 * `…|CONDITION|735362` shape, its account part mangled).
 */
export const conditionEntityGuid = (condition: Pick<AlertCondition, 'accountId' | 'id'>): string =>
  Buffer.from(`${condition.accountId}|AIOPS|CONDITION|${condition.id}`).toString('base64').replace(/=+$/, '');

export interface SandboxAlerts {
  policies: AlertPolicy[];
  conditions: AlertCondition[];
  /** The last id handed out, per kind: created ids continue from the generated ones. */
  lastPolicyId: number;
  lastConditionId: number;
}

/** Mixed into the seed so the alert store draws from its own stream. */
const ALERTS_STREAM = 0x0a1e_475a;
/**
 * Policies per account: the primary account's fill three pages of 50 and part of a fourth.
 * Its first 61 ids are the ones its applications link to (`links.alert_policy`, 100000-100060).
 */
export const ALERT_POLICY_COUNTS = { primary: 160, other: 12 } as const;
const FIRST_POLICY_ID: Record<'primary' | 'other', number> = { primary: 100_000, other: 110_000 };
const FIRST_CONDITION_ID = 1_000_000;
/** The primary account's first policy holds this many NRQL conditions, so a condition list pages too. */
export const BUSY_POLICY_NRQL_CONDITIONS = 120;

const DAY_MS = 86_400_000;
const TEAMS = ['Billing', 'Checkout', 'Storefront', 'Platform', 'Data', 'Search'] as const;
const SUBJECTS = ['latency', 'errors', 'throughput', 'saturation', 'uptime', 'apdex'] as const;
const METRICS = ['apdex', 'error_percentage', 'response_time_web', 'throughput_web', 'user_defined'] as const;
const EXTERNAL_URLS = ['api.stripe.com', 'hooks.slack.com', 'payments.example.com', 'auth.example.net'] as const;
const EXTERNAL_METRICS = ['response_time_average', 'response_time_maximum', 'throughput'] as const;
const RUNBOOK = 'https://runbooks.example.com/';

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const between = (random: Random, min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

/** A UUID-shaped id from the stream (synthetics monitors). */
function uuidOf(random: Random): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function term(random: Random, priority: 'critical' | 'warning'): ConditionFields {
  return {
    duration: String(pick(random, [5, 10, 15, 30])),
    operator: pick(random, ['above', 'below'] as const),
    priority,
    threshold: String(pick(random, [0.5, 0.9, 1, 5, 100, 1500])),
    time_function: pick(random, ['all', 'any'] as const),
  };
}

function terms(random: Random): JsonValue[] {
  return random() < 0.5 ? [term(random, 'critical')] : [term(random, 'critical'), term(random, 'warning')];
}

/** The v2 fields of one generated condition of `family`. */
function generatedFields(random: Random, family: AlertFamily, name: string, appIds: readonly number[]): ConditionFields {
  const enabled = random() < 0.85;
  const runbook = random() < 0.5 ? `${RUNBOOK}${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}` : '';
  const entities = appIds.length === 0 ? [] : [...new Set(Array.from({ length: between(random, 1, 3) }, () => String(pick(random, appIds))))];
  switch (family) {
    case 'alerts_conditions': {
      const metric = pick(random, METRICS);
      return {
        type: 'apm_app_metric',
        name,
        enabled,
        entities,
        metric,
        condition_scope: 'application',
        violation_close_timer: pick(random, [1, 2, 4, 8, 12, 24]),
        runbook_url: runbook,
        terms: terms(random),
        ...(metric === 'user_defined' ? { user_defined: { metric: 'Custom/Queue/Depth', value_function: 'average' } } : {}),
      };
    }
    case 'alerts_nrql_conditions': {
      // Conditions of the v2 era: each with its since_value, the deprecated offset (no aggregation
      // method, delay or timer), stored as the legacy face's contract stores a v2 body
      // (legacy/nrql-condition-body.ts). Modern ones are those created later, through either face.
      // Drawn in the order they always were, so that the world stays the same.
      const valueFunction = pick(random, ['single_value', 'sum'] as const);
      const timeLimit = pick(random, [3600, 7200, 86400]);
      const drawnTerms = terms(random);
      const query = `SELECT count(*) FROM Transaction WHERE appId = ${appIds.length === 0 ? 1 : pick(random, appIds)} AND error IS true`;
      const since = String(pick(random, [1, 3, 5]));
      return {
        type: 'static',
        name,
        enabled,
        runbook_url: runbook,
        value_function: valueFunction,
        expected_groups: null,
        ignore_overlap: null,
        violation_time_limit_seconds: timeLimit,
        terms: drawnTerms,
        nrql: { query, since_value: since },
        signal: { aggregation_window: '60', aggregation_method: null, aggregation_delay: null, aggregation_timer: null, slide_by: null, fill_option: 'none', fill_value: null, evaluation_offset: Number(since) },
        expiration: { expiration_duration: null, open_violation_on_expiration: false, close_violations_on_expiration: false },
      };
    }
    case 'alerts_external_service_conditions':
      return {
        type: 'apm',
        name,
        enabled,
        entities,
        external_service_url: pick(random, EXTERNAL_URLS),
        metric: pick(random, EXTERNAL_METRICS),
        runbook_url: runbook,
        terms: terms(random),
      };
    case 'alerts_synthetics_conditions':
      return { name, monitor_id: uuidOf(random), runbook_url: runbook, enabled };
    case 'alerts_location_failure_conditions':
      return {
        name,
        enabled,
        entities: [uuidOf(random)],
        terms: [{ priority: 'critical', threshold: between(random, 1, 5) }],
        violation_time_limit_seconds: pick(random, [3600, 7200, 86400]),
        runbook_url: runbook,
      };
  }
}

/** How many conditions of each family a generated policy gets (the busy policy aside). */
const FAMILY_COUNTS: Record<AlertFamily, readonly [number, number]> = {
  alerts_conditions: [0, 3],
  alerts_nrql_conditions: [0, 2],
  alerts_external_service_conditions: [0, 1],
  alerts_synthetics_conditions: [0, 1],
  alerts_location_failure_conditions: [0, 1],
};

/** The first policies of an account get awkward names, as app names do (data.ts). */
function policyName(random: Random, index: number): string {
  switch (index) {
    case 0:
      return 'Checkout "golden signals"';
    case 1:
      return "O'Brien's Batch\\Worker alerts";
    case 2:
      return 'Platform/Core & infra <critical>';
    default:
      return `${pick(random, TEAMS)} ${pick(random, SUBJECTS)} ${index + 1}`;
  }
}

export interface AlertAccount {
  accountId: number;
  primary: boolean;
  /** The account's APM application ids, which APM conditions target. */
  appIds: readonly number[];
}

export function generateAlerts(seed: number, accounts: readonly AlertAccount[], generatedAt: number): SandboxAlerts {
  const random = createRandom((seed ^ ALERTS_STREAM) >>> 0);
  const store: SandboxAlerts = { policies: [], conditions: [], lastPolicyId: 0, lastConditionId: FIRST_CONDITION_ID };
  for (const account of accounts) {
    const kind = account.primary ? 'primary' : 'other';
    for (let index = 0; index < ALERT_POLICY_COUNTS[kind]; index++) {
      const id = FIRST_POLICY_ID[kind] + index;
      const createdAt = generatedAt - between(random, 1, 400) * DAY_MS - between(random, 0, DAY_MS);
      const updatedAt = random() < 0.5 ? createdAt : createdAt + Math.floor(random() * (generatedAt - createdAt));
      const policy: AlertPolicy = {
        accountId: account.accountId,
        id,
        name: policyName(random, index),
        incidentPreference: pick(random, INCIDENT_PREFERENCES),
        createdAt,
        updatedAt,
      };
      store.policies.push(policy);
      store.lastPolicyId = Math.max(store.lastPolicyId, id);
      for (const family of ALERT_FAMILIES) {
        const busy = account.primary && index === 0 && family === 'alerts_nrql_conditions';
        const [min, max] = FAMILY_COUNTS[family];
        const count = busy ? BUSY_POLICY_NRQL_CONDITIONS : between(random, min, max);
        for (let n = 0; n < count; n++) {
          const name = `${policy.name.split(' ')[0] ?? 'Policy'} ${family.replace(/^alerts_|_conditions$/g, '').replace(/_/g, ' ')} ${n + 1}`;
          store.conditions.push({
            accountId: account.accountId,
            policyId: id,
            family,
            id: ++store.lastConditionId,
            fields: generatedFields(random, family, name, account.appIds),
          });
        }
      }
    }
  }
  return store;
}

// ---------------------------------------------------------------------------------------------
// Writes: the legacy face validates, these apply.

export function createPolicy(store: SandboxAlerts, accountId: number, name: string, incidentPreference: StoredIncidentPreference, now: number): AlertPolicy {
  const policy: AlertPolicy = { accountId, id: ++store.lastPolicyId, name, incidentPreference, createdAt: now, updatedAt: now };
  store.policies.push(policy);
  return policy;
}

export function updatePolicy(policy: AlertPolicy, changes: { name?: string; incidentPreference?: StoredIncidentPreference }, now: number): void {
  if (changes.name !== undefined) policy.name = changes.name;
  if (changes.incidentPreference !== undefined) policy.incidentPreference = changes.incidentPreference;
  policy.updatedAt = now;
}

/** Removes the policy and every condition it holds. */
export function deletePolicy(store: SandboxAlerts, policy: AlertPolicy): void {
  removeWhere(store.policies, (candidate) => candidate === policy);
  removeWhere(store.conditions, (condition) => condition.accountId === policy.accountId && condition.policyId === policy.id);
}

export function createCondition(store: SandboxAlerts, policy: AlertPolicy, family: AlertFamily, fields: ConditionFields): AlertCondition {
  const condition: AlertCondition = { accountId: policy.accountId, policyId: policy.id, family, id: ++store.lastConditionId, fields };
  store.conditions.push(condition);
  return condition;
}

export function deleteCondition(store: SandboxAlerts, condition: AlertCondition): void {
  removeWhere(store.conditions, (candidate) => candidate === condition);
}

function removeWhere<T>(items: T[], shouldRemove: (item: T) => boolean): void {
  for (let i = items.length - 1; i >= 0; i--) {
    if (shouldRemove(items[i] as T)) items.splice(i, 1);
  }
}
