import { Hono, type Context } from 'hono';
import { V2Error, V2Titles, notFound } from '../../v2/errors.ts';
import { errorBody, serialise, CONTENT_TYPES, type V2Body, type V2Format } from '../../v2/format.ts';
import { readFormBody } from '../../v2/form-body.ts';
import { isoSeconds } from '../../v2/time.ts';
import { legacyMetricData, legacyMetricNames, type MetricRequest } from './metrics.ts';
import {
  legacyCreateApplication,
  legacyCreateDeployment,
  legacyDeleteApplication,
  legacyDeleteDeployment,
  legacyDeploymentV0,
  legacyDeployments,
  legacyUpdateApplication,
  type WriteRequest,
} from './writes.ts';
import type { SandboxApp, SandboxData } from '../model.ts';

/**
 * The sandbox's legacy REST v2 face: the answers v2 itself would give, computed straight from
 * the synthetic data by the REST v2 rules, with no NerdGraph and no gateway mapping involved.
 * It is the reference the gateway is compared against, so it implements routing, parameter
 * parsing, validation, filtering, paging and the Link header on its own; it shares with the
 * gateway only wire-format helpers: the body writers (JSON, XML), the timestamp format, and
 * the error type with its titles.
 */
const PAGE_SIZE = 200;

/** Under @hono/node-server the raw request is there, for GET bodies. */
type LegacyEnv = { Bindings: { incoming?: AsyncIterable<Buffer> } };

const HEALTH_BY_SEVERITY: Record<string, string> = {
  CRITICAL: 'red',
  WARNING: 'orange',
  NOT_ALERTING: 'green',
  NOT_CONFIGURED: 'unknown',
};

/** The full v2 application object, as REST v2 rendered it. */
export function legacyApplication(app: SandboxApp, now: number, withLinks: boolean): V2Body {
  const body: V2Body = {
    id: app.id,
    name: app.name,
    language: app.language,
    health_status: app.reporting ? (HEALTH_BY_SEVERITY[app.alertSeverity] ?? 'unknown') : 'gray',
    reporting: app.reporting,
  };
  // Sandbox agents report every minute, so a reporting app last reported this minute.
  if (app.reporting) body.last_reported_at = isoSeconds(Math.floor(now / 60_000) * 60_000);
  if (app.reporting && app.summary) {
    body.application_summary = {
      response_time: app.summary.responseTimeMs,
      throughput: app.summary.throughput,
      error_rate: app.summary.errorRate,
      apdex_target: app.apdexTarget,
      apdex_score: app.summary.apdexScore,
      host_count: app.hosts.length,
      instance_count: app.hosts.reduce((n, h) => n + h.instances.length, 0),
    };
  }
  if (app.reporting && app.browser) {
    body.end_user_summary = {
      response_time: app.browser.pageLoadTimeSeconds,
      throughput: app.browser.pageLoadThroughput,
      apdex_target: app.browser.apdexTarget,
      apdex_score: app.browser.apdexScore,
    };
  }
  body.settings = {
    app_apdex_threshold: app.apdexTarget,
    end_user_apdex_threshold: app.browser?.apdexTarget ?? 7,
    enable_real_user_monitoring: app.browser !== null,
    use_server_side_config: app.serverSideConfig,
  };
  if (withLinks) {
    const links: V2Body = {
      application_instances: app.hosts.flatMap((h) => h.instances.map((i) => i.id)).sort((a, b) => a - b),
      servers: [],
      application_hosts: app.hosts.map((h) => h.id).sort((a, b) => a - b),
    };
    if (app.alertPolicyId !== null) links.alert_policy = app.alertPolicyId;
    body.links = links;
  }
  return body;
}

/** v2's link templates beside application data (New Relic's own singular `/v2/application/`). */
const APPLICATION_LINK_TEMPLATES: V2Body = {
  'application.servers': '/v2/servers?ids={server_ids}',
  'application.server': '/v2/servers/{server_id}',
  'application.application_hosts': '/v2/application/{application_id}/hosts?ids={host_ids}',
  'application.application_host': '/v2/application/{application_id}/hosts/{host_id}',
  'application.application_instances': '/v2/application/{application_id}/instances?ids={instance_ids}',
  'application.application_instance': '/v2/application/{application_id}/instances/{instance_id}',
  'application.alert_policy': '/v2/alert_policies/{alert_policy_id}',
};

