/**
 * What every legacy route shares: the request its handler receives, parameters as ordered pairs
 * and their v2 parsing rules (text, ids, page), the Link header, the reply writer, the caller's
 * account, and the v2 application object with its link templates.
 */
import { V2Titles } from './titles.ts';
import { CONTENT_TYPES, V2Error, isoSeconds, notFound, serialise, type V2Body, type V2Format } from './wire.ts';
import { currentHosts } from '../hosts.ts';
import { browserConfigured } from '../browser-loader.ts';
import type { SandboxApp, SandboxData } from '../model.ts';
import { findMetric, rowsOf } from '../timeslices.ts';
import { APPLICATION_LINKS } from '../../facts/v2-values.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/** Request parameters as ordered [key, value] pairs: query string first, then a form body. */
export type Pairs = Array<[string, string]>;

/** What a legacy route's handler receives: the request already routed, authorised and parsed. */
export interface LegacyRequest {
  data: SandboxData;
  /** The caller's account, from the key (and X-Account-Id). */
  accountId: number;
  format: V2Format;
  /** Path params by template name, raw as they appear in the path (`{id}` -> `path.id`). */
  path: Readonly<Record<string, string>>;
  /** Query string then form body, in order; empty for routes that read their own body. */
  params: Pairs;
  /** v2's Link header for this request at `page` of `lastPage`. */
  link(page: number, lastPage: number): string | undefined;
  /** The request clock, epoch ms. */
  now: number;
  /** The raw request, whose body the write routes read themselves (bounded). */
  request: Request;
  /** The query string alone (the v0 deployment route takes its fields from there too). */
  query: URLSearchParams;
  ifNoneMatch: string | undefined;
  /** What GET /v2/applications/{id} answers for the app: `{application, links}`. */
  shown(app: SandboxApp): V2Body;
  /** With legacy jitter on: a fresh draw in [0, 1) per call, for the newest metric timeslice. */
  jitter?: () => number;
}

/** One row of the legacy route table: adding a route is one of these and its handler. */
export interface LegacyRoute {
  /** A v2 path template (matched by face.ts), e.g. `/v2/applications/{id}/metrics.{format}`. */
  template: string;
  /** The methods it answers; HEAD rides along with GET. */
  methods: readonly string[];
  /** `own`: the handler reads the body itself (writes); otherwise a form body joins `params`. */
  body?: 'own';
  handler(req: LegacyRequest): Response | Promise<Response>;
}

export const HEALTH_BY_SEVERITY: Record<string, string> = {
  CRITICAL: 'red',
  WARNING: 'orange',
  NOT_ALERTING: 'green',
  NOT_CONFIGURED: 'unknown',
};

/**
 * The app's browser apdex over the 10 whole minutes before now, from its EndUser/Apdex rows:
 * (S + T/2) / (S + T + F), S in count, T in total, F in totalExclusive (rest-v2.md §2.2: Apdex
 * timeslices keep the satisfied, tolerating and frustrated counts there; v2 summaries are
 * 10-minute averages, rest-v2.md §3.5), 2 decimals; null without samples.
 */
function endUserApdexScore(app: SandboxApp, data: SandboxData, now: number): number | null {
  const metric = findMetric(app, data, 'EndUser/Apdex');
  if (!metric) return null;
  const until = Math.floor(now / 60_000) * 60_000;
  const sums = { s: 0, t: 0, f: 0 };
  for (const row of rowsOf(app, metric, until - 10 * 60_000, until, now)) {
    sums.s += row.count;
    sums.t += row.total;
    sums.f += row.totalExclusive;
  }
  const samples = sums.s + sums.t + sums.f;
  return samples === 0 ? null : Math.round(Number(((sums.s + sums.t / 2) / samples).toPrecision(12)) * 100) / 100;
}

/** The full v2 application object, as REST v2 rendered it. */
export function legacyApplication(app: SandboxApp, data: SandboxData, now: number, withLinks: boolean): V2Body {
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
      host_count: currentHosts(app).length,
      instance_count: currentHosts(app).reduce((n, h) => n + h.instances.length, 0),
      // v2 sent it (rest-v2-shapes.md §1 from client-go's capture; swagger AppSummaryResponse):
      // "concurrent instances of background applications" (rest-v2.md §3.3). The world keeps no
      // such count, so the key holds null.
      concurrent_instance_count: null,
    };
  }
  if (app.reporting && app.browser) {
    body.end_user_summary = {
      response_time: app.browser.pageLoadTimeSeconds,
      throughput: app.browser.pageLoadThroughput,
      apdex_target: app.browser.apdexTarget,
      // Browser monitoring just turned on (writes.ts) has measured no page views: no score yet.
      apdex_score: app.browser.pageLoadThroughput === 0 ? null : endUserApdexScore(app, data, now),
    };
  }
  body.settings = {
    app_apdex_threshold: app.apdexTarget,
    end_user_apdex_threshold: app.browser?.apdexTarget ?? 7,
    // A setting: the configured loader, traffic or not (browser-loader.ts).
    enable_real_user_monitoring: browserConfigured(app),
    use_server_side_config: app.serverSideConfig,
  };
  if (withLinks) {
    // Hosts and instances that report now: a non-reporting app links none (hosts.ts).
    const hosts = currentHosts(app);
    const links: V2Body = {
      application_instances: hosts.flatMap((h) => h.instances.map((i) => i.id)).sort((a, b) => a - b),
      servers: [],
      application_hosts: hosts.map((h) => h.id).sort((a, b) => a - b),
    };
    // rest-v2-shapes.md §1 links: `alert_policy` int (client-go needs an int when present); an app
    // with no policy holds null (rest-v2.md §3.3: "may be missing"; null keeps the key).
    links.alert_policy = app.alertPolicyId;
    body.links = links;
  }
  return body;
}

