import { z } from 'zod';
import { NO_LEGACY, bodyOf, legacyPolicies, listIn, ok, type Json, type V2Probe, type V2Side } from './v2-common.ts';

/**
 * The probes of `npm run probe` that read v2's alert policies and conditions beside NerdGraph,
 * read-only (GETs of the legacy API, NerdGraph queries): what a CUSTOM policy shows, whether
 * filter[name] is trimmed, whether a condition's entity names its family.
 */
const PoliciesPage = z.object({
  actor: z.object({
    account: z
      .object({
        alerts: z
          .object({
            policiesSearch: z
              .object({
                nextCursor: z.string().nullable().optional(),
                policies: z.array(z.object({ id: z.union([z.string(), z.number()]), name: z.string(), incidentPreference: z.string().nullable().optional() })).nullable(),
              })
              .nullable(),
          })
          .nullable(),
      })
      .nullable(),
  }),
});
type PoliciesAccount = z.infer<typeof PoliciesPage>['actor']['account'];
type PoliciesSearch = NonNullable<NonNullable<PoliciesAccount>['alerts']>['policiesSearch'] | undefined;
/** NerdGraph pages of policies read looking for CUSTOM ones, and how many of those are compared. */
const POLICY_PAGES = 10;
const CUSTOM_SAMPLE = 5;

/** The legacy list's policy of this id, found by its exact name (v2's swagger: filter[name] "must be exact match"). */
async function legacyPolicyNamed(v2: V2Side, name: string, id: string): Promise<{ status: number; policy?: Record<string, Json> }> {
  const { status, body } = await bodyOf(v2.legacy(`/v2/alerts_policies.json?filter[name]=${encodeURIComponent(name)}`));
  const policy = listIn(body, 'policies').find((item) => String(item.id) === id);
  return policy === undefined ? { status } : { status, policy };
}

