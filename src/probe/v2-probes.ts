import { z } from 'zod';
import { UpstreamError } from '../upstream/errors.ts';
import type { ProbeResult, Verdict } from './report.ts';
import type { ProbeContext, SharedReads } from './probes.ts';
import { NO_LEGACY, bodyOf, isRecord, legacyPolicies, listIn, ok, type Json, type V2Probe, type V2Side } from './v2-common.ts';
import { conditionEntityNamesFamily, policyCustomPreferenceOnV2, policyFilterNameTrimmed } from './v2-alert-probes.ts';

/**
 * The probes of `npm run probe` that read the legacy REST API (and the translation, the gateway
 * in process) beside NerdGraph: what v2 itself answered is the fact. Read-only: GETs, and one
 * POST of a query form to a route v2 documents no write for (POST /v2/applications.json).
 * Without a legacy API each answers unknown, or what NerdGraph alone can tell. Evidence is
 * numbers, ids, field paths and names, never a key.
 */
export type { V2Probe, V2Side } from './v2-common.ts';

/** Every leaf of a v2 value as `path -> JSON`, array items by index (`terms[0].duration`). */
function leaves(value: Json, path: string, into: Map<string, string>): Map<string, string> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path, '[]');
    value.forEach((item, index) => leaves(item, `${path}[${index}]`, into));
  } else if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) into.set(path, '{}');
    for (const key of keys) leaves(value[key] as Json, path === '' ? key : `${path}.${key}`, into);
  } else {
    into.set(path, JSON.stringify(value));
  }
  return into;
}

/** A leaf path in the diff engine's notation (`nrql_conditions[].terms[].duration`). */
const patternOf = (path: string): string => path.replace(/\[\d+\]/g, '[]');
const coveredBy = (pattern: string, gaps: readonly string[]): boolean => gaps.some((gap) => pattern === gap || pattern.startsWith(`${gap}.`) || pattern.startsWith(`${gap}[`));

/** One v2 object against its translation, leaf by leaf: differing (and missing) leaves, documented gaps aside. */
export function compareFields(
  legacy: Record<string, Json>,
  translated: Record<string, Json>,
  prefix: string,
  gaps: readonly string[],
): { compared: number; differing: string[]; gaps: string[]; extra: string[]; examples: string[] } {
  const left = leaves(legacy, '', new Map());
  const right = leaves(translated, '', new Map());
  const differing = new Set<string>();
  const gapped = new Set<string>();
  const examples: string[] = [];
  let compared = 0;
  for (const [path, value] of left) {
    const pattern = `${prefix}${patternOf(path)}`;
    if (coveredBy(pattern, gaps)) {
      if (right.get(path) !== value) gapped.add(pattern);
      continue;
    }
    compared++;
    const other = right.get(path);
    if (other === value) continue;
    differing.add(other === undefined ? `${pattern} (missing)` : pattern);
    if (examples.length < MAX_EXAMPLES) examples.push(`${path}: legacy ${shortened(value)}, translated ${other === undefined ? '(missing)' : shortened(other)}`);
  }
  const extra = [...right.keys()].filter((path) => !left.has(path)).map((path) => `${prefix}${patternOf(path)}`);
  return { compared, differing: [...differing], gaps: [...gapped], extra: [...new Set(extra)], examples };
}

/** Differing values shown per condition, each cut to a few dozen characters. */
const MAX_EXAMPLES = 3;
const shortened = (json: string): string => (json.length > 40 ? `${json.slice(0, 37)}...` : json);

// ---------------------------------------------------------------------------------------------

const NRQL_LIST = '/v2/alerts_nrql_conditions.{format}';
/** The v2 types of NRQL condition, each sampled once when the account has one. */
const NRQL_TYPES = ['static', 'baseline', 'outlier'] as const;


