import { z } from 'zod';
import { type BodyObject, type FieldNote, type KnownGap, type OperationContext, type V2Body, V2Error, notFound, objectAt, parseAnswer, v2IdOf, v2KeysOf } from '../../src/mapping-api.ts';
import { missingParameter } from '../../facts/v2-titles.ts';
import { INCIDENT_PREFERENCES as V2_INCIDENT_PREFERENCES } from '../../facts/v2-values.ts';
import { ALERT_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * What the alerts_policies routes share (list, show, create, update, delete): the NerdGraph
 * policy and its v2 shape, the body rules, the titles, the one read of a policy by id.
 *
 * v2's policy (rest-v2-shapes.md §9; newrelic-client-go pkg/alerts/policies.go):
 * `{id, incident_preference, name, created_at, updated_at}`, times in epoch ms. NerdGraph's
 * AlertsPolicy (the real schema) has id, name, incidentPreference and accountId only: no time
 * at all (terraform-provider-newrelic dropped created_at/updated_at when it moved to NerdGraph,
 * PR #504: "Unavailable attribute in NerdGraph"), so the two times are null, a known gap.
 * Policy ids are the same integers in both APIs (NerdGraph spells them as ID strings).
 */
export const POLICY_SHOW = 'AlertPolicyShow';
export const POLICIES_SEARCH = 'AlertPoliciesSearch';
export const POLICY_CREATE = 'AlertPolicyCreate';
export const POLICY_UPDATE = 'AlertPolicyUpdate';
export const POLICY_DELETE = 'AlertPolicyDelete';

/** v2's page of alert lists: 50 (UNCONFIRMED, as the legacy witness pages them; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing). */
export const POLICIES_PAGE_SIZE = 50;
/** At most this many NerdGraph pages of policies are read for one list request. */
export const MAX_POLICY_PAGES = 50;

/** v2's values, the only ones a v2 write may send (facts/v2-values.ts: rest-api-calls-alerts.mdx, #policies-create: "must be one of"). */
export const INCIDENT_PREFERENCES = V2_INCIDENT_PREFERENCES;
type IncidentPreference = (typeof INCIDENT_PREFERENCES)[number];

/**
 * What a read takes from AlertsPolicy.incidentPreference: any enum value, shown as it is. NerdGraph
 * gained CUSTOM after v2 (../shared/reference/nerdgraph.md §1, quirk 3), and v2 has no name for
 * it: reading it as one of v2's three would be a silent change that a read-then-write would
 * make real, and refusing it would fail the whole list for one policy.
 */
const NerdGraphPreference = z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/);

/**
 * Titles as v2's Rails answers them; their exact texts are UNCONFIRMED (no probe: titles show only
 * on refused requests); both faces word them alike (facts/rule-titles.ts).
 */
export const PolicyTitles = {
  notFound: ALERT_RULE_TITLES.policyNotFound,
  missing: missingParameter('policy'),
  invalid: (detail: string): string => ALERT_RULE_TITLES.invalid('policy', detail),
  tooMany: `The account has more alert policies than the gateway reads in one request (${MAX_POLICY_PAGES} NerdGraph pages of policiesSearch); nothing partial is shown: use filter[name] to find a policy by its exact name`,
} as const;

export const NerdGraphPolicy = z.object({
  id: z.string().regex(/^[1-9]\d{0,14}$/),
  name: z.string(),
  incidentPreference: NerdGraphPreference,
  accountId: z.number().int(),
});
export type NerdGraphPolicy = z.infer<typeof NerdGraphPolicy>;

/** The v2 policy, keys in v2's order. */
export const v2Policy = (policy: NerdGraphPolicy): V2Body => ({
  id: Number(policy.id),
  incident_preference: policy.incidentPreference,
  name: policy.name,
  created_at: null,
  updated_at: null,
});

export function policyFields(prefix: string): FieldNote[] {
  return [
    { field: `${prefix}.id`, fidelity: 'exact', source: 'AlertsPolicy.id (the same integer, as a string in NerdGraph)' },
    { field: `${prefix}.incident_preference`, fidelity: 'exact', source: "AlertsPolicy.incidentPreference (v2's three values alike; CUSTOM, which v2 never had, shown as it is)" },
    { field: `${prefix}.name`, fidelity: 'exact', source: 'AlertsPolicy.name' },
    { field: `${prefix}.created_at`, fidelity: 'approximate', source: 'none: always null (AlertsPolicy has no time)' },
    { field: `${prefix}.updated_at`, fidelity: 'approximate', source: 'none: always null (AlertsPolicy has no time)' },
  ];
}

export function policyGaps(prefix: string): KnownGap[] {
  return [
    { path: `${prefix}.created_at`, description: "created_at is null: NerdGraph's AlertsPolicy has no creation time (v2 gave epoch ms)." },
    { path: `${prefix}.updated_at`, description: "updated_at is null: NerdGraph's AlertsPolicy has no update time (v2 gave epoch ms)." },
    {
      path: `${prefix}.incident_preference`,
      description:
        "A policy NerdGraph holds as CUSTOM (a value v2 never had) reads incident_preference \"CUSTOM\"; a v2 write of CUSTOM is refused (422 naming incident_preference), so such a policy read and written back whole is refused: send only the name. What live v2 shows for it is UNCONFIRMED (probe: policy-custom-preference-on-v2, which lists the policies on the legacy API and NerdGraph and compares incident_preference of the CUSTOM ones; read-only, unknown on an account without one).",
    },
  ];
}

export const POLICY_ASSUMPTIONS = [
  'Policy ids are the same integers in REST v2 and NerdGraph (AlertsPolicy.id is an ID holding that integer).',
  "AlertsIncidentPreference has CUSTOM besides v2's three (newrelic-sb-sdk's 2026-04-19 types; both schema files predate it); any value NerdGraph answers is shown as it is.",
  'Titles of 404, 422 and 400 answers are those of the legacy witness (v2 texts UNCONFIRMED; no probe: titles show only on refused requests).',
];

const ShowAnswer = z.object({
  actor: z.object({ account: z.object({ alerts: z.object({ policy: NerdGraphPolicy.nullable() }).nullable() }).nullable() }),
});

/** The policy a path id names in the caller's account: 404 for a malformed, unknown or foreign id. */
export async function readPolicy(ctx: OperationContext, rawId: string | undefined): Promise<NerdGraphPolicy> {
  const id = v2IdOf(rawId ?? '');
  if (id === undefined) throw notFound(PolicyTitles.notFound);
  const answer = parseAnswer(ShowAnswer, await ctx.read(POLICY_SHOW, { accountId: ctx.accountId, id: String(id) }), POLICY_SHOW);
  const policy = answer.actor.account?.alerts?.policy;
  // Exactly the policy asked for, of exactly the caller's account: anything else is v2's 404.
  if (!policy || policy.id !== String(id) || policy.accountId !== ctx.accountId) throw notFound(PolicyTitles.notFound);
  return policy;
}

const MAX_NAME = 255;

/** The body's `policy` object; without it, Rails' missing-parameter 400. */
function wrapperOf(body: BodyObject): BodyObject {
  const wrapper = objectAt(body, 'policy');
  if (!wrapper) throw new V2Error(400, PolicyTitles.missing, { kind: 'invalid_policy' });
  return wrapper;
}

const refused = (detail: string): V2Error => new V2Error(422, PolicyTitles.invalid(detail), { kind: 'invalid_policy' });

/** A name as v2 stored it: text, trimmed, 1 to 255 characters. */
function nameOf(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '') throw refused("name can't be blank");
  if (name.length > MAX_NAME) throw refused(`name is too long (maximum is ${MAX_NAME} characters)`);
  return name;
}

