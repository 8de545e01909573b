import type { RouteMode } from '../ops/route-modes.ts';
import { ConfigError } from '../ops/config.ts';
import { methodsOf, type Mapping } from '../routes/mapping.ts';
import { formatRouteModes, globMatcher, isCatchAll, stemOf, type ModeRule } from '../ops/route-modes.ts';

/**
 * Picks the mode of a request from the ROUTE_MODES rules. First matching rule wins, in this
 * order: the user's specific rules, then the built-in defaults (the routes of passthrough
 * mappings, and translated routes passed through by default, are passthrough), then the
 * user's catch-all rules (`*=...`), then `translate`.
 *
 * A passthrough-only route has no translation, so no rule can make it translated: a specific
 * rule that matches only such routes with another mode is a configuration error (reported at
 * start-up); a broader rule that also matches translated routes is skipped for them.
 */
export interface RouteInfo {
  /** The v2 template, e.g. `/v2/applications/{id}.{format}`. */
  template: string;
  method: string;
  /** True when the only mapping of this method and template is a passthrough one. */
  passthroughOnly: boolean;
  /** True when its translation is served only where a specific rule asks for it (mapping.passthroughByDefault). */
  passthroughByDefault?: boolean;
}

/** What the routing step knows of a request: its method, its path, and the route it matched (if any). */
export interface ModeQuery {
  method: string;
  path: string;
  route: Pick<RouteInfo, 'template' | 'passthroughOnly' | 'passthroughByDefault'> | undefined;
}

export interface ModeResolver {
  modeOf(query: ModeQuery): RouteMode;
  /** The rules as configured (for logs and reports). */
  readonly rules: readonly ModeRule[];
}

interface CompiledRule {
  rule: ModeRule;
  matches(method: string, texts: readonly string[]): boolean;
}

/** A format suffix in a pattern (`.json`, `.xml`, `.{format}`) would never match: modes apply to every format. */
const FORMAT_SUFFIX = /\.(json|xml|\{format\})$/;

function compile(rule: ModeRule): CompiledRule {
  const glob = globMatcher(rule.pattern.replace(FORMAT_SUFFIX, ''));
  // A HEAD is routed as the GET it abbreviates, so a HEAD rule is a GET rule.
  const method = rule.method === 'HEAD' ? 'GET' : rule.method;
  return { rule, matches: (requestMethod, texts) => (method === undefined || method === requestMethod) && texts.some(glob) };
}

function createModeResolver(rules: readonly ModeRule[], routes: readonly RouteInfo[]): ModeResolver {
  const specific = rules.filter((rule) => !isCatchAll(rule)).map(compile);
  const catchAll = rules.filter(isCatchAll).map(compile);

  for (const { rule, matches } of specific) {
    if (rule.mode === 'passthrough') continue;
    const hit = routes.filter((route) => matches(route.method, [stemOf(route.template)]));
    if (hit.length > 0 && hit.every((route) => route.passthroughOnly)) {
      throw new ConfigError(
        `Invalid configuration:\n  ROUTE_MODES: rule ${JSON.stringify(formatRouteModes([rule]))}: ${rule.mode} is impossible for ${hit[0]?.method} ${hit[0]?.template}, which is served only by passthrough`,
      );
    }
  }

  return {
    rules,
    modeOf({ method, path, route }) {
      const texts = route ? [stemOf(route.template), stemOf(path)] : [stemOf(path)];
      for (const { rule, matches } of specific) {
        if (route?.passthroughOnly && rule.mode !== 'passthrough') continue;
        if (matches(method, texts)) return rule.mode;
      }
      if (route?.passthroughOnly || route?.passthroughByDefault) return 'passthrough';
      for (const { rule, matches } of catchAll) if (matches(method, texts)) return rule.mode;
      return 'translate';
    },
  };
}

const passthroughByDefault = (mapping: Mapping): boolean => mapping.kind !== 'passthrough' && mapping.passthroughByDefault !== undefined;

/** Every route as the resolver sees it: a method of a template, and whether only passthrough serves it. */
function routeInfos(mappings: readonly Mapping[]): RouteInfo[] {
  return mappings.flatMap((mapping) => methodsOf(mapping).map((method) => ({ template: mapping.route, method, passthroughOnly: mapping.kind === 'passthrough', passthroughByDefault: passthroughByDefault(mapping) })));
}

/** Builds the resolver for these mappings; throws ConfigError for rules they make impossible. */
export function modeResolverFor(rules: readonly ModeRule[], mappings: readonly Mapping[]): ModeResolver {
  return createModeResolver(rules, routeInfos(mappings));
}