/** Request parameters as ordered [key, value] pairs: query string first, then a form body. */
type Pairs = Array<[string, string]>;

const baseKey = (key: string): string => key.replace(/\[\d*\]$/, '');

function valuesOf(pairs: Pairs, key: string): string[] {
  return pairs.filter(([k]) => baseKey(k) === key).map(([, v]) => v);
}

const invalid = (title: string): V2Error => new V2Error(422, title);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

interface ListFilters {
  name?: string;
  host?: string;
  ids?: Set<number>;
  language?: string;
  excludeLinks: boolean;
  page: number;
}

function text(pairs: Pairs, key: string): string | undefined {
  const value = valuesOf(pairs, key).at(-1);
  if (value === undefined || value === '') return undefined;
  if (value.length > 255 || CONTROL.test(value)) {
    throw invalid(`Invalid parameter ${key}: expected text of at most 255 characters without control characters`);
  }
  return value;
}

function ids(pairs: Pairs, key: string): number[] | undefined {
  const values = valuesOf(pairs, key);
  if (values.length === 0) return undefined;
  const found = values.flatMap((v) => v.split(',')).map((piece) => piece.trim()).filter((piece) => piece !== '');
  for (const piece of found) {
    if (!/^[1-9][0-9]{0,14}$/.test(piece)) throw invalid(`Invalid parameter ${key}: expected a comma-separated list of positive integer ids`);
  }
  if (found.length > 1000) throw invalid(`Invalid parameter ${key}: at most 1000 ids are accepted`);
  return found.map(Number);
}

function listFilters(pairs: Pairs): ListFilters {
  const filters: ListFilters = { excludeLinks: false, page: 1 };
  const name = text(pairs, 'filter[name]');
  if (name !== undefined) filters.name = name.toLowerCase();
  const host = text(pairs, 'filter[host]');
  if (host !== undefined) filters.host = host.toLowerCase();
  const idList = [...(ids(pairs, 'filter[ids]') ?? []), ...(ids(pairs, 'filter[id]') ?? [])];
  if (valuesOf(pairs, 'filter[ids]').length > 0 || valuesOf(pairs, 'filter[id]').length > 0) filters.ids = new Set(idList);
  const language = valuesOf(pairs, 'filter[language]').at(-1)?.trim().toLowerCase();
  if (language) {
    if (!/^[a-z0-9_.-]{1,32}$/.test(language)) throw invalid('Invalid parameter filter[language]: expected an agent language such as java or python');
    filters.language = language;
  }
  const exclude = valuesOf(pairs, 'exclude_links').at(-1)?.trim().toLowerCase();
  if (exclude !== undefined) {
    if (['true', '1', 'yes', 'on', 't'].includes(exclude)) filters.excludeLinks = true;
    else if (!['false', '0', 'no', 'off', 'f', ''].includes(exclude)) throw invalid('Invalid parameter exclude_links: expected true or false');
  }
  filters.page = pageOf(pairs);
  return filters;
}

/** The `page` parameter of every paged listing (applications, metric names). */
function pageOf(pairs: Pairs): number {
  const page = valuesOf(pairs, 'page').at(-1)?.trim();
  if (!page) return 1;
  if (!/^[0-9]{1,7}$/.test(page) || Number(page) < 1 || Number(page) > 1_000_000) {
    throw invalid('Invalid parameter page: expected a whole number from 1 to 1000000');
  }
  return Number(page);
}

/**
 * v2's Link header, written the way Rails' url_for would: every parameter of the request
 * (form body included, api keys never), percent-encoded afresh, with `page` set.
 */