/** v2's link templates beside application data (facts/v2-values.ts; New Relic's own singular `/v2/application/`). */
export const APPLICATION_LINK_TEMPLATES: V2Body = APPLICATION_LINKS;

const baseKey = (key: string): string => key.replace(/\[\d*\]$/, '');

export function valuesOf(pairs: Pairs, key: string): string[] {
  return pairs.filter(([k]) => baseKey(k) === key).map(([, v]) => v);
}

export const invalid = (title: string): V2Error => new V2Error(422, title);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function text(pairs: Pairs, key: string): string | undefined {
  const value = valuesOf(pairs, key).at(-1);
  if (value === undefined || value === '') return undefined;
  if (value.length > 255 || CONTROL.test(value)) {
    throw invalid(`Invalid parameter ${key}: expected text of at most 255 characters without control characters`);
  }
  return value;
}

export function ids(pairs: Pairs, key: string): number[] | undefined {
  const values = valuesOf(pairs, key);
  if (values.length === 0) return undefined;
  const found = values.flatMap((v) => v.split(',')).map((piece) => piece.trim()).filter((piece) => piece !== '');
  for (const piece of found) {
    if (!/^[1-9][0-9]{0,14}$/.test(piece)) throw invalid(REQUEST_RULE_TITLES.idList(key));
  }
  if (found.length > 1000) throw invalid(`Invalid parameter ${key}: at most 1000 ids are accepted`);
  return found.map(Number);
}

/** The `page` parameter of every paged listing (applications, metric names). */
export function pageOf(pairs: Pairs): number {
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
export function legacyLink(base: string, pairs: Pairs, page: number, lastPage: number): string | undefined {
  const kept = pairs.filter(([k]) => !['page', 'api_key', 'api-key', 'x-api-key', 'apikey'].includes(baseKey(k).toLowerCase()));
  const url = (p: number): string =>
    `${base}?${[...kept, ['page', String(p)] as [string, string]].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
  const entries: string[] = [];
  if (page > 1 && lastPage >= 1) entries.push(`<${url(1)}>; rel="first"`, `<${url(Math.min(page - 1, lastPage))}>; rel="prev"`);
  if (page < lastPage) entries.push(`<${url(page + 1)}>; rel="next"`, `<${url(lastPage)}>; rel="last"`);
  return entries.length > 0 ? entries.join(', ') : undefined;
}

/** The caller's account: the key's first, or the X-Account-Id the key may use. */
export function accountFor(headers: Headers, data: SandboxData): number {
  const key = (headers.get('x-api-key') ?? headers.get('api-key') ?? '').trim();
  if (key === '') throw new V2Error(401, V2Titles.apiKeyRequired);
  const accounts = data.keys.get(key);
  if (!accounts) throw new V2Error(401, V2Titles.invalidApiKey);
  const header = headers.get('x-account-id')?.trim();
  if (header) {
    if (!/^[1-9]\d{0,14}$/.test(header)) throw new V2Error(400, REQUEST_RULE_TITLES.accountHeader);
    if (!accounts.includes(Number(header))) throw new V2Error(403, `The API key cannot access account ${header}`);
    return Number(header);
  }
  return accounts[0] as number;
}

export function send(format: V2Format, status: number, body: V2Body, headers: Record<string, string> = {}): Response {
  return new Response(serialise(body, format), { status, headers: { 'content-type': CONTENT_TYPES[format], ...headers } });
}

/** The application `{id}` names in the caller's account, or v2's 404. */
export function applicationOf(req: LegacyRequest, key = 'id'): SandboxApp {
  const id = req.path[key] ?? '';
  const app = /^[1-9]\d{0,14}$/.test(id) ? req.data.apps.find((a) => a.id === Number(id) && a.accountId === req.accountId) : undefined;
  if (!app) throw notFound(V2Titles.applicationNotFound);
  return app;
}

/** What v2 sent with its ETag'd reads. */
export const CACHE_CONTROL = 'max-age=0, private, must-revalidate';

/** If-None-Match compares weakly (RFC 9110 §13.1.2): a `W/` prefix is ignored, `*` matches. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}