function preferenceOf(value: unknown): IncidentPreference {
  const found = INCIDENT_PREFERENCES.find((preference) => preference === value);
  if (found === undefined) throw refused(`incident_preference must be one of ${INCIDENT_PREFERENCES.join(', ')}`);
  return found;
}

/** POST's policy: a name, and incident_preference (default PER_POLICY); name is checked first, as v2 does. */
export function policyToCreate(body: BodyObject): { name: string; incidentPreference: IncidentPreference } {
  const wrapper = wrapperOf(body);
  const name = nameOf(wrapper.name);
  const incidentPreference = wrapper.incident_preference === undefined ? 'PER_POLICY' : preferenceOf(wrapper.incident_preference);
  return { name, incidentPreference };
}

/** PUT's changes: only the attributes given (a given null is refused, as v2 did). */
export function policyChanges(body: BodyObject): { name?: string; incidentPreference?: IncidentPreference } {
  const wrapper = wrapperOf(body);
  return {
    ...(Object.hasOwn(wrapper, 'name') && { name: nameOf(wrapper.name) }),
    ...(Object.hasOwn(wrapper, 'incident_preference') && { incidentPreference: preferenceOf(wrapper.incident_preference) }),
  };
}

const Created = z.object({ alertsPolicyCreate: NerdGraphPolicy.nullable() });
const Updated = z.object({ alertsPolicyUpdate: NerdGraphPolicy.nullable() });

/** A create's or update's policy (null: NerdGraph confirmed nothing, so the outcome is unknown). */
export function confirmedPolicy(payload: unknown, operation: typeof POLICY_CREATE | typeof POLICY_UPDATE): NerdGraphPolicy | null {
  return operation === POLICY_CREATE ? parseAnswer(Created, payload, operation).alertsPolicyCreate : parseAnswer(Updated, payload, operation).alertsPolicyUpdate;
}

/** A policy's keys under `wrapper`: SHAPES §9 P; SW PolicyResponseType. */
export const policyKeys = v2KeysOf('SHAPES §9 (P); SW PolicyResponseType', { id: 'int', incident_preference: 'string', name: 'string', created_at: 'epoch-ms', updated_at: 'epoch-ms' });
