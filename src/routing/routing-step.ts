import type { MiddlewareHandler } from 'hono';
import type { IdentityOf } from '../caller/identity.ts';
import { seenCaller } from '../caller/seen-caller.ts';
import type { ParityStore } from '../compare/parity-store.ts';
import type { ModeStrategies } from '../modes/strategies.ts';
import type { GatewayEnv } from '../routes/context.ts';
import { labelOf, matchRoute, type MappingTable } from '../routes/resolved-route.ts';

/** Where callers' requests are counted per integration (the /bridge/ page's), and the key fingerprint it groups by. */
export interface CallerCounting {
  sink: Pick<ParityStore, 'noteCaller'>;
  fingerprintOf: IdentityOf;
}

/**
 * The routing step: the one place a request's path is matched against the route table. It puts
 * the resolved route (mapping, template, format, path params, method, mode) on the context and
 * serves the request by its mode's strategy (src/modes/strategies.ts); `translate` is the
 * router after it (src/routes/v2-router.ts), which reads the route from the context. Each
 * caller's request is also counted for its integration (User-Agent and key fingerprint).
 *
 * The gateway's own requests (a comparison's translation, a dry run, an explained request)
 * arrive with the route of the request they serve already on the context (src/app.ts reads it
 * off the request, src/modes/internal.ts), and are always translated.
 */
export function createRoutingStep(table: MappingTable, strategies: ModeStrategies | undefined, callers?: CallerCounting): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    // Read from the context: bodyLimit may have replaced c.req.raw (a POST without a length).
    if (c.get('internal') === true) {
      if (c.get('route') === undefined) {
        const route = matchRoute(table, c.req.path, c.req.method);
        if (route !== undefined) c.set('route', route);
      }
      return next();
    }
    const route = matchRoute(table, c.req.path, c.req.method);
    // No v2 request (/healthz, /bridge/...): the app's own routes serve it.
    if (route === undefined) return next();
    if (strategies !== undefined) route.mode = strategies.modeOf(route, c.req.path);
    c.set('route', route);
    // Counted once answered, and only for a key that was not refused: made-up keys must not
    // fill the page's integrations nor its routes in use. Synchronous and memoised (an HMAC
    // per new key): no await is added to the request's path.
    const count = (status: number): void => {
      if (REFUSED.has(status)) return;
      strategies?.noteUsage(route, c.req.method);
      if (callers !== undefined) callers.sink.noteCaller(labelOf(route), c.req.method, seenCaller(c.req.raw.headers, callers.fingerprintOf));
    };
    let response: Response | void = undefined;
    try {
      if (route.mode === 'translate' || strategies === undefined) await next();
      else response = await strategies.serve(c, route, next);
    } catch (error) {
      // A failed legacy call (passthrough, compare) is thrown to the error handler: still a use.
      count(statusOf(error));
      throw error;
    }
    count((response ?? c.res).status);
    return response;
  };
}

/** The status a thrown error will be answered with (the typed HTTP errors carry one), else 500. */
function statusOf(error: unknown): number {
  const status: unknown = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof status === 'number' ? status : 500;
}

/** A refused key (401) or a key refused the account it asked for (403). */
const REFUSED: ReadonlySet<number> = new Set([401, 403]);
