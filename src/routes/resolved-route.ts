import type { RouteMode } from '../ops/route-modes.ts';
import { methodsOf, type Mapping } from './mapping.ts';
import { createRouteTable, type RouteTable } from '../v2/route-table.ts';

/**
 * A request's route, resolved once by the routing step (src/routing/routing-step.ts) and read
 * from the context by everything after it: the mode strategies (src/modes/), the translation
 * (src/routes/v2-router.ts) and, for the request it explains, /bridge/explain. Nothing matches
 * the route table again for the same request; the gateway's own requests (a comparison's
 * translation, a dry run, an explained request) carry the route of the request they serve.
 */
export interface ResolvedRoute {
  /** The method as routed: HEAD is the GET it abbreviates. */
  method: string;
  /** The path's format suffix as sent (unchecked); undefined when no template matched. */
  format: string | undefined;
  /** The matched template; when the method is not served, the path's first one; undefined when none matched. */
  template: string | undefined;
  /** The mapping serving this method and template; undefined for an unknown resource or method. */
  mapping: Mapping | undefined;
  /** Path params as they appear in the path (not percent-decoded). */
  pathParams: Readonly<Record<string, string>>;
  /** Every method the path's templates serve (405's Allow header). */
  allow: readonly string[];
  /** True when only passthrough mappings serve it (no rule can make it translated). */
  passthroughOnly: boolean;
  /** True when its mapping is translated only where a specific ROUTE_MODES rule asks (mapping.passthroughByDefault). */
  passthroughByDefault: boolean;
  /** How it is served (ROUTE_MODES); always `translate` for the gateway's own requests and without modes. */
  mode: RouteMode;
  /** A POST served as the route's read (src/routing/routing-step.ts): `method` is GET, the request's own is POST. */
  postAsRead?: true;
}

export type MappingTable = RouteTable<Mapping>;

/** The route table of these mappings: built once per app, the only thing that matches a path. */
export function mappingTable(mappings: readonly Mapping[]): MappingTable {
  return createRouteTable(mappings.map((mapping) => ({ template: mapping.route, methods: methodsOf(mapping), value: mapping })));
}

/**
 * Matches `path` once for `method` (HEAD routed as GET). Undefined when it is no v2 request at
 * all (no template matched, not under /v2/); every v2 route is under /v2/ except the
 * Deployments v0 API (`POST /deployments.xml`). The mode is `translate` until the routing step picks one.
 */
export function matchRoute(table: MappingTable, path: string, method: string, options: { readByPost?: boolean } = {}): ResolvedRoute | undefined {
  let routeMethod = method === 'HEAD' ? 'GET' : method;
  const matched = table.match(path);
  if (matched === undefined) {
    if (!path.startsWith('/v2/')) return undefined;
    return { method: routeMethod, format: undefined, template: undefined, mapping: undefined, pathParams: {}, allow: [], passthroughOnly: false, passthroughByDefault: false, mode: 'translate' };
  }
  let hit = matched.entries.find((entry) => entry.methods.includes(routeMethod));
  // A POST the caller may mean as the read (src/routing/routing-step.ts decides): the GET's, when the path has no POST.
  const postAsRead = hit === undefined && routeMethod === 'POST' && options.readByPost === true ? matched.entries.find((entry) => entry.methods.includes('GET')) : undefined;
  if (postAsRead !== undefined) {
    hit = postAsRead;
    routeMethod = 'GET';
  }
  return {
    method: routeMethod,
    format: matched.format,
    template: hit?.template ?? matched.entries[0]?.template,
    mapping: hit?.value,
    pathParams: hit?.params ?? {},
    allow: matched.allow,
    passthroughOnly: hit ? hit.value.kind === 'passthrough' : matched.entries.every((entry) => entry.value.kind === 'passthrough'),
    passthroughByDefault: hit !== undefined && hit.value.kind !== 'passthrough' && hit.value.passthroughByDefault !== undefined,
    mode: 'translate',
    ...(postAsRead !== undefined ? { postAsRead: true as const } : {}),
  };
}

/** The route's label for metrics, logs and comparisons: its template, or `unmapped`. */
export function labelOf(route: ResolvedRoute): string {
  return route.template ?? 'unmapped';
}

/** A format the gateway answers in. */
export function isServedFormat(format: string | undefined): format is 'json' | 'xml' {
  return format === 'json' || format === 'xml';
}