export const nrqlConditionsFieldByField: V2Probe = {
  name: 'v2-nrql-conditions-field-by-field',
  checks: `one NRQL condition of each type (${NRQL_TYPES.join(', ')}, where the account has one), listed by GET /v2/alerts_nrql_conditions.json?policy_id= of a real policy, reads the same field by field from the legacy API and the translation (documented gaps aside)`,
  settles:
    'mappings/alerts-conditions/nrql-conditions.ts NRQL_CONDITION_ASSUMPTIONS: since_value read back from the signal, baseline fields, runbook_url "" for none, entity_guid on every answer; every reshaped field of the NRQL condition routes',
  async run(_ctx, _shared, v2) {
    if (v2 === null) return { verdict: 'unknown', evidence: NO_LEGACY };
    const policies = await legacyPolicies(v2);
    if (!ok(policies.status)) return { verdict: 'unknown', evidence: `GET /v2/alerts_policies.json answered ${policies.status} on the legacy API` };
    const chosen = new Map<string, { policy: string; condition: Record<string, Json> }>();
    let searched = 0;
    for (const policy of policies.ids) {
      searched++;
      const { body } = await bodyOf(v2.legacy(`/v2/alerts_nrql_conditions.json?policy_id=${encodeURIComponent(policy)}`));
      for (const condition of listIn(body, 'nrql_conditions')) {
        const type = typeof condition.type === 'string' ? condition.type : 'static';
        if (!chosen.has(type)) chosen.set(type, { policy, condition });
      }
      if (NRQL_TYPES.every((type) => chosen.has(type))) break;
    }
    if (chosen.size === 0) return { verdict: 'unknown', evidence: `no NRQL condition in the ${searched} policies searched` };
    const gaps = v2.gapsOf(NRQL_LIST);
    const alike: string[] = [];
    const differ: string[] = [];
    const translatedLists = new Map<string, Promise<{ status: number; body?: Record<string, Json> }>>();
    for (const [type, { policy, condition }] of chosen) {
      const path = `/v2/alerts_nrql_conditions.json?policy_id=${encodeURIComponent(policy)}`;
      let list = translatedLists.get(policy);
      if (!list) translatedLists.set(policy, (list = bodyOf(v2.translate(path))));
      const translated = await list;
      if (!ok(translated.status)) return { verdict: 'unknown', evidence: `GET ${path} answered legacy 200 / translated ${translated.status}: nothing compared` };
      // Only the first page is compared: the chosen condition may sit on a later one of the translation.
      const twin = listIn(translated.body, 'nrql_conditions').find((candidate) => JSON.stringify(candidate.id) === JSON.stringify(condition.id));
      const label = `${type} condition ${String(condition.id)} (policy ${policy})`;
      if (twin === undefined) {
        differ.push(`${label}: absent from the translation's first page`);
        continue;
      }
      const result = compareFields(condition, twin, 'nrql_conditions[].', gaps);
      const notes = [result.gaps.length > 0 ? `documented gaps differing: ${result.gaps.join(', ')}` : '', result.extra.length > 0 ? `only in the translation: ${result.extra.join(', ')}` : ''].filter(Boolean).join('; ');
      if (result.differing.length > 0) differ.push(`${label}: ${result.differing.join(', ')} differ of ${result.compared} fields [${result.examples.join('; ')}]${notes ? ` (${notes})` : ''}`);
      else alike.push(`${label}: ${result.compared} fields alike${notes ? ` (${notes})` : ''}`);
    }
    const absent = NRQL_TYPES.filter((type) => !chosen.has(type));
    const none = absent.length > 0 ? `; no ${absent.join(' or ')} condition in the ${searched} policies searched` : '';
    if (differ.length > 0) return { verdict: 'refuted', evidence: `${[...differ, ...alike].join('; ')}${none}` };
    return { verdict: 'confirmed', evidence: `${alike.join('; ')}${none}` };
  },
};

// ---------------------------------------------------------------------------------------------

const LoadersAnswer = z.object({ actor: z.object({ entities: z.array(z.unknown()).nullable() }) });
const BrowserSide = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  applicationId: z.number().int().nullable().optional(),
  servingApmApplicationId: z.number().int().nullable().optional(),
  browserSettings: z.object({ browserMonitoring: z.object({ loader: z.string().nullable().optional() }).nullable().optional() }).nullable().optional(),
});
/** NerdGraph's entities() takes at most 25 GUIDs a call: one call's worth is the sample. */
const BROWSER_SAMPLE = 25;
const V2_SAMPLE = 3;

/** What a v2 application answer says of its browser side: the flag and whether an end_user_summary is there. */
function browserSideShown(application: Record<string, Json> | undefined): string {
  if (application === undefined) return 'absent';
  const settings = isRecord(application.settings) ? application.settings : {};
  const flag = settings.enable_real_user_monitoring;
  return `enable_real_user_monitoring ${flag === undefined ? '(missing)' : JSON.stringify(flag)}, end_user_summary ${isRecord(application.end_user_summary) ? 'present' : 'absent'}`;
}