function legacyLink(base: string, pairs: Pairs, page: number, lastPage: number): string | undefined {
  const kept = pairs.filter(([k]) => !['page', 'api_key', 'api-key', 'x-api-key', 'apikey'].includes(baseKey(k).toLowerCase()));
  const url = (p: number): string =>
    `${base}?${[...kept, ['page', String(p)] as [string, string]].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
  const entries: string[] = [];
  if (page > 1 && lastPage >= 1) entries.push(`<${url(1)}>; rel="first"`, `<${url(Math.min(page - 1, lastPage))}>; rel="prev"`);
  if (page < lastPage) entries.push(`<${url(page + 1)}>; rel="next"`, `<${url(lastPage)}>; rel="last"`);
  return entries.length > 0 ? entries.join(', ') : undefined;
}

type Route =
  | 'list'
  | 'show'
  | 'metric-names'
  | 'metric-data'
  | 'deployments'
  | 'deployment'
  | 'mobile-applications'
  | 'browser-applications'
  | 'deployments-v0';
type Found = { route: Route; format: V2Format; id: string; deploymentId: string };

const ROUTES: ReadonlyArray<readonly [Route, RegExp]> = [
  ['list', /^\/v2\/applications\.(?<format>[^./]+)$/],
  ['show', /^\/v2\/applications\/(?<id>[^/]+?)\.(?<format>[^./]+)$/],
  ['metric-names', /^\/v2\/applications\/(?<id>[^/]+)\/metrics\.(?<format>[^./]+)$/],
  ['metric-data', /^\/v2\/applications\/(?<id>[^/]+)\/metrics\/data\.(?<format>[^./]+)$/],
  ['deployments', /^\/v2\/applications\/(?<id>[^/]+)\/deployments\.(?<format>[^./]+)$/],
  ['deployment', /^\/v2\/applications\/(?<id>[^/]+)\/deployments\/(?<deploymentId>[^/]+?)\.(?<format>[^./]+)$/],
  ['mobile-applications', /^\/v2\/mobile_applications\.(?<format>[^./]+)$/],
  ['browser-applications', /^\/v2\/browser_applications\.(?<format>[^./]+)$/],
  // v0, outside /v2: XML only.
  ['deployments-v0', /^\/deployments\.(?<format>xml)$/],
];

/** Methods each route answers (HEAD rides along with GET). */
const ALLOWED: Record<Route, readonly string[]> = {
  list: ['GET'],
  show: ['GET', 'PUT', 'DELETE'],
  'metric-names': ['GET'],
  'metric-data': ['GET', 'POST'],
  deployments: ['GET', 'POST'],
  deployment: ['DELETE'],
  'mobile-applications': ['POST'],
  'browser-applications': ['POST'],
  'deployments-v0': ['POST'],
};

/** Routes and methods that write (legacy-writes.ts); they read their own bodies. */
const isWrite = (route: Route, method: string): boolean =>
  (route === 'show' && (method === 'PUT' || method === 'DELETE')) || (route === 'deployments' && method === 'POST') || route === 'deployment';

function matchRoute(path: string): Found | undefined {
  for (const [route, pattern] of ROUTES) {
    const groups = pattern.exec(path)?.groups;
    if (!groups) continue;
    const format = groups.format ?? '';
    if (format !== 'json' && format !== 'xml') throw notFound(`Unknown format .${format}: use .json or .xml`);
    return { route, format, id: groups.id ?? '', deploymentId: groups.deploymentId ?? '' };
  }
  return undefined;
}

function accountFor(c: Context<LegacyEnv>, data: SandboxData): number {
  const key = (c.req.header('x-api-key') ?? c.req.header('api-key') ?? '').trim();
  if (key === '') throw new V2Error(401, V2Titles.apiKeyRequired);
  const accounts = data.keys.get(key);
  if (!accounts) throw new V2Error(401, V2Titles.invalidApiKey);
  const header = c.req.header('x-account-id')?.trim();
  if (header) {
    if (!/^[1-9]\d{0,14}$/.test(header)) throw new V2Error(400, 'Invalid X-Account-Id header: expected a positive integer account id');
    if (!accounts.includes(Number(header))) throw new V2Error(403, `The API key cannot access account ${header}`);
    return Number(header);
  }
  return accounts[0] as number;
}

function listApplications(data: SandboxData, accountId: number, filters: ListFilters, now: number): { body: V2Body; lastPage: number } {
  const { name, host, ids: idSet, language, page } = filters;
  const matching = data.apps
    .filter((app) => app.accountId === accountId)
    .filter((app) => name === undefined || app.name.toLowerCase().includes(name))
    .filter((app) => idSet === undefined || idSet.has(app.id))
    .filter((app) => language === undefined || app.language === language)
    .filter((app) => host === undefined || app.hosts.some((h) => h.name.toLowerCase().includes(host)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((app) => legacyApplication(app, now, !filters.excludeLinks));
  return { body: { applications: items, links: APPLICATION_LINK_TEMPLATES }, lastPage: Math.ceil(matching.length / PAGE_SIZE) };
}

function send(format: V2Format, status: number, body: V2Body, headers: Record<string, string> = {}): Response {
  return new Response(serialise(body, format), { status, headers: { 'content-type': CONTENT_TYPES[format], ...headers } });
}

export function legacyV2Routes(data: SandboxData, now: () => number): Hono<LegacyEnv> {
  const app = new Hono<LegacyEnv>();
  const handle = async (c: Context<LegacyEnv>): Promise<Response> => {
    const format: V2Format = c.req.path.endsWith('.xml') ? 'xml' : 'json';
    try {
      const found = matchRoute(c.req.path);
      if (!found) throw notFound('Unknown v2 resource');
      const allowed = ALLOWED[found.route];
      const method = c.req.method === 'HEAD' && allowed.includes('GET') ? 'GET' : c.req.method;
      if (!allowed.includes(method)) {
        throw new V2Error(405, `Method ${c.req.method} is not allowed here`, { headers: { allow: allowed.join(', ') } });
      }
      const accountId = accountFor(c, data);
      const url = new URL(c.req.url);
      const clock = now();
      const write: WriteRequest = {
        data,
        accountId,
        format: found.format,
        now: clock,
        request: c.req.raw,
        query: url.searchParams,
        shown: (shownApp) => ({ application: legacyApplication(shownApp, clock, true), links: APPLICATION_LINK_TEMPLATES }),
      };
      if (found.route === 'deployments-v0') return await legacyDeploymentV0(write);
      if (found.route === 'mobile-applications') return await legacyCreateApplication(write, 'mobile');
      if (found.route === 'browser-applications') return await legacyCreateApplication(write, 'browser');
      // Writes read their own bodies (JSON, XML or form); reads take parameters as pairs.
      const writing = isWrite(found.route, method);
      const pairs: Pairs = writing
        ? []
        : [...new URLSearchParams(url.search), ...new URLSearchParams((await readFormBody(c.req, c.env?.incoming)) ?? '')];
      if (found.route === 'list') {
        const filters = listFilters(pairs);
        const { body, lastPage } = listApplications(data, accountId, filters, now());
        const link = legacyLink(`${url.origin}${url.pathname}`, pairs, filters.page, lastPage);
        return send(found.format, 200, body, link ? { link } : {});
      }
      const app = /^[1-9]\d{0,14}$/.test(found.id) ? data.apps.find((a) => a.id === Number(found.id) && a.accountId === accountId) : undefined;
      if (!app) throw notFound(V2Titles.applicationNotFound);
      if (writing) {
        if (found.route === 'deployment') return legacyDeleteDeployment(write, app, found.deploymentId);
        if (found.route === 'deployments') return await legacyCreateDeployment(write, app);
        if (method === 'PUT') return await legacyUpdateApplication(write, app);
        return legacyDeleteApplication(write, app);
      }
      const link = (page: number, lastPage: number): string | undefined => legacyLink(`${url.origin}${url.pathname}`, pairs, page, lastPage);
      if (found.route === 'deployments') return legacyDeployments({ ...write, app, page: pageOf(pairs), link });
      if (found.route === 'show') return send(found.format, 200, { application: legacyApplication(app, now(), true), links: APPLICATION_LINK_TEMPLATES });
      const request: MetricRequest = {
        app,
        data,
        format: found.format,
        now: now(),
        param: (key) => valuesOf(pairs, key),
        ifNoneMatch: c.req.header('if-none-match'),
      };
      if (found.route === 'metric-data') return legacyMetricData(request);
      return legacyMetricNames({ ...request, page: pageOf(pairs), link });
    } catch (error) {
      if (!(error instanceof V2Error)) throw error;
      return send(format, error.status, errorBody(error.title), error.headers);
    }
  };
  app.all('/v2/*', handle);
  // Deployments v0 (write-rules §5), the one route outside /v2.
  app.all('/deployments.xml', handle);
  return app;
}
