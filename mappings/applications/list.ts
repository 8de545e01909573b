import { z } from 'zod';
import { checkedParse, deepFreeze, defineListMapping, OverBudget, type PageReadContext, XML_ASSUMPTION, MAX_PAGES_WALKED, parseAnswer, type Condition, defineParams, param } from '../../src/mapping-api.ts';
import { entitiesByGuid, guidBatchVariables } from '../common/guid-batches.ts';
import { linkIdsFromNames, type AppLinkIds } from '../common/app-instances.ts';
import {
  APPLICATION_ASSUMPTIONS,
  APPLICATION_TOP_LINKS,
  END_USER_APDEX_PART,
  END_USER_APDEX_UNASKED,
  endUserApdexGap,
  ApmEntity,
  BrowserApdexEntity,
  applicationFields,
  applicationGaps,
  browserApdexOf,
  browserGuidOf,
  endUserApdexScores,
  EndUserApdexRows,
  realUserMonitoringOf,
  reshapeApplication,
} from './application.ts';
import { appInstancesQuery, currentWindow, endUserApdexQuery, hostIndexQuery } from '../common/topology-queries.ts';
import { applicationKeys } from './v2-keys.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/** Fresh enough for a host filter, long enough that paging one filtered list reuses it. */
const HOST_INDEX_TTL_MS = 60_000;
/** NRQL's FACET LIMIT MAX: the most applications one host-index answer covers. */
const HOST_INDEX_FACETS = 5000;

/** GET /v2/applications.{json,xml}: the account's APM applications, 200 per page. */
// Declaration order is parse order, as v2 checked them (the first bad parameter is the one refused).
export const applicationListParams = defineParams({
  name: param.text('filter[name]', {
    fidelity: 'approximate',
    note: "entity search `name LIKE '<text>'`, then v2's case-insensitive substring test on each item; `%` and `_` are literal",
  }),
  host: param.text('filter[host]', {
    fidelity: 'approximate',
    note: "one NRQL query for every app's current host names (no client text in it; cached 60 s per caller and account), v2's case-insensitive substring test here, then `domainId IN (...)`",
  }),
  // filter[id] appears in New Relic's docs as a single-id alias of filter[ids].
  ids: param.idList('filter[ids]', {
    aliases: ['filter[id]'],
    fidelity: 'exact',
    note: '`domainId IN (...)`; raw or encoded commas, repeated, or filter[ids][]; filter[id] is an alias',
  }),
  language: param.token('filter[language]', {
    pattern: /^[a-z0-9_.-]{1,32}$/,
    title: REQUEST_RULE_TITLES.languageFilter,
    fidelity: 'exact',
    note: "`language = '<lang>'` (the language tag), lower-cased",
  }),
  excludeLinks: param.flag('exclude_links', { fidelity: 'exact', note: 'true drops each item\'s `links` (and the NRQL part of the page\'s extra request)' }),
  page: param.page({ fidelity: 'exact', note: '200 per page; emulated over entity-search cursors with a page-cursor cache' }),
});

export type ApplicationListParams = ReturnType<typeof applicationListParams.parse>;

