import type { RouteMode } from '../ops/route-modes.ts';
import type { GatewayContext } from '../routes/context.ts';
import type { Mapping } from '../routes/mapping.ts';
import { isServedFormat, labelOf, type ResolvedRoute } from '../routes/resolved-route.ts';
import { serveTranslation } from '../routes/v2-router.ts';
import { hasReadBody } from './caller-request.ts';
import { createModeContext, type ModeDeps } from './mode-context.ts';
import { modeResolverFor } from './mode-resolver.ts';
import { serveCandidate } from './serve-candidate.ts';
import { serveCompare } from './serve-compare.ts';
import { servePassthrough } from './serve-passthrough.ts';

/**
 * The migration modes as per-route strategies (ROUTE_MODES): `translate` (the translation,
 * serveTranslation), `passthrough` (forwarded to the legacy REST API), `compare` (the legacy API answers;
 * the translation is compared off the path) or `candidate` (the translation answers; the legacy
 * API is compared off the path). The routing step (src/routing/routing-step.ts) resolves the
 * route once, asks modeOf, and hands every mode but `translate` to serve.
 */
export interface ModeStrategies {
  /** The caller's request's mode by the rules. */
  modeOf(route: ResolvedRoute, path: string): RouteMode;
  /** Counts a served request in the usage (the parity page's "routes in use"), by its route's mode. */
  noteUsage(route: ResolvedRoute, method: string): void;
  /** Serves a request in its route's mode: the caller's answer. */
  serve(c: GatewayContext, route: ResolvedRoute): Promise<Response>;
}

/** Builds the strategies for these mappings; throws ConfigError for rules they make impossible. */
export function createModeStrategies(deps: ModeDeps, mappings: readonly Mapping[]): ModeStrategies {
  const resolver = modeResolverFor(deps.options.rules, mappings);
  const modes = createModeContext(deps);
  return {
    modeOf(route, path) {
      // HEAD is GET without the body, for the rules as for the router.
      const known = route.template === undefined ? undefined : { template: route.template, passthroughOnly: route.passthroughOnly, passthroughByDefault: route.passthroughByDefault };
      return resolver.modeOf({ method: route.method, path, route: known });
    },
    noteUsage(route, method) {
      deps.options.sink.noteUsage(labelOf(route), method, route.mode);
    },
    async serve(c, route) {
      const label = labelOf(route);
      // The translation in the caller's own context: its answer is the caller's.
      const translate = (): Promise<Response> => serveTranslation(deps.translation, c, route);
      if (route.mode === 'translate') return translate();
      if (route.mode === 'passthrough') {
        c.set('routeLabel', label);
        return servePassthrough(modes, c);
      }
      // Comparing needs a translation: without one (an unknown route, method or format) compare
      // answers from the legacy API as it promises, and candidate with the router's v2 error.
      // HEAD (no body to compare) and a GET carrying a body (the shadow calls could not replay it)
      // are served the same way, not compared.
      const mapping = comparableMapping(c, route);
      if (mapping === undefined) {
        if (route.mode === 'candidate') return translate();
        c.set('routeLabel', label);
        return servePassthrough(modes, c);
      }
      c.set('routeLabel', label);
      return route.mode === 'compare' ? serveCompare(modes, c, route, mapping, label) : serveCandidate(modes, c, mapping, label, translate);
    },
  };
}

/** The mapping to compare against, when the request can be compared at all. */
function comparableMapping(c: GatewayContext, route: ResolvedRoute): Mapping | undefined {
  if (route.mapping === undefined || !isServedFormat(route.format)) return undefined;
  if (c.req.method === 'HEAD' || hasReadBody(c)) return undefined;
  return route.mapping;
}
