import { z } from 'zod';
import { checkedParse, type FieldNote, type KnownGap, type OperationContext, type PlannedAnswer, fieldNotesUnder, EntityKinds, pageOfList, NrqlResults, parseAnswer, UpstreamError, notFound, type V2Body, defineParams, param, ID_PATTERN } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { InstancesPage, allInstancesOf, appHosts, appInstances, type AppHost, type AppInstance, syntheticHostId } from '../common/app-instances.ts';
import { healthStatus } from '../common/entity-health.ts';
import { UNSCOPED_ROWS_ASSUMPTION, acceptedFormulasOf } from '../common/metric-values.ts';
import { currentWindow, facetedSummaryQuery, type FilteredItem } from '../common/topology-queries.ts';
import { ApmOutline } from '../common/entity-schemas.ts';
import { APPLICATION_HOST_TITLES } from '../../facts/v2-titles.ts';
import { APPLICATION_HOST_LINKS, APPLICATION_INSTANCE_LINKS } from '../../facts/v2-values.ts';

/**
 * The "topology reads" (`/v2/applications/{id}/hosts` and `/instances`, list and show): one
 * upstream request each, the app entity with its agent instances (applicationInstancesV2) and
 * one NRQL query that summarises the last 10 whole minutes per host (`FACET host`) or per
 * agent instance (`FACET realAgentId`) (routes-next.md §0, §1; rest-v2.md §3.4, §6).
 */
export type TopologyKind = 'hosts' | 'instances';

export const TopologyTitles = APPLICATION_HOST_TITLES;

export const TOPOLOGY_PAGE_SIZE = 200;

/** v2's top-level link templates (facts/v2-values.ts; `/hosts/{instance_id}` sic). */
export const HOST_TOP_LINKS: V2Body = APPLICATION_HOST_LINKS;
export const INSTANCE_TOP_LINKS: V2Body = APPLICATION_INSTANCE_LINKS;

export const topologyListParams = defineParams({
  hostname: param.text('filter[hostname]', {
    fidelity: 'approximate',
    note: 'case-insensitive substring of the host name (match semantics UNCONFIRMED; no probe: the probe sends no host filter), filtered locally',
  }),
  ids: param.idList('filter[ids]', { fidelity: 'exact', note: 'host (or instance) ids; raw or encoded commas, repeated, or filter[ids][]' }),
  page: param.page({ fidelity: 'exact', note: '200 per page (UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing), paged locally, v2 Link header' }),
});

// ---------------------------------------------------------------------------------------------
// The one read

const formula = (metric: string, value: string): string => {
  const expression = acceptedFormulasOf(metric)[value];
  if (expression === undefined) throw new Error(`no formula ${metric}:${value}`);
  return expression;
};

/**
 * The summary values, each over its own metrics (the formula table of metric-values.ts). The
 * error rate is computed from `errors` and `transactions` (see TOPOLOGY_ASSUMPTIONS).
 */
// Frozen: summaryParts (topology-queries.ts) keeps the SELECT built from this list by its identity.
const SUMMARY_ITEMS: readonly FilteredItem[] = Object.freeze([
  { alias: 'response_time', metrics: ['HttpDispatcher'], expression: formula('HttpDispatcher', 'average_response_time') },
  { alias: 'throughput', metrics: ['HttpDispatcher'], expression: formula('HttpDispatcher', 'calls_per_minute') },
  { alias: 'errors', metrics: ['Errors/all'], expression: formula('Errors/all', 'error_count') },
  { alias: 'transactions', metrics: ['HttpDispatcher', 'OtherTransaction/all'], expression: formula('HttpDispatcher', 'call_count') },
  { alias: 'apdex_score', metrics: ['Apdex'], expression: formula('Apdex', 'score') },
  { alias: 'eu_response_time', metrics: ['EndUser'], expression: formula('EndUser', 'average_response_time') },
  { alias: 'eu_throughput', metrics: ['EndUser'], expression: formula('EndUser', 'calls_per_minute') },
  { alias: 'eu_apdex_score', metrics: ['EndUser/Apdex'], expression: formula('EndUser/Apdex', 'score') },
]);

const FACET_OF: Record<TopologyKind, string> = { hosts: 'host', instances: 'realAgentId' };
/** One operation serves both: only the NRQL facet differs. */
const OPERATION = 'ApplicationTopology';