export const browserSideOnlyWhileLoaderOn: V2Probe = {
  name: 'browser-side-only-while-loader-on',
  checks:
    "no browser app serving an APM app has the loader NONE (browserSettings.browserMonitoring.loader); for an app whose loader is NONE, what legacy v2 and the translation (list and show) show of settings.enable_real_user_monitoring and end_user_summary",
  settles:
    "mappings/applications/list.ts and applications.show.ts: settings.enable_real_user_monitoring is the browser side's loader not being NONE (both read the loader); a NONE side serving an APM app must read false in the list and the show, as in legacy v2, or a list-then-PUT echo would turn browser monitoring on",
  async run(ctx, shared, v2) {
    const outlines = (await shared.entities('browserApplication')).filter((app) => app.servingApmApplicationId != null).slice(0, BROWSER_SAMPLE);
    if (outlines.length === 0) return { verdict: 'unknown', evidence: 'no browser application serving an APM app in the first page' };
    const data = await ctx.read('ProbeBrowserLoaders', { guids: outlines.map((outline) => outline.guid) });
    const sides = (LoadersAnswer.parse(data).actor.entities ?? []).flatMap((entity) => {
      const parsed = BrowserSide.safeParse(entity);
      return parsed.success && parsed.data.accountId === ctx.accountId && parsed.data.servingApmApplicationId != null ? [parsed.data] : [];
    });
    const loaders = new Map<string, number>();
    for (const side of sides) {
      const loader = side.browserSettings?.browserMonitoring?.loader ?? '(none said)';
      loaders.set(loader, (loaders.get(loader) ?? 0) + 1);
    }
    const tally = [...loaders].map(([loader, n]) => `${loader} ${n}`).join(', ');
    const off = sides.filter((side) => side.browserSettings?.browserMonitoring?.loader === 'NONE');
    if (off.length === 0) return { verdict: 'confirmed', evidence: `all ${sides.length} browser apps serving APM apps read have a loader other than NONE (${tally})` };
    const examples = off.slice(0, V2_SAMPLE).map((side) => side.servingApmApplicationId as number);
    let shown = '';
    if (v2 !== null) {
      const ids = examples.join(',');
      const legacyList = await bodyOf(v2.legacy(`/v2/applications.json?filter[ids]=${ids}`));
      const translatedList = await bodyOf(v2.translate(`/v2/applications.json?filter[ids]=${ids}`));
      const parts: string[] = [];
      for (const id of examples) {
        const inList = (list: { body?: Record<string, Json> }) => listIn(list.body, 'applications').find((app) => app.id === id);
        const show = async (answer: Promise<Response>) => {
          const { body } = await bodyOf(answer);
          return isRecord(body?.application) ? body.application : undefined;
        };
        const legacyShow = await show(v2.legacy(`/v2/applications/${id}.json`));
        const translatedShow = await show(v2.translate(`/v2/applications/${id}.json`));
        parts.push(
          `app ${id}: legacy list ${browserSideShown(inList(legacyList))}, show ${browserSideShown(legacyShow)}; translated list ${browserSideShown(inList(translatedList))}, show ${browserSideShown(translatedShow)}`,
        );
      }
      shown = `; ${parts.join('; ')}`;
    } else {
      shown = `; ${NO_LEGACY} to see what v2 showed`;
    }
    return { verdict: 'refuted', evidence: `${off.length} of ${sides.length} browser apps serving APM apps have the loader NONE (APM apps ${examples.join(', ')}; ${tally})${shown}` };
  },
};

// ---------------------------------------------------------------------------------------------

const NrqlConditionAnswer = z.object({
  actor: z.object({ account: z.object({ alerts: z.object({ nrqlCondition: z.object({ id: z.union([z.string(), z.number()]) }).passthrough().nullable() }).nullable() }).nullable() }),
});
/** Error classes that say nothing of the condition (the call did not get through). */
const NOT_AN_ANSWER: ReadonlySet<string> = new Set(['bad_key', 'forbidden', 'rate_limited', 'timeout', 'cancelled', 'unavailable']);

export const nrqlConditionOfOtherFamilyIsAbsent: V2Probe = {
  name: 'nrql-condition-of-other-family-is-absent',
  checks: "what nrqlCondition(id) answers for the id of another family's condition (an APM condition listed by GET /v2/alerts_conditions.json on the legacy API): null or a NOT_FOUND error",
  settles: "mappings/alerts-conditions/condition-delete.ts: a family's DELETE takes null or NOT_FOUND from nrqlCondition as 'not an NRQL condition' and goes on",
  async run(ctx, _shared, v2) {
    if (v2 === null) return { verdict: 'unknown', evidence: `${NO_LEGACY}: NerdGraph lists no APM condition to take an id from` };
    const policies = await legacyPolicies(v2);
    if (!ok(policies.status)) return { verdict: 'unknown', evidence: `GET /v2/alerts_policies.json answered ${policies.status} on the legacy API` };
    let found: { id: string; policy: string } | undefined;
    for (const policy of policies.ids) {
      const { body } = await bodyOf(v2.legacy(`/v2/alerts_conditions.json?policy_id=${encodeURIComponent(policy)}`));
      const condition = listIn(body, 'conditions').find((item) => typeof item.id === 'number' || typeof item.id === 'string');
      if (condition) {
        found = { id: String(condition.id), policy };
        break;
      }
    }
    if (found === undefined) return { verdict: 'unknown', evidence: `no APM condition in the ${policies.ids.length} policies searched` };
    const label = `APM condition ${found.id} (policy ${found.policy})`;
    try {
      const answer = NrqlConditionAnswer.parse(await ctx.read('ProbeNrqlCondition', { accountId: ctx.accountId, id: found.id }));
      const condition = answer.actor.account?.alerts?.nrqlCondition ?? null;
      if (condition === null) return { verdict: 'confirmed', evidence: `nrqlCondition(${label}) answered null` };
      return { verdict: 'refuted', evidence: `nrqlCondition(${label}) answered a condition (id ${String(condition.id)}): a family's DELETE would take it for an NRQL one` };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      if (error.errorClass === 'not_found') return { verdict: 'confirmed', evidence: `nrqlCondition(${label}) answered a NOT_FOUND error` };
      if (NOT_AN_ANSWER.has(error.errorClass)) return { verdict: 'unknown', evidence: `nrqlCondition(${label}) did not get an answer: ${error.errorClass}` };
      return { verdict: 'refuted', evidence: `nrqlCondition(${label}) answered an error of class ${error.errorClass}, neither null nor NOT_FOUND: a family's DELETE would fail rather than go on` };
    }
  },
};

