/**
 * The sandbox's legacy REST v2 face: the answers v2 itself would give, computed straight from
 * the synthetic data by the REST v2 rules, with no NerdGraph and no gateway mapping involved.
 * It is the reference the gateway is compared against, so it implements routing, parameter
 * parsing, validation, filtering, paging, the Link header, the body writers and errors on its
 * own (wire.ts, titles.ts); it shares with the gateway only facts equal by definition (the
 * retired route list, facts/v2-routes.ts).
 *
 * This module is the dispatcher only: 404 for an unknown path or format, 405 with Allow, the
 * caller's account (401), parameters as pairs; the routes themselves are in routes.ts.
 */
import { Hono, type Context } from 'hono';
import type { SandboxData } from '../model.ts';
import { APPLICATION_LINK_TEMPLATES, accountFor, legacyApplication, legacyLink, send, type LegacyRoute, type Pairs } from './common.ts';
import { LEGACY_ROUTES } from './routes.ts';
import { countWrite, isLegacyWrite } from '../write-counts.ts';
import { V2Error, errorBody, notFound, readFormBody, type V2Format } from './wire.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

interface Compiled {
  route: LegacyRoute;
  pattern: RegExp;
  names: string[];
}

/**
 * A v2 path template as a regex: the format is the path's suffix (rest-v2.md §3.1), so
 * `/v2/applications/{id}.{format}` reads `/v2/applications/12.json` as id `12`, format `json`;
 * a template may end in a literal extension instead (the v0 `/deployments.xml`). A `{param}`
 * is one non-empty path segment, kept as sent (percent-encoded).
 */
function compile(route: LegacyRoute): Compiled {
  const names: string[] = [];
  const escape = (text: string): string => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  const body = route.template.endsWith('.{format}') ? route.template.slice(0, -'.{format}'.length) : route.template;
  const source = body
    .split(/(\{[a-z_]+\})/)
    .map((piece) => {
      const name = /^\{([a-z_]+)\}$/.exec(piece)?.[1];
      if (name === undefined) return escape(piece);
      names.push(name);
      return '([^/]+)';
    })
    .join('');
  const suffix = route.template.endsWith('.{format}') ? '\\.([^./]+)' : '()';
  return { route, names, pattern: new RegExp(`^${source}${suffix}$`) };
}

interface Matched {
  format: string;
  hits: Array<{ route: LegacyRoute; params: Record<string, string> }>;
  /** Every method of the matching templates, in table order, once each (405's Allow). */
  allow: string[];
}

function matcher(routes: readonly LegacyRoute[]): (path: string) => Matched | undefined {
  const compiled = routes.map(compile);
  return (path) => {
    const hits: Matched['hits'] = [];
    let format = '';
    for (const { route, pattern, names } of compiled) {
      const match = pattern.exec(path);
      if (!match) continue;
      const params = Object.create(null) as Record<string, string>;
      names.forEach((name, i) => (params[name] = match[i + 1] as string));
      // A literal extension is the format (`/deployments.xml` answers XML).
      format = match[names.length + 1] || route.template.slice(route.template.lastIndexOf('.') + 1);
      hits.push({ route, params });
    }
    if (hits.length === 0) return undefined;
    return { format, hits, allow: [...new Set(hits.flatMap((hit) => hit.route.methods))] };
  };
}

/**
 * A POST with a form body (or none) to a route with no POST of its own is answered as the
 * route's GET. The evidence: Ansible's community.general.newrelic_deployment looks an
 * application up with `fetch_url(module, url, data=data, headers=headers)`, url
 * `https://api.newrelic.com/v2/applications.json` and data `filter[name]=<app_name>`
 * (plugins/modules/newrelic_deployment.py, get_application_id, lines 146-153 at
 * ade4f3ecc1409b45b843660721178c9992bc3bcb): urllib sends a request with data as a POST with
 * `Content-Type: application/x-www-form-urlencoded`, and the module reads the answer's
 * `applications` as the list's. It has done so since 2022 with no report of failure. No New
 * Relic page says so (UNCONFIRMED; the probe `v2-post-on-list-route-is-read` asks the real API). A POST
 * with any other body is not a read: 405 as before.
 */
