import { APPLICATION_HOST_LINKS, APPLICATION_LINKS } from '../../facts/v2-values.ts';

/**
 * The mappings of target (t), the floor of a translation (bench/targets/translator.ts): one
 * plain function per distinct bench scenario, from NerdGraph's parsed answers to the v2 body the
 * gateway answers there, written from the two shapes (the gateway's answer and NerdGraph's), not
 * from the gateway's mapping code, which the floor must not carry: no zod, no budgets, no caches,
 * no checks of what the gateway checks (account, entity, shape). Each handles what the bench
 * sends and nothing else (no parameters but the ones it asks with, no other windows, one page);
 * bench/targets/translator-server.ts routes a request URL to its mapping.
 */

/** One NerdGraph request (t) sent for a v2 request, and its parsed answer. */
export interface Answered {
  operation: string;
  answer: unknown;
}

export type Mapping = (answers: readonly Answered[], url: URL, now: number) => unknown;

// The shapes as NerdGraph answers them, only as far as the mappings read them (cast, not checked).
interface Instance {
  details: { id: string; host: string };
}
interface InstancesPage {
  applicationInstances?: Instance[] | null;
  nextCursor?: string | null;
}
interface ApmEntity {
  accountId: number;
  applicationId: number;
  name: string;
  reporting?: boolean | null;
  alertSeverity?: string | null;
  language?: string | null;
  settings?: { apdexTarget?: number | null; serverSideConfig?: boolean | null } | null;
  apmSummary?: Record<string, number | null | undefined> | null;
  apmBrowserSummary?: { pageLoadTimeAverage?: number | null; pageLoadThroughput?: number | null } | null;
  applicationInstancesV2?: InstancesPage | null;
}
interface BrowserEntity {
  accountId: number;
  applicationId?: number;
  servingApmApplicationId?: number | null;
  settings?: { apdexTarget?: number | null } | null;
  browserSettings?: { browserMonitoring?: { loader?: string | null } | null } | null;
}
interface Rows {
  results?: Record<string, unknown>[] | null;
}
type Data<T> = { data: { actor: T } };

function actorOf<T>(answers: readonly Answered[], operation: string): T {
  const found = answers.find((a) => a.operation === operation);
  if (found === undefined) throw new Error(`bench translator: no ${operation} answer`);
  return (found.answer as Data<T>).data.actor;
}

// ---------------------------------------------------------------------------------------------
// What the answers share

const HEALTH: Record<string, string> = { CRITICAL: 'red', WARNING: 'orange', NOT_ALERTING: 'green', NOT_CONFIGURED: 'unknown' };
const health = (reporting: boolean, severity: string | null | undefined): string => (reporting ? (HEALTH[severity ?? ''] ?? 'unknown') : 'gray');

/** A v2 timestamp: whole seconds, UTC, `+00:00`. */
const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;

/** Two decimals after dropping float noise. */
const round2 = (value: number): number => Math.round(Number(value.toPrecision(12)) * 100) / 100;

