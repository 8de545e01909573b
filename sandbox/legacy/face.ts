/**
 * The sandbox's legacy REST v2 face: the answers v2 itself would give, computed straight from
 * the synthetic data by the REST v2 rules, with no NerdGraph and no gateway mapping involved.
 * It is the reference the gateway is compared against, so it implements routing, parameter
 * parsing, validation, filtering, paging and the Link header on its own; it shares with the
 * gateway only the v2 wire (src/v2/): body writers, timestamps, the route table, and the error
 * type with its titles.
 *
 * This module is the dispatcher only: 404 for an unknown path or format, 405 with Allow, the
 * caller's account (401), parameters as pairs; the routes themselves are in routes.ts.
 */
import { Hono, type Context } from 'hono';
import { V2Error, notFound } from '../../src/v2/errors.ts';
import { errorBody, type V2Format } from '../../src/v2/format.ts';
import { readFormBody } from '../../src/v2/form-body.ts';
import { createRouteTable } from '../../src/v2/route-table.ts';
import type { SandboxData } from '../model.ts';
import { APPLICATION_LINK_TEMPLATES, accountFor, legacyApplication, legacyLink, send, type LegacyRoute, type Pairs } from './common.ts';
import { LEGACY_ROUTES } from './routes.ts';
import { countWrite, isLegacyWrite } from '../write-counts.ts';

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
  const table = createRouteTable(routes.map((route) => ({ template: route.template, methods: route.methods, value: route })));
  const app = new Hono<LegacyEnv>();
  // Every path the table knows is served, whatever its prefix; other /v2 paths get v2's 404.
  const handle = async (c: Context<LegacyEnv>, next: () => Promise<void>): Promise<Response | void> => {
    const errorFormat: V2Format = c.req.path.endsWith('.xml') ? 'xml' : 'json';
    try {
      const found = table.match(c.req.path);
      if (!found && !c.req.path.startsWith('/v2/')) return next();
      if (!found) throw notFound('Unknown v2 resource');
      const format = found.format;
      if (format !== 'json' && format !== 'xml') throw notFound(`Unknown format .${format}: use .json or .xml`);
      const method = c.req.method === 'HEAD' && found.allow.includes('GET') ? 'GET' : c.req.method;
      const hit = found.entries.find((entry) => entry.methods.includes(method));
      if (!hit) throw new V2Error(405, `Method ${c.req.method} is not allowed here`, { headers: { allow: found.allow.join(', ') } });
      const accountId = accountFor(c.req.raw.headers, data);
      const url = new URL(c.req.url);
      const clock = now();
      // Writes read their own bodies (JSON, XML or form); reads take parameters as pairs.
      const params: Pairs =
        hit.value.body === 'own'
          ? []
          : [...new URLSearchParams(url.search), ...new URLSearchParams((await readFormBody(c.req, c.env?.incoming)) ?? '')];
      const response = await hit.value.handler({
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
        shown: (shownApp) => ({ application: legacyApplication(shownApp, clock, true), links: APPLICATION_LINK_TEMPLATES }),
        ...(options.jitter && { jitter: options.jitter }),
      });
      // An executed write (2xx) counts once, whichever face ran it (write-counts.ts).
      if (isLegacyWrite(method, hit.value.body === 'own') && response.status >= 200 && response.status < 300) {
        countWrite(data.writes.executed, 'legacy', `${method} ${hit.template}`);
      }
      return response;
    } catch (error) {
      if (!(error instanceof V2Error)) throw error;
      return send(errorFormat, error.status, errorBody(error.title), error.headers);
    }
  };
  app.use('*', handle);
  return app;
}