export default defineListMapping({
  kind: 'entity-search-list',
  id: 'applications.list',
  method: 'GET',
  route: '/v2/applications.{format}',
  v2Keys: applicationKeys('applications', true),
  operation: 'ApplicationsSearch',
  summary: 'List APM applications (entity search, page numbers emulated over cursors), plus one request per page for links, the browser sides (apdex target and loader, by GUID) and end-user apdex scores (NRQL); filter[host] via a cached NRQL host index',
  fidelity: 'approximate',
  wrapperKey: 'applications',
  pageSize: 200,
  topLinks: APPLICATION_TOP_LINKS,
  parameters: applicationListParams,
  fields: applicationFields('applications[]'),
  knownGaps: [
    {
      description:
        'A page needs its details request (links NRQL, browser sides) as well as the search: when that request fails, the page fails (502/503/504) rather than answer without links or with a browser setting a client would write back. Only its end-user apdex NRQL part is optional (below).',
    },
    ...applicationGaps('applications[]'),
    endUserApdexGap('applications[]'),
    {
      path: 'applications[].end_user_summary.apdex_score',
      description:
        "When the NRQL budgets (NRQL_PER_ACCOUNT_PER_MINUTE, the caller's fair share, IDENTICAL_QUERY_PER_MINUTE) would refuse a page's details request, it is read again without the end-user apdex NRQL: apdex_score is null for the page, the request log records it as degraded, and the page is not cached as whole. The links NRQL (without exclude_links) is not optional: when the budgets refuse that too, the page answers 429.",
    },
    { path: 'applications[].links.application_hosts', description: 'Host ids in links.application_hosts are synthetic (stable per application and host name); ids stored from the real v2 API will not match.' },
    {
      description: `filter[host] reads the hosts of at most ${HOST_INDEX_FACETS} reporting applications (NRQL FACET LIMIT MAX); in larger accounts some matching applications are missed.`,
    },
    { description: 'Applications the entity platform no longer indexes (deleted, or long without data) are not listed, while v2 listed them.' },
    { description: 'Pages are sorted by name; v2 documented its order as indeterminate.' },
    {
      description:
        "filter[name]: NerdGraph's LIKE treats `.,;:*-_` as word separators, so it can miss names v2 matched by substring (e.g. `tf_`); items it matches too loosely are dropped, so such pages can hold fewer than 200 items.",
    },
    { description: `A page more than ${MAX_PAGES_WALKED} pages past the last page read is refused (422): reaching it would cost one NerdGraph request per page.` },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...APPLICATION_ASSUMPTIONS,
    'filter[name] narrows the search with NerdGraph `LIKE`, then each item is re-checked with v2 substring matching (case-insensitive).',
    'NerdGraph entity search returns 200 entities per page (community-reported), so v2 page N is NerdGraph page N.',
    "filter[language] is searched as `language = '<lang>'`, the language tag (exact tag syntax UNCONFIRMED; no probe: the probe sends no language filter).",
    'An empty filter[ids] (`filter[ids]=` or only commas) matches no application.',
    'A `page` past the last page answers an empty list with `first`/`prev` links; page must be a positive integer (422 otherwise).',
    'Current hosts and instances (links, filter[host]) are those with HttpDispatcher or OtherTransaction/all timeslices in the last 10 whole minutes, as NerdGraph\'s applicationInstances defaults to 10 minutes (which metrics every agent reports is UNCONFIRMED; no probe: the route comparison of hosts and instances shows a host missing where an agent reports neither metric).',
    'filter[host] is a case-insensitive substring of a current host name, as v2 matched it; NRQL LIKE is case-sensitive (UNCONFIRMED; no probe: the match is made locally on uniques(host), so it does not depend on it), so the match is made on the uniques(host) answer instead.',
    'A filter[host] host index is reused for 60 s per caller and account: a host that starts reporting may take up to a minute to be matched.',
    'A page costs two NerdGraph requests: the search, then one request for the page\'s links (NRQL), browser sides (8 aliased entities() calls of at most 25 computed GUIDs: apdex target and loader) and end-user apdex scores (NRQL); with exclude_links=true the second request still reads the browser sides and scores (settings are always sent).',
    'The browser app of an APM app has the APM app\'s id (UNCONFIRMED, (probe: browser-app-carries-apm-app-id)); without one, settings.end_user_apdex_threshold is 7, v2\'s documented default.',
    "settings.enable_real_user_monitoring is the browser side's configured loader (browserSettings.browserMonitoring.loader, read by GUID as the show reads it) not being NONE: an APM app whose loader is NONE while its browser app and page views remain reads false, as v2 and the show say (the probe's browser-side-only-while-loader-on found such apps), so a list-then-PUT echo cannot turn browser monitoring on.",
    `The \`domainId IN (...)\` of filter[host] may hold up to ${HOST_INDEX_FACETS} ids; NerdGraph's limit on entity-search query length is UNCONFIRMED (no probe: the probe sends no host filter).`,
  ],
  async searchConditions(params, accountId, ctx) {
    // `filter[ids]=` names no application: nothing matches (an empty IN is not valid search syntax).
    if (params.ids !== undefined && params.ids.length === 0) return null;
    let hostAppIds: number[] | undefined;
    if (params.host !== undefined) {
      const needle = params.host.toLowerCase();
      const index = await ctx.cache.load('applications.hostIndex', async () => readHostIndex(ctx).then((value) => ({ value, ttlMs: HOST_INDEX_TTL_MS, size: value.size })));
      hostAppIds = [...index].filter(([, hosts]) => hosts.some((host) => host.includes(needle))).map(([appId]) => appId);
      if (params.ids !== undefined) {
        const named = new Set(params.ids);
        hostAppIds = hostAppIds.filter((appId) => named.has(appId));
      }
      // No application has such a host: the empty list, without searching.
      if (hostAppIds.length === 0) return null;
    }
    const conditions: Condition[] = [
      { field: 'domain', op: '=', value: 'APM' },
      { field: 'type', op: '=', value: 'APPLICATION' },
      { field: 'accountId', op: '=', value: accountId },
    ];
    if (params.name !== undefined) conditions.push({ field: 'name', op: 'LIKE', value: params.name });
    // filter[host] already kept only the named ids: one domainId condition either way.
    const appIds = hostAppIds?.sort((a, b) => a - b) ?? params.ids;
    if (appIds !== undefined) conditions.push({ field: 'domainId', op: 'IN', values: appIds.map(String) });
    if (params.language !== undefined) conditions.push({ field: 'language', op: '=', value: params.language });
    return conditions;
  },
  renderVariant: (params) => (params.excludeLinks ? 'without-links' : 'with-links'),
  enrichPage(entities, ctx, params) {
    return readPageDetails(entities, ctx, !params.excludeLinks);
  },
  reshapeItem(entity, ctx, enrichment) {
    const parsed = parsedApmEntity(entity);
    // A refused entity is refused as before, with zod's own error.
    const app = parsed.success ? parsed.data : ApmEntity.parse(entity);
    // enrichment is what this mapping's own enrichPage returned (undefined for an empty page).
    const details = enrichment as PageDetails | undefined;
    const browser = details?.browsers.get(app.applicationId) ?? null;
    return reshapeApplication(app, ctx, {
      links: details?.links === null || details === undefined ? null : (details.links.get(app.applicationId) ?? { instances: [], hosts: [] }),
      browserApdexTarget: browserApdexOf(app.applicationId, browser),
      realUserMonitoring: realUserMonitoringOf(app.applicationId, browser),
      endUserApdexScore: details?.endUserApdex.get(app.applicationId) ?? null,
    });
  },
  keepItem(params, item) {
    return params.name === undefined || String(item.name).toLowerCase().includes(params.name.toLowerCase());
  },
});

