import type { MiddlewareHandler } from 'hono';
import { LRUCache } from 'lru-cache';
import { KEY_HEADERS, type IdentityOf } from '../caller/identity.ts';
import { NO_KEY_FINGERPRINT, seenCaller } from '../caller/seen-caller.ts';
import type { ParityStore } from '../compare/parity-store.ts';
import type { ModeStrategies } from '../modes/strategies.ts';
import type { GatewayEnv } from '../routes/context.ts';
import { labelOf, matchRoute, type MappingTable } from '../routes/resolved-route.ts';
import { serveTranslation, type Translation } from '../routes/v2-router.ts';

/** Where callers' requests are counted per integration (the /bridge/ page's), and the key fingerprint it groups by. */
export interface CallerCounting {
  sink: Pick<ParityStore, 'noteCaller'>;
  fingerprintOf: IdentityOf;
  /** Did NerdGraph accept this key lately (its accounts lookup: KeyGuard.isAccepted, src/caller/key-guard.ts)? */
  keyAccepted(apiKey: string): boolean;
}

/** Fingerprints of keys the legacy API served lately (passthrough, compare): known good without NerdGraph. */
const LEGACY_SERVED_MAX = 10_000;
const LEGACY_SERVED_TTL_MS = 3_600_000;

/**
 * The routing step: the one place a request's path is matched against the route table. It puts
 * the resolved route (mapping, template, format, path params, method, mode) on the context and
 * serves the request by its mode's strategy (src/modes/strategies.ts) or, translated, by the
 * translation itself (serveTranslation, src/routes/v2-router.ts), handed the route. Each
 * caller's request is also counted for its integration (User-Agent and key fingerprint), once
 * its key is known good: NerdGraph accepted it, or the legacy API served it a 2xx or 3xx. Any
 * other answer (a 404 for an unknown path, a 405, a 400 for a bad parameter, a failed upstream)
 * may have been given before any key check, so a made-up key never makes an integration.
 *
 * The gateway's own requests (a comparison's translation, a dry run, an explained request) never
 * come here: they are handed to the translation directly (src/routes/shadow-translation.ts).
 */
export function createRoutingStep(
  table: MappingTable,
  translation: Translation,
  strategies: ModeStrategies | undefined,
  callers?: CallerCounting,
): MiddlewareHandler<GatewayEnv> {
  const legacyServed = new LRUCache<string, true>({ max: LEGACY_SERVED_MAX, ttl: LEGACY_SERVED_TTL_MS });
  return async (c, next) => {
    const route = matchRoute(table, c.req.path, c.req.method, { readByPost: c.req.method === 'POST' && readableAsQuery(c.req.raw.headers) });
    // No v2 request (/healthz, /bridge/...): the app's own routes serve it.
    if (route === undefined) return next();
    if (strategies !== undefined) route.mode = strategies.modeOf(route, c.req.path);
    c.set('route', route);
    // Counted once answered, and only for a key that was not refused: made-up keys must not
    // fill the page's routes in use; the integrations count only a key known good. Synchronous
    // and memoised (an HMAC per new key): no await is added to the request's path.
    const count = (status: number, byLegacy: boolean): void => {
      if (REFUSED.has(status)) return;
      strategies?.noteUsage(route, c.req.method);
      if (callers === undefined) return;
      const seen = seenCaller(c.req.raw.headers, callers.fingerprintOf);
      if (seen.fingerprint === NO_KEY_FINGERPRINT) return;
      if (byLegacy && status >= 200 && status < 400) legacyServed.set(seen.fingerprint, true);
      else if (!legacyServed.has(seen.fingerprint) && !callers.keyAccepted(keyOf(c.req.raw.headers))) return;
      callers.sink.noteCaller(labelOf(route), c.req.method, seen);
    };
    // Passthrough and compare answer with the legacy API's answer; candidate with the translation's.
    const byLegacy = route.mode === 'passthrough' || route.mode === 'compare';
    let response: Response;
    try {
      if (route.mode === 'translate' || strategies === undefined) response = await serveTranslation(translation, c, route);
      else response = await strategies.serve(c, route);
    } catch (error) {
      // A failed legacy call (passthrough, compare) is thrown to the error handler: still a use.
      count(statusOf(error), false);
      throw error;
    }
    count(response.status, byLegacy);
    return response;
  };
}

/** The status a thrown error will be answered with (the typed HTTP errors carry one), else 500. */
function statusOf(error: unknown): number {
  const status: unknown = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : 500;
}

/**
 * Reads by POST: a POST to a v2 route that has no POST of its own, carrying its parameters as a
 * form body, in the query or not at all, is served as the route's read (matchRoute takes the
 * GET's mapping and parameter schema; the form is parsed as the GET's query, src/v2/form-body.ts).
 * Ansible's community.general.newrelic_deployment looks an application up this way, `POST
 * /v2/applications.json` with `filter[name]=<name>` as its body (urllib's method and form
 * content type for a request with data; plugins/modules/newrelic_deployment.py,
 * get_application_id), and has since 2022 with no report of failure. UNCONFIRMED that live v2
 * serves every list and show route so: the probe `v2-post-on-list-route-is-read` (npm run probe) POSTs such a
 * form to a list route of the legacy API, read-only, and says. A POST with another body (JSON,
 * XML) is no read: it stays the 405 it was. A route with its own POST (deployments, alert
 * policies) keeps it: that is a write.
 *
 * This is whether the body reads as a query: a form body, or none (no content type, a length of
 * 0 or no length, not chunked).
 */
function readableAsQuery(headers: Headers): boolean {
  const type = (headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/x-www-form-urlencoded') return true;
  if (headers.has('transfer-encoding')) return false;
  const length = headers.get('content-length');
  // An empty body that names another type (JSON, XML) is still no form: 405, as a JSON POST.
  return type === '' && (length === null || Number(length) === 0);
}

/** The key as seenCaller reads it (the first key header that is not blank). */
function keyOf(headers: Headers): string {
  return headers.get(KEY_HEADERS[0])?.trim() || headers.get(KEY_HEADERS[1])?.trim() || '';
}

/** A refused key (401) or a key refused the account it asked for (403). */
const REFUSED: ReadonlySet<number> = new Set([401, 403]);