// ---------------------------------------------------------------------------------------------

const ids = (body: Record<string, Json> | undefined): string[] => listIn(body, 'applications').map((app) => JSON.stringify(app.id));

export const postOnListRouteIsRead: V2Probe = {
  name: 'v2-post-on-list-route-is-read',
  checks: 'the legacy API answers POST /v2/applications.json with a form body filter[name]=<name> as GET /v2/applications.json?filter[name]=<name> (the same filtered list)',
  settles: 'the gateway serves a POST with a form or query body to a v2 list or show route that has no POST of its own as the read (the Ansible newrelic_deployment module looks applications up so)',
  async run(_ctx, _shared, v2) {
    if (v2 === null) return { verdict: 'unknown', evidence: NO_LEGACY };
    const all = await bodyOf(v2.legacy('/v2/applications.json'));
    if (!ok(all.status)) return { verdict: 'unknown', evidence: `GET /v2/applications.json answered ${all.status} on the legacy API` };
    const everyId = ids(all.body);
    // A name that narrows the list, so an ignored form body shows.
    const names = listIn(all.body, 'applications').flatMap((app) => (typeof app.name === 'string' && app.name !== '' ? [app.name] : []));
    const name = names.find((candidate) => listIn(all.body, 'applications').filter((app) => typeof app.name === 'string' && app.name.toLowerCase().includes(candidate.toLowerCase())).length < everyId.length);
    if (name === undefined) return { verdict: 'unknown', evidence: `no application name narrows the ${everyId.length} applications of the first page` };
    const form = `filter[name]=${encodeURIComponent(name)}`;
    const byGet = await bodyOf(v2.legacy(`/v2/applications.json?${form}`));
    if (!ok(byGet.status)) return { verdict: 'unknown', evidence: `GET /v2/applications.json?filter[name]=… answered ${byGet.status}` };
    const byPost = await bodyOf(v2.legacy('/v2/applications.json', { method: 'POST', form }));
    const got = `GET ${ids(byGet.body).length} of ${everyId.length} applications`;
    if (!ok(byPost.status)) return { verdict: 'refuted', evidence: `POST /v2/applications.json (form filter[name]) answered ${byPost.status}; ${got}` };
    const posted = ids(byPost.body);
    if (JSON.stringify(posted) === JSON.stringify(ids(byGet.body))) return { verdict: 'confirmed', evidence: `POST /v2/applications.json (form filter[name]) answered ${byPost.status} with the same ${posted.length} applications as the GET (of ${everyId.length})` };
    return { verdict: 'refuted', evidence: `POST /v2/applications.json (form filter[name]) answered ${byPost.status} with ${posted.length} applications, not the GET's: ${got}` };
  },
};


export const V2_PROBES: readonly V2Probe[] = [
  nrqlConditionsFieldByField,
  browserSideOnlyWhileLoaderOn,
  nrqlConditionOfOtherFamilyIsAbsent,
  postOnListRouteIsRead,
  policyCustomPreferenceOnV2,
  policyFilterNameTrimmed,
  conditionEntityNamesFamily,
];

/** Runs the probes that read v2; a probe that fails answers unknown with the (key-free) reason. */
export async function runV2Probes(ctx: ProbeContext, shared: SharedReads, v2: V2Side | null, redact: (text: string) => string): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  for (const probe of V2_PROBES) {
    let outcome: { verdict: Verdict; evidence: string };
    try {
      outcome = await probe.run(ctx, shared, v2);
    } catch (error) {
      outcome = { verdict: 'unknown', evidence: `the probe could not read what it needs: ${(error as Error).message}` };
    }
    results.push({ name: probe.name, checks: probe.checks, settles: probe.settles, verdict: outcome.verdict, evidence: redact(outcome.evidence) });
  }
  return results;
}