export function topologySummaryQuery(kind: TopologyKind, appId: number, now: number): string {
  return facetedSummaryQuery({ scope: [{ attribute: 'appId', value: appId }], facet: FACET_OF[kind], items: SUMMARY_ITEMS, ...currentWindow(now) });
}

const TopologyEntity = ApmOutline.extend({
  applicationInstancesV2: InstancesPage.nullable().optional(),
});

const TopologyAnswer = z.object({
  actor: z.object({ entity: z.unknown(), account: z.object({ nrql: NrqlResults }).nullable() }),
});

const num = z.number().nullable().optional();
const SummaryRow = z.object({
  facet: z.union([z.string(), z.number()]).nullable(),
  response_time: num,
  throughput: num,
  errors: num,
  transactions: num,
  apdex_score: num,
  eu_response_time: num,
  eu_throughput: num,
  eu_apdex_score: num,
});
type SummaryRow = z.infer<typeof SummaryRow>;

export interface Topology {
  appId: number;
  appName: string;
  language: string;
  healthStatus: string;
  instances: AppInstance[];
  hosts: AppHost[];
  /** Summary rows by facet value as text (host name, or instance id). */
  rows: Map<string, SummaryRow>;
}

/** The app (404 when unknown, foreign or malformed), its instances and hosts, and their summaries. */
export async function readTopology(ctx: OperationContext, kind: TopologyKind): Promise<Topology> {
  const ref = ctx.entityRef(EntityKinds.apmApplication, ctx.pathParams.id, EntityTitles.applicationNotFound);
  const data = await ctx.read(OPERATION, { accountId: ctx.accountId, guid: ref.guid, summary: topologySummaryQuery(kind, ref.id, ctx.now) });
  const answer = parseAnswer(TopologyAnswer, data, OPERATION);
  const found = ctx.requireEntity(answer.actor.entity, ref, EntityTitles.applicationNotFound);
  const parsed = checkedParse(TopologyEntity, found);
  if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected entity shape in ${OPERATION}`);
  const entity = parsed.data;
  const results = answer.actor.account?.nrql?.results;
  if (!results) throw new UpstreamError('upstream_failure', `${OPERATION}: no NRQL results`);
  const rows = new Map<string, SummaryRow>();
  for (const result of results) {
    const row = checkedParse(SummaryRow, result);
    if (row.success && row.data.facet !== null) rows.set(String(row.data.facet), row.data);
  }
  // Every page of applicationInstancesV2: the first came with this request, later ones are
  // read once per app and kept briefly (app-instances.ts).
  const instances = appInstances(await allInstancesOf(ctx, ref, entity.applicationInstancesV2));
  return {
    appId: entity.applicationId,
    appName: entity.name,
    language: entity.language ?? 'unknown',
    healthStatus: healthStatus(entity.reporting === true, entity.alertSeverity),
    instances,
    hosts: appHosts(entity.applicationId, instances),
    rows,
  };
}

// ---------------------------------------------------------------------------------------------
// Reshaping

/** Two decimals, after dropping float noise (so two ways of summing the same rows agree). */
export function round2(value: number): number {
  return Math.round(Number(value.toPrecision(12)) * 100) / 100;
}

/** application_summary and end_user_summary of one facet row; none without rows in the window. */
function summaries(row: SummaryRow | undefined, instanceCount: number): V2Body {
  if (!row) return {};
  const transactions = row.transactions ?? 0;
  const out: V2Body = {
    application_summary: {
      response_time: round2(row.response_time ?? 0),
      throughput: round2(row.throughput ?? 0),
      error_rate: transactions > 0 ? round2((100 * (row.errors ?? 0)) / transactions) : 0,
      apdex_score: round2(row.apdex_score ?? 0),
      instance_count: instanceCount,
    },
  };
  // Browser monitoring shows as EndUser rows; an app without it has no end_user_summary.
  if (row.eu_response_time !== null && row.eu_response_time !== undefined) {
    out.end_user_summary = {
      response_time: round2(row.eu_response_time / 1000),
      throughput: round2(row.eu_throughput ?? 0),
      apdex_score: round2(row.eu_apdex_score ?? 0),
    };
  }
  return out;
}

export function reshapeHost(topology: Topology, host: AppHost): V2Body {
  return {
    id: host.id,
    application_name: topology.appName,
    host: host.name,
    language: topology.language,
    health_status: topology.healthStatus,
    ...summaries(topology.rows.get(host.name), host.instances.length),
    // links.server: the legacy Servers API's id, which NerdGraph does not have; null keeps the key v2 sent.
    links: { application: topology.appId, application_instances: host.instances.map((instance) => instance.id), server: null },
  };
}

export function reshapeInstance(topology: Topology, instance: AppInstance): V2Body {
  return {
    id: instance.id,
    application_name: topology.appName,
    host: instance.host,
    port: instance.port,
    language: topology.language,
    health_status: topology.healthStatus,
    ...summaries(topology.rows.get(String(instance.id)), 1),
    links: { application: topology.appId, application_host: syntheticHostId(topology.appId, instance.host), server: null },
  };
}

// ---------------------------------------------------------------------------------------------
// The four loads

/** Hosts (or instances) of the app matching filter[hostname] and filter[ids], one v2 page. */
export async function loadTopologyList(ctx: OperationContext, kind: TopologyKind): Promise<PlannedAnswer> {
  // Parameters first: a bad one is a 422 without an upstream request (the legacy face agrees).
  const { hostname, ids, page } = topologyListParams.parse(ctx.params);
  const topology = await readTopology(ctx, kind);
  const needle = hostname?.toLowerCase();
  const wanted = ids === undefined ? undefined : new Set(ids);
  const keep = (id: number, host: string): boolean =>
    (wanted === undefined || wanted.has(id)) && (needle === undefined || host.toLowerCase().includes(needle));
  const items =
    kind === 'hosts'
      ? topology.hosts.filter((host) => keep(host.id, host.name)).map((host) => reshapeHost(topology, host))
      : topology.instances.filter((instance) => keep(instance.id, instance.host)).map((instance) => reshapeInstance(topology, instance));
  return pageOfList(items, {
    page,
    pageSize: TOPOLOGY_PAGE_SIZE,
    wrapperKey: kind === 'hosts' ? 'application_hosts' : 'application_instances',
    publicUrl: ctx.publicUrl,
    topLinks: kind === 'hosts' ? HOST_TOP_LINKS : INSTANCE_TOP_LINKS,
  });
}

/** One host (or instance) of the app; the app's 404 first, then the host's (or instance's). */
export async function loadTopologyItem(ctx: OperationContext, kind: TopologyKind, rawItemId: string | undefined): Promise<PlannedAnswer> {
  const title = kind === 'hosts' ? TopologyTitles.hostNotFound : TopologyTitles.instanceNotFound;
  // The app first, as the host and instance metric routes (and v2) check it: a malformed app id
  // is the app's 404 without a request; a malformed item id of an unknown app is the app's 404 too.
  const topology = await readTopology(ctx, kind);
  if (rawItemId === undefined || !ID_PATTERN.test(rawItemId)) throw notFound(title);
  const itemId = Number(rawItemId);
  if (kind === 'hosts') {
    const host = topology.hosts.find((candidate) => candidate.id === itemId);
    if (!host) throw notFound(title);
    return { body: { application_host: reshapeHost(topology, host), links: HOST_TOP_LINKS } };
  }
  const instance = topology.instances.find((candidate) => candidate.id === itemId);
  if (!instance) throw notFound(title);
  return { body: { application_instance: reshapeInstance(topology, instance), links: INSTANCE_TOP_LINKS } };
}

// ---------------------------------------------------------------------------------------------
// What the four mappings declare

export const TOPOLOGY_ASSUMPTIONS: readonly string[] = [
  UNSCOPED_ROWS_ASSUMPTION,
  'Summaries cover the last 10 whole minutes before the request minute (v2: "last 10 minutes"), from one NRQL query faceted by host or realAgentId.',
  'error_rate = 100 x Errors/all count / (HttpDispatcher + OtherTransaction/all call counts), a percentage with 2 decimals, as the application summary scale of this gateway (fraction vs percent is UNCONFIRMED; probes: apm-error-rate-is-percent, v2-host-error-rate-is-percent).',
  'response_time is HttpDispatcher average_response_time (ms), throughput HttpDispatcher calls_per_minute, apdex_score the Apdex score; all rounded to 2 decimals; 0 when the facet has no such rows.',
  'A host or instance without any summary row in the window has no application_summary.',
  'end_user_summary is shown when the host or instance has EndUser rows: response_time in seconds (as the application route), throughput per minute, apdex_score from EndUser/Apdex.',
  'health_status is the application\'s (alertSeverity; gray when not reporting): NerdGraph has no per-host health.',
  'A non-reporting application has no hosts and no instances: its lists are empty and its host and instance ids answer 404.',
  'filter[hostname] is a case-insensitive substring match on the host name (as filter[host] on applications), applied locally; filter[ids] matches host ids on /hosts and instance ids on /instances; an empty filter[ids] matches nothing.',
  'Page size 200, paged locally; a page past the end is an empty list with first/prev links.',
  'A bad parameter answers 422 before the application is looked up (so an unknown app with a bad parameter is a 422).',
  'On a show, the application is looked up first, whatever the host or instance id: an unknown app is its 404 even with a malformed item id (as on the host and instance metric routes).',
  'The Metric attribute `host` carries the same host name as applicationInstancesV2 details.host.',
  'Instance ids are applicationInstancesV2 details.id (numeric) = the Metric attribute realAgentId; port is parsed from a `host:port` instance name, else 0.',
  'The instance top-level links application_instance.application and .server follow the host ones (/v2/applications/{application_id}, /v2/servers/{server_id}).',
];

export function topologyGaps(prefix: string): KnownGap[] {
  return [
    {
      // The id field itself: a host's own id, or the host an instance links to.
      path: prefix.startsWith('application_host') ? `${prefix}.id` : `${prefix}.links.application_host`,
      description: 'Host ids are synthetic (stable per application and host name, in every process and replica); ids stored from the real v2 API will not match.',
    },
    {
      description:
        'Every page of applicationInstancesV2 is read: the first with the request, later ones once per app and kept 30 seconds (per caller and account), so a host or instance that appeared on a later page meanwhile shows within 30 seconds. Past 20 pages or 10,000 instances the route answers 503 naming the bound, never a cut list. A walk cut short (by the request deadline or a failed page) keeps its progress 60 seconds (bounded like the lists): the next request resumes it from the page it stopped at, so such a list joins pages read up to a minute apart.',
    },
    { path: `${prefix}.links.server`, description: 'links.server (the id of the legacy Servers API) has no NerdGraph source: always null.' },
    { description: 'v2 listed hosts and instances that reported in about the last hour; NerdGraph lists the instances of the last minutes.' },
  ];
}

export function topologyFields(prefix: string, kind: TopologyKind): FieldNote[] {
  const f = fieldNotesUnder(prefix);
  return [
    kind === 'hosts'
      ? f('id', 'approximate', 'syntheticHostId(appId, details.host)')
      : f('id', 'approximate', 'applicationInstancesV2 details.id (UNCONFIRMED as the v2 instance id; probes: instance-id-is-real-agent-id, v2-instance-ids-are-agent-ids)'),
    f('application_name', 'exact', 'entity name'),
    f('host', 'exact', 'details.host'),
    ...(kind === 'instances' ? [f('port', 'approximate', 'trailing :<port> of details.instanceName, else 0')] : []),
    f('language', 'exact', 'entity language'),
    f('health_status', 'approximate', "the application's alertSeverity; gray when not reporting"),
    f('application_summary.response_time', 'approximate', "NRQL HttpDispatcher average x 1000, last 10 minutes, per facet"),
    f('application_summary.throughput', 'approximate', 'NRQL HttpDispatcher count * 60 / window seconds (calls_per_minute)'),
    f('application_summary.error_rate', 'approximate', '100 x Errors/all / (HttpDispatcher + OtherTransaction/all) counts'),
    f('application_summary.apdex_score', 'approximate', 'NRQL Apdex score (S + T/2) / (S + T + F)'),
    f('application_summary.instance_count', 'exact', kind === 'hosts' ? 'instances grouped on the host' : 'always 1'),
    f('end_user_summary', 'approximate', 'NRQL EndUser and EndUser/Apdex rows per facet, when present'),
    kind === 'hosts'
      ? f('links.application_instances', 'exact', 'details.id of the instances on the host')
      : f('links.application_host', 'approximate', 'syntheticHostId(appId, details.host)'),
    f('links.application', 'exact', 'applicationId'),
    f('links.server', 'unsupported', 'no NerdGraph source: null'),
  ];
}