/** v2 host ids: FNV-1a (32-bit) of `appId|host name`, halved to 31 bits, never 0. */
function hostId(appId: number, host: string): number {
  const text = `${appId}|${host}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 1 || 1;
}

const NUMERIC_ID = /^[1-9]\d{0,14}$/;
const byNumber = (a: number, b: number): number => a - b;

/** The instances of every page the request read (the first from the main answer, later ones from ApplicationInstancesPage answers), numeric ids, deduplicated, by id. */
function instancesOf(first: InstancesPage | null | undefined, answers: readonly Answered[]): { id: number; host: string }[] {
  const all = [...(first?.applicationInstances ?? [])];
  for (const a of answers) {
    if (a.operation !== 'ApplicationInstancesPage') continue;
    all.push(...((a.answer as Data<{ entity: { applicationInstancesV2?: InstancesPage | null } }>).data.actor.entity.applicationInstancesV2?.applicationInstances ?? []));
  }
  const byId = new Map<number, { id: number; host: string }>();
  for (const { details } of all) {
    if (NUMERIC_ID.test(details.id) && !byId.has(Number(details.id))) byId.set(Number(details.id), { id: Number(details.id), host: details.host });
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The end-user apdex score per app from the `endUser` NRQL rows (facet = app id). */
function endUserScores(rows: Rows | null | undefined): Map<number, number> {
  const scores = new Map<number, number>();
  for (const row of rows?.results ?? []) {
    if (typeof row.eu_apdex_score === 'number') scores.set(Number(row.facet), round2(row.eu_apdex_score));
  }
  return scores;
}

const hasValue = (object: Record<string, unknown>): boolean => Object.values(object).some((v) => v !== null && v !== undefined);

/** One v2 application, as the list and the show both answer it. */
function application(app: ApmEntity, browser: BrowserEntity | null, score: number | null, links: { instances: number[]; hosts: number[] }, now: number): Record<string, unknown> {
  const reporting = app.reporting === true;
  const out: Record<string, unknown> = { id: app.applicationId, name: app.name, language: app.language ?? 'unknown', health_status: health(reporting, app.alertSeverity), reporting };
  if (reporting) out.last_reported_at = iso(Math.floor(now / 60_000) * 60_000);
  const summary = app.apmSummary;
  if (reporting && summary && hasValue(summary)) {
    out.application_summary = {
      response_time: typeof summary.responseTimeAverage === 'number' ? Math.round(summary.responseTimeAverage * 100_000) / 100 : null,
      throughput: summary.throughput ?? null,
      error_rate: summary.errorRate ?? null,
      apdex_target: app.settings?.apdexTarget ?? null,
      apdex_score: summary.apdexScore ?? null,
      host_count: summary.hostCount ?? null,
      instance_count: summary.instanceCount ?? null,
      concurrent_instance_count: null,
    };
  }
  // The browser side counts only when it serves this app.
  const serving = browser !== null && (browser.servingApmApplicationId === null || browser.servingApmApplicationId === undefined || browser.servingApmApplicationId === app.applicationId);
  const browserApdex = serving ? (browser.settings?.apdexTarget ?? null) : null;
  const eu = app.apmBrowserSummary;
  if (reporting && eu && hasValue(eu)) {
    out.end_user_summary = { response_time: eu.pageLoadTimeAverage ?? null, throughput: eu.pageLoadThroughput ?? null, apdex_target: browserApdex, apdex_score: score };
  }
  const loader = browser !== null && browser.servingApmApplicationId === app.applicationId ? (browser.browserSettings?.browserMonitoring?.loader ?? null) : 'NONE';
  out.settings = {
    app_apdex_threshold: app.settings?.apdexTarget ?? null,
    end_user_apdex_threshold: browserApdex ?? 7,
    enable_real_user_monitoring: loader !== 'NONE',
    use_server_side_config: app.settings?.serverSideConfig ?? false,
  };
  out.links = { application_instances: links.instances, servers: [], application_hosts: links.hosts, alert_policy: null };
  return out;
}

// ---------------------------------------------------------------------------------------------
// The five scenarios

/** GET /v2/applications/{id}.json: ApplicationByGuid (and any later instance pages). */
export const applicationShow: Mapping = (answers, _url, now) => {
  const actor = actorOf<{ entity: ApmEntity; browser?: BrowserEntity | null; account?: { endUser?: Rows | null } | null }>(answers, 'ApplicationByGuid');
  const app = actor.entity;
  const instances = instancesOf(app.applicationInstancesV2, answers);
  const hosts = [...new Set(instances.map((i) => i.host))].map((host) => hostId(app.applicationId, host)).sort(byNumber);
  const score = endUserScores(actor.account?.endUser).get(app.applicationId) ?? null;
  return { application: application(app, actor.browser ?? null, score, { instances: instances.map((i) => i.id), hosts }, now), links: APPLICATION_LINKS };
};

/** GET /v2/applications.json?filter[ids]=...: ApplicationsSearch, then ApplicationsPageDetails (links NRQL, browser sides by GUID, end-user apdex). */
export const applicationsList: Mapping = (answers, _url, now) => {
  const search = actorOf<{ entitySearch: { results: { entities: ApmEntity[] } } }>(answers, 'ApplicationsSearch');
  const details = actorOf<Record<string, (BrowserEntity | null)[] | null | undefined> & { account?: { nrql?: Rows | null; endUser?: Rows | null } | null }>(answers, 'ApplicationsPageDetails');
  const links = new Map<number, { instances: number[]; hosts: number[] }>();
  for (const row of details.account?.nrql?.results ?? []) {
    const appId = Number(row.facet);
    const agents = (row.instances as (string | number)[] | null | undefined) ?? [];
    const hostNames = (row.hosts as string[] | null | undefined) ?? [];
    links.set(appId, {
      instances: [...new Set(agents.map(String).filter((id) => NUMERIC_ID.test(id)).map(Number))].sort(byNumber),
      hosts: [...new Set(hostNames)].map((host) => hostId(appId, host)).sort(byNumber),
    });
  }
  const browsers = new Map<number, BrowserEntity>();
  for (let batch = 0; batch < 8; batch++) {
    for (const browser of details[`b${batch}`] ?? []) if (browser !== null && browser.applicationId !== undefined) browsers.set(browser.applicationId, browser);
  }
  const scores = endUserScores(details.account?.endUser);
  const applications = search.entitySearch.results.entities.map((app) =>
    application(app, browsers.get(app.applicationId) ?? null, scores.get(app.applicationId) ?? null, links.get(app.applicationId) ?? { instances: [], hosts: [] }, now),
  );
  return { applications, links: APPLICATION_LINKS };
};

/** Hosts per v2 page, as the gateway pages them: the bench asks no page, so (t) answers the first. */
const HOSTS_PAGE = 200;

/** GET /v2/applications/{id}/hosts.json: ApplicationTopology (instances and one NRQL query faceted by host), the first page of hosts. */
export const hostsList: Mapping = (answers) => {
  const actor = actorOf<{ entity: ApmEntity; account: { nrql: Rows } }>(answers, 'ApplicationTopology');
  const app = actor.entity;
  const rows = new Map<string, Record<string, unknown>>();
  for (const row of actor.account.nrql.results ?? []) if (row.facet !== null) rows.set(String(row.facet), row);
  const hosts = new Map<string, number[]>();
  for (const instance of instancesOf(app.applicationInstancesV2, answers)) {
    const ids = hosts.get(instance.host) ?? [];
    ids.push(instance.id);
    hosts.set(instance.host, ids);
  }
  const status = health(app.reporting === true, app.alertSeverity);
  const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
  const items = [...hosts]
    .map(([name, instances]) => ({ id: hostId(app.applicationId, name), name, instances }))
    .sort((a, b) => a.id - b.id)
    .slice(0, HOSTS_PAGE)
    .map(({ id, name, instances }) => {
      const host: Record<string, unknown> = { id, application_name: app.name, host: name, language: app.language ?? 'unknown', health_status: status };
      const row = rows.get(name);
      if (row) {
        const transactions = num(row.transactions);
        host.application_summary = {
          response_time: round2(num(row.response_time)),
          throughput: round2(num(row.throughput)),
          error_rate: transactions > 0 ? round2((100 * num(row.errors)) / transactions) : 0,
          apdex_score: round2(num(row.apdex_score)),
          instance_count: instances.length,
        };
        if (typeof row.eu_response_time === 'number') {
          host.end_user_summary = { response_time: round2(row.eu_response_time / 1000), throughput: round2(num(row.eu_throughput)), apdex_score: round2(num(row.eu_apdex_score)) };
        }
      }
      host.links = { application: app.applicationId, application_instances: instances, server: null };
      return host;
    });
  return { application_hosts: items, links: APPLICATION_HOST_LINKS };
};

// Metric data. The value names of each metric family the bench asks (in v2's order), each with
// the NRQL expression the data query computes it with: a value's column is the alias of its
// expression, given in the order the expressions first appear (count first), as the query was built.
const V = 'newrelic.timeslice.value';
const PER_MINUTE = `count(${V}) * 60 / 60`;
const CALL: [string, string][] = [
  ['average_response_time', `average(${V}) * 1000`],
  ['calls_per_minute', PER_MINUTE],
  ['call_count', `count(${V})`],
  ['min_response_time', `min(${V}) * 1000`],
  ['max_response_time', `max(${V}) * 1000`],
  ['average_exclusive_time', `sum(${V}['totalExclusive']) / count(${V}) * 1000`],
  ['average_value', `average(${V})`],
  ['total_call_time_per_minute', `sum(${V}) * 60 / 60`],
  ['requests_per_minute', PER_MINUTE],
  ['standard_deviation', `stddev(${V}) * 1000`],
];
const APDEX_SAMPLES = `count(${V}) + sum(${V}) + sum(${V}['totalExclusive'])`;
const APDEX_SCORE = `(count(${V}) + sum(${V}) / 2) / (${APDEX_SAMPLES})`;
const APDEX: [string, string][] = [
  ['s', `count(${V})`],
  ['t', `sum(${V})`],
  ['f', `sum(${V}['totalExclusive'])`],
  ['count', APDEX_SAMPLES],
  ['score', APDEX_SCORE],
  ['value', APDEX_SCORE],
  ['threshold', `max(${V})`],
  ['threshold_min', `min(${V})`],
];
const ERRORS: [string, string][] = [
  ['error_count', `count(${V})`],
  ['errors_per_minute', PER_MINUTE],
];
const MEMORY: [string, string][] = [
  ['used_bytes_by_host', `average(${V}) * 1024 * 1024`],
  ['used_mb_by_host', `average(${V})`],
  ['total_used_mb', `sum(${V})`],
];
/** Values divided by the bucket's width: scaled when NerdGraph's bucket is not one minute. */
const PER_WINDOW = new Set([PER_MINUTE, `sum(${V}) * 60 / 60`]);

function valuesOf(name: string): [string, string][] {
  if (name === 'Apdex' || name === 'EndUser/Apdex' || name.startsWith('Apdex/')) return APDEX;
  if (name.startsWith('Errors/')) return ERRORS;
  if (name.startsWith('Memory/')) return MEMORY;
  if (name === 'EndUser' || name === 'EndUser/RB' || name.startsWith('CPU/') || name.startsWith('GC/')) throw new Error(`bench translator: no values for ${name}`);
  return CALL;
}

const MINUTE = 60_000;

/** Both metric data routes: `names[]` and a `from`/`to` range of at most 3 hours (one-minute timeslices), no values[], period or summarize (what the bench asks). */
function metricData(operation: string): Mapping {
  return (answers, url) => {
    const account = actorOf<{ account: { data: Rows; known?: Rows | null } }>(answers, operation).account;
    const names = [...new Set(url.searchParams.getAll('names[]').filter((name) => name !== ''))];
    const from = Date.parse(url.searchParams.get('from') ?? '');
    const to = Date.parse(url.searchParams.get('to') ?? '');
    if (!(to - from <= 3 * 3_600_000)) throw new Error('bench translator: only ranges up to 3 hours');
    const start = Math.floor(from / MINUTE) * MINUTE;
    const count = (Math.max(Math.floor(to / MINUTE) * MINUTE, start + MINUTE) - start) / MINUTE;
    // Columns: v0 is count, then each new expression in the order of the names and their values.
    const aliases = new Map<string, string>([[`count(${V})`, 'v0']]);
    for (const name of names) for (const [, expression] of valuesOf(name)) if (!aliases.has(expression)) aliases.set(expression, `v${aliases.size}`);
    const slices = new Map<string, (Record<string, unknown> | undefined)[]>();
    for (const row of account.data.results ?? []) {
      const name = String(row.facet);
      const series = slices.get(name) ?? new Array<Record<string, unknown> | undefined>(count);
      series[Math.floor((Number(row.beginTimeSeconds) * 1000 - start) / MINUTE)] = row;
      slices.set(name, series);
    }
    const known = new Set((account.known?.results ?? []).flatMap((row) => (row.names as string[] | undefined) ?? []));
    const found = names.filter((name) => slices.has(name) || known.has(name));
    const bounds = Array.from({ length: count }, (_, i) => [iso(start + i * MINUTE), iso(start + (i + 1) * MINUTE)]);
    const metrics = found.map((name) => {
      const series = slices.get(name);
      const columns = valuesOf(name);
      return {
        name,
        timeslices: bounds.map(([sliceFrom, sliceTo], i) => {
          const row = series?.[i];
          const width = row === undefined ? MINUTE : (Number(row.endTimeSeconds) - Number(row.beginTimeSeconds)) * 1000;
          const values: Record<string, number> = {};
          for (const [value, expression] of columns) {
            const raw = row?.[aliases.get(expression) as string];
            const number = typeof raw === 'number' && raw !== 0 ? raw : 0;
            values[value] = width > 0 && width !== MINUTE && PER_WINDOW.has(expression) ? (number * MINUTE) / width : number;
          }
          return { from: sliceFrom, to: sliceTo, values };
        }),
      };
    });
    const foundSet = new Set(found);
    return { metric_data: { from: iso(from), to: iso(to), metrics_not_found: names.filter((name) => !foundSet.has(name)), metrics_found: found, metrics } };
  };
}

/** GET /v2/applications/{id}/metrics/data.json: ApplicationMetricData. */
export const applicationMetricData: Mapping = metricData('ApplicationMetricData');
/** GET /v2/applications/{id}/hosts/{host_id}/metrics/data.json: the host directory when the gateway read it (its answer is parsed, not needed: the data query names the host), then ApplicationTopologyMetricData. */
export const hostMetricData: Mapping = metricData('ApplicationTopologyMetricData');

const ROUTES: [RegExp, Mapping][] = [
  [/^\/v2\/applications\.json$/, applicationsList],
  [/^\/v2\/applications\/\d+\.json$/, applicationShow],
  [/^\/v2\/applications\/\d+\/metrics\/data\.json$/, applicationMetricData],
  [/^\/v2\/applications\/\d+\/hosts\.json$/, hostsList],
  [/^\/v2\/applications\/\d+\/hosts\/\d+\/metrics\/data\.json$/, hostMetricData],
];

/** The mapping of a request path, or undefined (a 404). */
export function mappingOf(pathname: string): Mapping | undefined {
  return ROUTES.find(([pattern]) => pattern.test(pathname))?.[1];
}