export const policyCustomPreferenceOnV2: V2Probe = {
  name: 'policy-custom-preference-on-v2',
  checks:
    'a policy NerdGraph holds with incidentPreference CUSTOM (policiesSearch, up to 10 pages) reads incident_preference "CUSTOM" on the legacy API too (GET /v2/alerts_policies.json?filter[name]=<its name>, up to 5 such policies)',
  settles: 'mappings/alerts-policies/alert-policies.ts: a CUSTOM policy reads incident_preference "CUSTOM" on v2, so the translation shows what v2 showed',
  async run(ctx, _shared, v2) {
    const custom: Array<{ id: string; name: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    let read = 0;
    do {
      const page: PoliciesAccount = PoliciesPage.parse(await ctx.read('ProbeAlertPolicies', { accountId: ctx.accountId, cursor })).actor.account;
      const search: PoliciesSearch = page?.alerts?.policiesSearch;
      pages++;
      for (const policy of search?.policies ?? []) {
        read++;
        if (policy.incidentPreference === 'CUSTOM') custom.push({ id: String(policy.id), name: policy.name });
      }
      cursor = search?.nextCursor ?? null;
    } while (cursor !== null && pages < POLICY_PAGES);
    if (custom.length === 0) return { verdict: 'unknown', evidence: `no CUSTOM policy among the ${read} NerdGraph policies read (${pages} pages)` };
    if (v2 === null) return { verdict: 'unknown', evidence: `${custom.length} CUSTOM policies on NerdGraph; ${NO_LEGACY}` };
    const alike: string[] = [];
    const differ: string[] = [];
    for (const policy of custom.slice(0, CUSTOM_SAMPLE)) {
      const found = await legacyPolicyNamed(v2, policy.name, policy.id);
      if (!ok(found.status)) return { verdict: 'unknown', evidence: `GET /v2/alerts_policies.json?filter[name]=… answered ${found.status} on the legacy API` };
      if (found.policy === undefined) differ.push(`policy ${policy.id}: absent from the legacy list filtered by its name`);
      else if (found.policy.incident_preference === 'CUSTOM') alike.push(`policy ${policy.id}: "CUSTOM"`);
      else differ.push(`policy ${policy.id}: legacy ${JSON.stringify(found.policy.incident_preference ?? null)}`);
    }
    const of = `of ${custom.length} CUSTOM policies on NerdGraph (${read} read)`;
    if (differ.length > 0) return { verdict: 'refuted', evidence: `incident_preference on the legacy API ${of}: ${[...differ, ...alike].join('; ')}` };
    return { verdict: 'confirmed', evidence: `incident_preference on the legacy API ${of}: ${alike.join('; ')}` };
  },
};

// ---------------------------------------------------------------------------------------------

export const policyFilterNameTrimmed: V2Probe = {
  name: 'policy-filter-name-trimmed',
  checks: 'the legacy API ignores spaces around filter[name] of the policies list: GET /v2/alerts_policies.json?filter[name]=%20<an existing name> finds that policy, as filter[name]=<the name> does',
  settles: 'mappings/alerts-policies/list.ts: spaces around filter[name] are ignored (the value is trimmed before the exact match)',
  async run(_ctx, _shared, v2) {
    if (v2 === null) return { verdict: 'unknown', evidence: NO_LEGACY };
    const all = await bodyOf(v2.legacy('/v2/alerts_policies.json'));
    if (!ok(all.status)) return { verdict: 'unknown', evidence: `GET /v2/alerts_policies.json answered ${all.status} on the legacy API` };
    // A name with no spaces of its own at its ends, so only the sent space is in question.
    const policy = listIn(all.body, 'policies').find((item) => typeof item.name === 'string' && item.name !== '' && item.name === item.name.trim() && item.id !== undefined);
    if (policy === undefined) return { verdict: 'unknown', evidence: 'no policy with a name on the first page of the legacy list' };
    const name = policy.name as string;
    const id = String(policy.id);
    const exact = await legacyPolicyNamed(v2, name, id);
    if (!ok(exact.status) || exact.policy === undefined) return { verdict: 'unknown', evidence: `policy ${id}: filter[name]=<its name> answered ${exact.status} ${exact.policy === undefined ? 'without it' : ''}: the exact match itself does not find it` };
    const spaced = await legacyPolicyNamed(v2, ` ${name}`, id);
    if (!ok(spaced.status)) return { verdict: 'refuted', evidence: `policy ${id}: filter[name]=%20<its name> answered ${spaced.status}, filter[name]=<its name> found it` };
    if (spaced.policy === undefined) return { verdict: 'refuted', evidence: `policy ${id}: filter[name]=%20<its name> answered ${spaced.status} without it, filter[name]=<its name> found it` };
    return { verdict: 'confirmed', evidence: `policy ${id}: filter[name]=%20<its name> found it, as filter[name]=<its name> does` };
  },
};

// ---------------------------------------------------------------------------------------------

const ConditionEntityAnswer = z.object({
  actor: z.object({
    entity: z
      .object({
        guid: z.string().nullable().optional(),
        accountId: z.number().int().nullable().optional(),
        domain: z.string().nullable().optional(),
        type: z.string().nullable().optional(),
        entityType: z.string().nullable().optional(),
        tags: z.array(z.object({ key: z.string().nullable().optional(), values: z.array(z.string().nullable()).nullable().optional() }).nullable()).nullable().optional(),
      })
      .nullable(),
  }),
});
/** The v2 condition families the legacy API lists per policy, each with words that would name it. */
const CONDITION_FAMILIES: ReadonlyArray<{ family: string; wrapper: string; words: readonly string[] }> = [
  { family: 'alerts_conditions', wrapper: 'conditions', words: ['alertsconditions', 'apm', 'browsermetric', 'mobilemetric', 'serversmetric'] },
  { family: 'alerts_nrql_conditions', wrapper: 'nrql_conditions', words: ['nrql'] },
  { family: 'alerts_external_service_conditions', wrapper: 'external_service_conditions', words: ['externalservice'] },
  { family: 'alerts_synthetics_conditions', wrapper: 'synthetics_conditions', words: ['synthetics'] },
  { family: 'alerts_location_failure_conditions', wrapper: 'location_failure_conditions', words: ['locationfailure', 'multilocation'] },
];
/** Policies searched for a condition of each family (one list call per family and policy at most). */
const FAMILY_POLICIES_SEARCHED = 10;
const squeezed = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]/g, '');
/** base64 of `accountId|AIOPS|CONDITION|id`, no padding (terraform-provider-newrelic's getConditionEntityGUID). */
const conditionGuid = (accountId: number, id: string): string => Buffer.from(`${accountId}|AIOPS|CONDITION|${id}`).toString('base64').replace(/=+$/, '');