// ---------------------------------------------------------------------------------------------
// The page's extra request (links, browser apdex) and filter[host]'s host index.


/** One faceted row: NerdGraph puts the facet value under `facet` (and the attribute's name). */
const FacetRow = z.object({
  facet: z.union([z.number(), z.string()]),
  hosts: z.array(z.string()).nullable().optional(),
  instances: z.array(z.union([z.number(), z.string()])).nullable().optional(),
});
const FacetRows = z.object({ results: z.array(FacetRow).nullable() }).nullable();
const NrqlRows = z.object({ nrql: FacetRows }).nullable();

// The b0..b7 browser batches are read by entitiesByGuid (guid-batches.ts).
// Both documents: ApplicationsBrowserApdex has no `nrql` (links) field.
export const PageDetailsAnswer = z.object({ actor: z.object({ account: z.object({ nrql: FacetRows.optional(), endUser: EndUserApdexRows }).nullable() }) });
const HostIndexAnswer = z.object({ actor: z.object({ account: NrqlRows }) });

/**
 * ApmEntity's parse of a search entity, once per entity object: the page's details read and
 * each item's reshape both need it (zod on 200 entities twice cost about 135 µs a page). Keyed
 * weakly by the answer's own object, so it lives as long as the answer does.
 */
const parsedEntities = new WeakMap<object, ReturnType<typeof ApmEntity.safeParse>>();

function parsedApmEntity(entity: unknown): ReturnType<typeof ApmEntity.safeParse> {
  if (entity === null || typeof entity !== 'object') return checkedParse(ApmEntity, entity);
  let parsed = parsedEntities.get(entity);
  if (parsed === undefined) {
    parsed = checkedParse(ApmEntity, entity);
    // Shared by every request that serves this answer (the micro-cache): zod's copy is frozen, as
    // the answer is. The entity itself (the compiled check passed it) is the answer's to freeze.
    if (parsed.success && parsed.data !== entity) deepFreeze(parsed.data);
    parsedEntities.set(entity, parsed);
  }
  return parsed;
}