function readByPost(request: Request, method: string, found: Matched): Matched['hits'][number] | undefined {
  if (method !== 'POST') return undefined;
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  const length = request.headers.get('content-length');
  const noBody = !request.headers.has('transfer-encoding') && type === '' && (length === null || Number(length) === 0);
  if (type !== 'application/x-www-form-urlencoded' && !noBody) return undefined;
  return found.hits.find((entry) => entry.route.methods.includes('GET') && entry.route.body !== 'own');
}

/** Under @hono/node-server the raw request is there, for GET bodies. */
type LegacyEnv = { Bindings: { incoming?: AsyncIterable<Buffer> } };

export interface LegacyFaceOptions {
  /** Per-call jitter on the newest metric timeslice (metrics.ts): off by default. */
  jitter?: () => number;
}

export function legacyV2Routes(
  data: SandboxData,
  now: () => number,
  routes: readonly LegacyRoute[] = LEGACY_ROUTES,
  options: LegacyFaceOptions = {},
): Hono<LegacyEnv> {
  const match = matcher(routes);
  const app = new Hono<LegacyEnv>();
  // Every path the table knows is served, whatever its prefix; other /v2 paths get v2's 404.
  const handle = async (c: Context<LegacyEnv>, next: () => Promise<void>): Promise<Response | void> => {
    const errorFormat: V2Format = c.req.path.endsWith('.xml') ? 'xml' : 'json';
    try {
      const found = match(c.req.path);
      if (!found && !c.req.path.startsWith('/v2/')) return next();
      if (!found) throw notFound('Unknown v2 resource');
      const format = found.format;
      if (format !== 'json' && format !== 'xml') throw notFound(`Unknown format .${format}: use .json or .xml`);
      const method = c.req.method === 'HEAD' && found.allow.includes('GET') ? 'GET' : c.req.method;
      // Behaviour legacyPostServesRead (behaviours.ts, on by default): a POST with a form body, or
      // none, to a route with no POST of its own is served as its GET (readByPost).
      const hit =
        found.hits.find((entry) => entry.route.methods.includes(method)) ??
        (data.behaviours.legacyPostServesRead === true ? readByPost(c.req.raw, method, found) : undefined);
      if (!hit) throw new V2Error(405, REQUEST_RULE_TITLES.methodNotAllowed(c.req.method), { headers: { allow: found.allow.join(', ') } });
      const accountId = accountFor(c.req.raw.headers, data);
      const url = new URL(c.req.url);
      const clock = now();
      // Writes read their own bodies (JSON, XML or form); reads take parameters as pairs.
      const params: Pairs =
        hit.route.body === 'own'
          ? []
          : [...new URLSearchParams(url.search), ...new URLSearchParams((await readFormBody(c.req.raw, c.env?.incoming)) ?? '')];
      const response = await hit.route.handler({
        data,
        accountId,
        format,
        path: hit.params,
        params,
        link: (page, lastPage) => legacyLink(`${url.origin}${url.pathname}`, params, page, lastPage),
        now: clock,
        request: c.req.raw,
        query: url.searchParams,
        ifNoneMatch: c.req.header('if-none-match'),
        shown: (shownApp) => ({ application: legacyApplication(shownApp, data, clock, true), links: APPLICATION_LINK_TEMPLATES }),
        ...(options.jitter && { jitter: options.jitter }),
      });
      // An executed write (2xx) counts once, whichever face ran it (write-counts.ts).
      if (isLegacyWrite(method, hit.route.body === 'own') && response.status >= 200 && response.status < 300) {
        countWrite(data.writes.executed, 'legacy', `${method} ${hit.route.template}`);
      }
      return response;
    } catch (error) {
      if (!(error instanceof V2Error)) throw error;
      return send(errorFormat, error.status, errorBody(error.title, error.messages), error.headers);
    }
  };
  app.use('*', handle);
  return app;
}
