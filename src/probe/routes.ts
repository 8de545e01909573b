import { compareAnswers } from '../compare/diff.ts';
import type { AnswerSnapshot } from '../compare/types.ts';
import { isReadMapping, type Mapping, type ReadMapping, type ReadSampleValue } from '../routes/mapping.ts';
import { fillQuery, samplePath, type MissingValue } from '../routes/route-sample.ts';
import type { RouteComparison } from './report.ts';

/**
 * The legacy half of `npm run probe`: while the legacy REST API answers, one sampled GET of
 * every read route goes to it (twice, so the compare engine can tell noise) and to the
 * translation (the gateway app, in process), and the compare engine (src/compare/diff.ts)
 * judges the pair as the migration modes do: documented gaps, noise and tolerances are not
 * disagreements. Each route's request is its mapping's sample (ReadSample, mapping-base.ts),
 * filled with ids taken from the legacy API's own lists, as a client would find them.
 * Only GETs are sent: nothing is written on either side.
 */
export interface RouteProbeOptions {
  mappings: readonly Mapping[];
  legacyUrl: string;
  apiKey: string;
  accountId: number;
  now: number;
  /** The translation: a GET of `path` (with query) through the gateway. */
  translate(path: string, headers: Record<string, string>): Promise<Response>;
  /** Bound on each legacy call. */
  timeoutMs?: number;
  /** Only the routes whose template this accepts (default: every read route). */
  only?: (template: string) => boolean;
}

export interface RouteProbeOutcome {
  /** Why nothing was compared (the legacy API did not answer), else null. */
  unavailable: string | null;
  routes: RouteComparison[];
}

const MAX_DIFFERING = 50;
const ok = (status: number): boolean => status >= 200 && status < 300;

/** The GET routes the gateway translates. */
export function readRoutes(mappings: readonly Mapping[]): ReadMapping[] {
  return mappings.filter(isReadMapping).filter((mapping) => mapping.method === 'GET');
}

async function snapshot(answer: Promise<Response>): Promise<AnswerSnapshot> {
  const started = performance.now();
  const response = await answer;
  const body = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body, link: response.headers.get('link'), ms: performance.now() - started };
}

/** ISO seconds of a whole minute, as v2's from/to take it. */
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

