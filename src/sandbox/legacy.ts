import { Hono, type Context } from 'hono';
import { APPLICATION_TOP_LINKS } from '../../mappings/shared/application.ts';
import { parseApplicationListParams } from '../../mappings/applications.list.ts';
import { V2Error, V2Titles, notFound } from '../errors.ts';
import { errorBody, serialise, CONTENT_TYPES, type V2Body, type V2Format } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';
import { ID_PATTERN, parsePage, parseText, parseV2Params, type V2Params } from '../v2/params.ts';
import { isoSeconds } from '../v2/time.ts';
import type { SandboxApp, SandboxData } from './model.ts';

/**
 * The sandbox's legacy REST v2 face: the answers v2 itself would give, computed straight from
 * the synthetic data by the REST v2 rules, with no NerdGraph and no gateway mapping involved.
 * It is the reference the gateway is compared against. It shares only wire-level helpers with
 * the gateway (parameter spellings, the Link header format, the XML writer, error titles).
 */
const PAGE_SIZE = 200;

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

type Found = { format: V2Format } & ({ route: 'list' } | { route: 'show'; id: string });

function matchRoute(path: string): Found | undefined {
  const list = /^\/v2\/applications\.([^./]+)$/.exec(path);
  const show = /^\/v2\/applications\/([^/]+?)\.([^./]+)$/.exec(path);
  const format = (list?.[1] ?? show?.[2]) as string | undefined;
  if (format === undefined) return undefined;
  if (format !== 'json' && format !== 'xml') throw notFound(`Unknown format .${format}: use .json or .xml`);
  return list ? { route: 'list', format } : { route: 'show', id: show?.[1] ?? '', format };
}

function accountFor(c: Context, data: SandboxData): number {
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

function listApplications(data: SandboxData, accountId: number, params: V2Params, now: number): { body: V2Body; page: number; lastPage: number } {
  // filter[host] is a real v2 filter (the gateway refuses it); validate the rest the v2 way.
  const host = parseText(params, 'filter[host]')?.toLowerCase();
  const rest = new Map(params);
  rest.delete('filter[host]');
  const filters = parseApplicationListParams(rest);
  const page = parsePage(params);
  const excludeLinks = ['true', '1'].includes((params.get('exclude_links')?.at(-1) ?? '').toLowerCase());
  const ids = filters.ids ? new Set(filters.ids) : undefined;
  const name = filters.name?.toLowerCase();
  const matching = data.apps
    .filter((app) => app.accountId === accountId)
    .filter((app) => name === undefined || app.name.toLowerCase().includes(name))
    .filter((app) => ids === undefined || ids.has(app.id))
    .filter((app) => filters.language === undefined || app.language === filters.language)
    .filter((app) => host === undefined || app.hosts.some((h) => h.name.toLowerCase().includes(host)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((app) => legacyApplication(app, now, !excludeLinks));
  return { body: { applications: items, links: APPLICATION_TOP_LINKS }, page, lastPage: Math.ceil(matching.length / PAGE_SIZE) };
}

function send(format: V2Format, status: number, body: V2Body, headers: Record<string, string> = {}): Response {
  return new Response(serialise(body, format), { status, headers: { 'content-type': CONTENT_TYPES[format], ...headers } });
}

export function legacyV2Routes(data: SandboxData, now: () => number): Hono {
  const app = new Hono();
  app.all('/v2/*', async (c) => {
    const format: V2Format = c.req.path.endsWith('.xml') ? 'xml' : 'json';
    try {
      const found = matchRoute(c.req.path);
      if (!found) throw notFound('Unknown v2 resource');
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
        throw new V2Error(405, `Method ${c.req.method} is not allowed here`, { headers: { allow: 'GET' } });
      }
      const accountId = accountFor(c, data);
      const url = new URL(c.req.url);
      const contentType = c.req.header('content-type') ?? '';
      const form = contentType.startsWith('application/x-www-form-urlencoded') ? await c.req.text() : undefined;
      const params = parseV2Params(url.search.slice(1), form);
      if (found.route === 'list') {
        const { body, page, lastPage } = listApplications(data, accountId, params, now());
        const link = linkHeader(c.req.url, page, lastPage);
        return send(found.format, 200, body, link ? { link } : {});
      }
      const app = ID_PATTERN.test(found.id) ? data.apps.find((a) => a.id === Number(found.id) && a.accountId === accountId) : undefined;
      if (!app) throw notFound(V2Titles.applicationNotFound);
      return send(found.format, 200, { application: legacyApplication(app, now(), true), links: APPLICATION_TOP_LINKS });
    } catch (error) {
      if (!(error instanceof V2Error)) throw error;
      return send(format, error.status, errorBody(error.title), error.headers);
    }
  });
  return app;
}