/** What enrichPage gives reshapeItem: per app id. */
interface PageDetails {
  /** null when exclude_links=true. */
  links: Map<number, AppLinkIds> | null;
  browsers: Map<number, BrowserApdexEntity>;
  /** end_user_summary.apdex_score by app id (apps without EndUser/Apdex rows are absent). */
  endUserApdex: Map<number, number>;
}

function appIdOf(row: z.infer<typeof FacetRow>): number | null {
  const appId = Number(row.facet);
  return Number.isSafeInteger(appId) && appId > 0 ? appId : null;
}

/**
 * One request for the page: each app's current hosts and instances (NRQL faceted by appId,
 * when links are sent), their end-user apdex scores (NRQL), and the browser apps with the
 * page's app ids, read by computed GUID (at most 200, 8 entities() calls of 25): the full
 * entity, so the loader is read as the show reads it.
 */
async function readPageDetails(entities: readonly unknown[], ctx: PageReadContext, withLinks: boolean): Promise<PageDetails> {
  const appIds = [...new Set(entities.map(parsedApmEntity).flatMap((parsed) => (parsed.success ? [parsed.data.applicationId] : [])))];
  const details: PageDetails = { links: null, browsers: new Map(), endUserApdex: new Map() };
  if (appIds.length === 0) return details;
  const browserGuids = appIds.map((appId) => browserGuidOf(ctx.accountId, appId));
  const endUserApdex = endUserApdexQuery({ appIds, ...currentWindow(ctx.now) });
  const operation = withLinks ? 'ApplicationsPageDetails' : 'ApplicationsBrowserApdex';
  const variables: Record<string, unknown> = { ...guidBatchVariables(browserGuids), accountId: ctx.accountId, endUserApdex };
  if (withLinks) variables.instances = appInstancesQuery({ appIds, ...currentWindow(ctx.now) });
  let data: unknown;
  try {
    data = await ctx.read(operation, { ...variables, withEndUserApdex: true }, END_USER_APDEX_PART);
  } catch (error) {
    // The scores are worth no refused page: without them the NRQL budgets count only the links query, if any.
    if (!(error instanceof OverBudget) || error.budget === 'concurrency') throw error;
    data = await ctx.read(operation, { ...variables, withEndUserApdex: false }, END_USER_APDEX_UNASKED);
  }
  const answer = parseAnswer(PageDetailsAnswer, data, operation).actor;
  details.endUserApdex = endUserApdexScores(answer.account?.endUser, appIds);
  if (withLinks) {
    details.links = new Map();
    for (const row of answer.account?.nrql?.results ?? []) {
      const appId = appIdOf(row);
      if (appId !== null) details.links.set(appId, linkIdsFromNames(appId, row.hosts ?? [], row.instances ?? []));
    }
  }
  const scoped: Pick<PageReadContext, 'inAccount'> = { inAccount: (entity) => ctx.inAccount(entity, operation) };
  for (const entity of entitiesByGuid(data, operation, browserGuids, scoped).values()) {
    const parsed = checkedParse(BrowserApdexEntity, entity);
    if (parsed.success && parsed.data.applicationId !== undefined) details.browsers.set(parsed.data.applicationId, parsed.data);
  }
  return details;
}

/** Every reporting app's current host names, lower-cased, by app id (filter[host]). */
async function readHostIndex(ctx: PageReadContext): Promise<Map<number, string[]>> {
  const operation = 'ApplicationHostIndex';
  const answer = parseAnswer(HostIndexAnswer, await ctx.read(operation, { accountId: ctx.accountId, hosts: hostIndexQuery(currentWindow(ctx.now)) }), operation);
  const index = new Map<number, string[]>();
  for (const row of answer.actor.account?.nrql?.results ?? []) {
    const appId = appIdOf(row);
    if (appId !== null) index.set(appId, (row.hosts ?? []).map((host) => host.toLowerCase()));
  }
  return index;
}