export async function compareReadRoutes(options: RouteProbeOptions): Promise<RouteProbeOutcome> {
  const headers = { 'X-Api-Key': options.apiKey, 'X-Account-Id': String(options.accountId), Accept: 'application/json' };
  const base = options.legacyUrl.replace(/\/+$/, '');
  const legacy = (path: string): Promise<Response> => fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000), redirect: 'manual' });
  const firstId = async (path: string, wrapper: string, pick: (item: Record<string, unknown>) => boolean = () => true): Promise<string | undefined> => {
    try {
      const answer = await legacy(path);
      if (!answer.ok) return undefined;
      const items = ((await answer.json()) as Record<string, unknown>)[wrapper];
      if (!Array.isArray(items)) return undefined;
      const objects = items.filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object');
      const chosen = objects.find(pick) ?? objects[0];
      return chosen?.id === undefined ? undefined : String(chosen.id);
    } catch {
      return undefined;
    }
  };

  // Does the legacy API answer at all? Its applications list says so.
  let first: Response;
  try {
    first = await legacy('/v2/applications.json');
  } catch (error) {
    return { unavailable: `GET /v2/applications.json failed: ${(error as Error).name}`, routes: [] };
  }
  await first.arrayBuffer().catch(() => undefined);
  if (!first.ok) return { unavailable: `GET /v2/applications.json answered ${first.status}`, routes: [] };

  const app = await firstId('/v2/applications.json', 'applications', (item) => item.reporting === true);
  // A closed window in the past: both sides read the same finished minutes.
  const to = Math.floor(options.now / 60_000) * 60_000 - 5 * 60_000;
  const nrql = await policyWithNrqlConditions(legacy);
  const values: Record<ReadSampleValue, string | undefined> = {
    application_id: app,
    host_id: app === undefined ? undefined : await firstId(`/v2/applications/${app}/hosts.json`, 'application_hosts'),
    instance_id: app === undefined ? undefined : await firstId(`/v2/applications/${app}/instances.json`, 'application_instances'),
    key_transaction_id: await firstId('/v2/key_transactions.json', 'key_transactions', (item) => item.reporting === true),
    mobile_application_id: await firstId('/v2/mobile_applications.json', 'applications', (item) => item.reporting === true),
    user_id: await firstId('/v2/users.json', 'users'),
    policy_id: await firstId('/v2/alerts_policies.json', 'policies'),
    nrql_policy_id: nrql?.policy,
    nrql_condition_id: nrql?.condition,
    from: iso(to - 30 * 60_000),
    to: iso(to),
  };
  // The gateway's host ids are its own (derived from app and host name; v2's were New Relic's
  // row ids): the translated side is asked for the same host by its own id.
  const gatewayHost = app === undefined || values.host_id === undefined ? undefined : await sameHostOnGateway(options, headers, app, legacy, values.host_id);
  const translatedValues = { ...values, host_id: gatewayHost ?? values.host_id };

  const routes: RouteComparison[] = [];
  for (const mapping of readRoutes(options.mappings).filter((candidate) => options.only?.(candidate.route) ?? true)) {
    const sample = comparedPath(mapping, values);
    if (typeof sample !== 'string') {
      routes.push({ route: mapping.route, request: '', result: 'skipped', outcome: skippedBecause(sample), status: { legacy: null, translated: null }, differing: [] });
      continue;
    }
    const translated = comparedPath(mapping, translatedValues);
    routes.push(await compareOne(mapping, sample, legacy, () => options.translate(typeof translated === 'string' ? translated : sample, headers)));
  }
  return { unavailable: null, routes };
}

/** How many policies of the legacy list's first page are asked for their NRQL conditions. */
const POLICIES_SEARCHED = 20;

/** An item's id as text, when it has one (a number or a string). */
function idOf(item: unknown): string | undefined {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'number' || typeof id === 'string' ? String(id) : undefined;
}

/**
 * A policy (of the legacy list's first page) that has NRQL conditions, and the first of them with
 * an id: the NRQL condition list requires a policy_id (without one both sides refuse alike and
 * nothing is compared), and a condition's own routes need one of its ids. A policy whose
 * conditions carry no id is kept only if no later one has a condition with an id.
 */
export async function policyWithNrqlConditions(legacy: (path: string) => Promise<Response>): Promise<{ policy: string; condition: string | undefined } | undefined> {
  let withoutIds: { policy: string; condition: undefined } | undefined;
  try {
    const answer = await legacy('/v2/alerts_policies.json');
    if (!answer.ok) return undefined;
    const policies = ((await answer.json()) as { policies?: unknown }).policies;
    if (!Array.isArray(policies)) return undefined;
    for (const policy of policies.slice(0, POLICIES_SEARCHED)) {
      const id = idOf(policy);
      if (id === undefined) continue;
      const conditions = await legacy(`/v2/alerts_nrql_conditions.json?policy_id=${encodeURIComponent(id)}`);
      if (!conditions.ok) continue;
      const list = ((await conditions.json()) as { nrql_conditions?: unknown }).nrql_conditions;
      if (!Array.isArray(list) || list.length === 0) continue;
      const condition = list.map(idOf).find((found) => found !== undefined);
      if (condition !== undefined) return { policy: id, condition };
      withoutIds ??= { policy: id, condition: undefined };
    }
  } catch {
    return withoutIds;
  }
  return withoutIds;
}