export const conditionEntityNamesFamily: V2Probe = {
  name: 'condition-entity-names-family',
  checks:
    "for one condition of each family the legacy API lists (GET /v2/<family>.json?policy_id=, first 10 policies), actor.entity(guid: accountId|AIOPS|CONDITION|id) names no family in its type or tags (the account tag aside); refuted when one names its own family",
  settles: "mappings/alerts-conditions/condition-delete.ts: no NerdGraph read names a non-NRQL condition's family, so a family's DELETE cannot tell the four apart",
  async run(ctx, _shared, v2) {
    if (v2 === null) return { verdict: 'unknown', evidence: `${NO_LEGACY}: NerdGraph lists no condition of the other families to take an id from` };
    const policies = await legacyPolicies(v2);
    if (!ok(policies.status)) return { verdict: 'unknown', evidence: `GET /v2/alerts_policies.json answered ${policies.status} on the legacy API` };
    const found: Array<{ family: (typeof CONDITION_FAMILIES)[number]; id: string }> = [];
    for (const family of CONDITION_FAMILIES) {
      for (const policy of policies.ids.slice(0, FAMILY_POLICIES_SEARCHED)) {
        const { body } = await bodyOf(v2.legacy(`/v2/${family.family}.json?policy_id=${encodeURIComponent(policy)}`));
        const condition = listIn(body, family.wrapper).find((item) => typeof item.id === 'number' || typeof item.id === 'string');
        if (condition) {
          found.push({ family, id: String(condition.id) });
          break;
        }
      }
    }
    if (found.length === 0) return { verdict: 'unknown', evidence: `no condition of any family in the ${Math.min(policies.ids.length, FAMILY_POLICIES_SEARCHED)} policies searched` };
    const naming: string[] = [];
    const silent: string[] = [];
    for (const { family, id } of found) {
      const entity = ConditionEntityAnswer.parse(await ctx.read('ProbeConditionEntity', { guid: conditionGuid(ctx.accountId, id) })).actor.entity;
      const label = `${family.family} ${id}`;
      if (entity === null) {
        silent.push(`${label}: no entity`);
        continue;
      }
      // Only the caller's account speaks for its conditions.
      if (entity.accountId !== ctx.accountId) {
        silent.push(`${label}: an entity of account ${entity.accountId ?? '-'} (not compared)`);
        continue;
      }
      const said: Array<{ where: string; text: string }> = [{ where: 'type', text: entity.type ?? '' }];
      for (const tag of entity.tags ?? []) {
        if (!tag?.key || tag.key === 'account') continue;
        said.push({ where: `tag ${tag.key}`, text: tag.key });
        for (const value of tag.values ?? []) if (value) said.push({ where: `tag ${tag.key}`, text: value });
      }
      const names = said.filter(({ text }) => family.words.some((word) => squeezed(text).includes(word)));
      const shape = `${entity.domain ?? '-'}/${entity.type ?? '-'}`;
      if (names.length > 0) naming.push(`${label} (${shape}): its ${[...new Set(names.map(({ where }) => where))].join(', ')} names the family`);
      else silent.push(`${label} (${shape}): ${entity.tags?.length ?? 0} tags, none naming the family`);
    }
    const missing = CONDITION_FAMILIES.filter((family) => !found.some((item) => item.family === family)).map((family) => family.family);
    const none = missing.length > 0 ? `; no ${missing.join(' or ')} condition found` : '';
    if (naming.length > 0) return { verdict: 'refuted', evidence: `${[...naming, ...silent].join('; ')}${none}` };
    return { verdict: 'confirmed', evidence: `${silent.join('; ')}${none}` };
  },
};