/** The gateway's id of the host the legacy API calls `legacyHost`, found by its name in each side's list. */
async function sameHostOnGateway(options: RouteProbeOptions, headers: Record<string, string>, app: string, legacy: (path: string) => Promise<Response>, legacyHost: string): Promise<string | undefined> {
  const hostsOf = async (answer: Promise<Response>): Promise<Array<Record<string, unknown>>> => {
    try {
      const items = ((await (await answer).json()) as Record<string, unknown>).application_hosts;
      return Array.isArray(items) ? items.filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object') : [];
    } catch {
      return [];
    }
  };
  const path = `/v2/applications/${encodeURIComponent(app)}/hosts.json`;
  const name = (await hostsOf(legacy(path))).find((item) => String(item.id) === legacyHost)?.host;
  if (typeof name !== 'string') return undefined;
  const match = (await hostsOf(options.translate(`${path}?filter[hostname]=${encodeURIComponent(name)}`, headers))).find((item) => item.host === name);
  return match?.id === undefined ? undefined : String(match.id);
}

async function compareOne(mapping: Mapping, path: string, legacy: (path: string) => Promise<Response>, translate: () => Promise<Response>): Promise<RouteComparison> {
  let sides: [AnswerSnapshot, AnswerSnapshot, AnswerSnapshot];
  try {
    sides = [await snapshot(legacy(path)), await snapshot(legacy(path)), await snapshot(translate())];
  } catch (error) {
    return { route: mapping.route, request: path, result: 'error', outcome: `a side failed: ${(error as Error).name}`, status: { legacy: null, translated: null }, differing: [] };
  }
  const [first, again, translated] = sides;
  const gapPatterns = mapping.knownGaps.flatMap((gap) => (gap.path === undefined ? [] : [gap.path]));
  const judged = compareAnswers({ legacy: first, legacyAgain: again, translated, rules: { gapPatterns, thresholds: [] } });
  const differing = [...new Set(judged.tally.filter((entry) => entry.verdict === 'mismatch').map((entry) => entry.pattern))].slice(0, MAX_DIFFERING);
  const status = { legacy: first.status, translated: translated.status };
  // Two refusals alike compared no answer: that is not agreement.
  if (!ok(first.status) || !ok(translated.status)) {
    const alike = first.status === translated.status ? 'both sides refused alike, no answer compared' : 'a side refused, no answer compared';
    return { route: mapping.route, request: path, result: 'unknown', outcome: `${alike} (${judged.error ?? judged.outcome})`, status, differing };
  }
  const result = judged.outcome === 'match' || judged.outcome === 'noise' ? 'agree' : judged.outcome === 'mismatch' ? 'disagree' : 'error';
  return { route: mapping.route, request: path, result, outcome: judged.error ?? judged.outcome, status, differing };
}

/** What each sample value is, for a route skipped because its sample's query needs one the legacy lists gave none of. */
const SAMPLE_VALUES: Record<ReadSampleValue, string> = {
  application_id: 'reporting application',
  host_id: 'host',
  instance_id: 'instance',
  key_transaction_id: 'reporting key transaction',
  mobile_application_id: 'reporting mobile application',
  user_id: 'user',
  policy_id: 'policy',
  nrql_policy_id: 'policy with NRQL conditions',
  nrql_condition_id: 'NRQL condition',
  from: 'window',
  to: 'window',
};

function skippedBecause(missing: MissingValue): string {
  return missing.where === 'path' ? `no ${missing.parameter} to sample (the legacy lists gave none)` : `no ${SAMPLE_VALUES[missing.value as ReadSampleValue]} to sample (${missing.parameter} is required)`;
}

/** The request the two sides are compared on: the route's sample, and its compareQuery where the legacy lists gave that query's values. */
function comparedPath(mapping: ReadMapping, values: Record<ReadSampleValue, string | undefined>): string | MissingValue {
  const path = samplePath(mapping.route, mapping.sample, values);
  const compare = mapping.sample?.compareQuery === undefined ? undefined : fillQuery(mapping.sample.compareQuery, values);
  if (typeof path !== 'string' || typeof compare !== 'string') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${compare}`;
}
