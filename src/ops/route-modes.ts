/**
 * ROUTE_MODES: which mode serves which route, e.g.
 * `GET /v2/applications/{id}/metrics/data=compare;GET /v2/alerts_*=passthrough;*=translate`.
 *
 * Rules `[METHOD ]PATTERN=MODE` separated by `;`. PATTERN is a glob (`*` matches any run of
 * characters, `/` included) matched against a route template without its `.{format}` suffix and
 * against the request path without its extension; METHOD, when given, must equal the request's.
 * The parser is pure and total: any text either parses or throws a RouteModesError naming the rule.
 */
export const ROUTE_MODE_NAMES = ['translate', 'passthrough', 'compare', 'candidate'] as const;

/**
 * How a route is served: one of ROUTE_MODE_NAMES. Owned here, by the setting that names the
 * modes, so the route table, the modes and the parity store all read it from below them.
 */
export type RouteMode = (typeof ROUTE_MODE_NAMES)[number];

export const RULE_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'] as const;
export type RuleMethod = (typeof RULE_METHODS)[number];

export interface ModeRule {
  /** Absent: any method. */
  method?: RuleMethod;
  pattern: string;
  mode: RouteMode;
}

/** A rule that cannot be read; the config loader turns it into a ConfigError. */
export class RouteModesError extends Error {}

// A pattern is a path glob: starts with `/` or `*`, no spaces, no rule separators.
const PATTERN = /^[/*][^\s;=]*$/;

function fail(rule: string, why: string): never {
  throw new RouteModesError(`rule ${JSON.stringify(rule)}: ${why}`);
}

export function parseRouteModes(text: string): ModeRule[] {
  const rules: ModeRule[] = [];
  for (const raw of text.split(';')) {
    const rule = raw.trim();
    // Empty pieces (`a=b;;c=d`, a trailing `;`) are separators, not rules.
    if (rule === '') continue;
    const eq = rule.lastIndexOf('=');
    if (eq < 0) fail(rule, 'expected [METHOD ]PATTERN=MODE');
    const mode = rule.slice(eq + 1).trim();
    if (!(ROUTE_MODE_NAMES as readonly string[]).includes(mode)) fail(rule, `unknown mode ${JSON.stringify(mode)} (one of ${ROUTE_MODE_NAMES.join(', ')})`);
    const target = rule.slice(0, eq).trim().split(/\s+/).filter((part) => part !== '');
    // `GET =compare`: a method and no pattern.
    if (target.length === 0 || (target.length === 1 && (RULE_METHODS as readonly string[]).includes(target[0] as string))) fail(rule, 'empty pattern');
    if (target.length > 2) fail(rule, 'expected [METHOD ]PATTERN=MODE (one method, one pattern, no spaces in the pattern)');
    let method: RuleMethod | undefined;
    if (target.length === 2) {
      const named = target[0] as string;
      if (!(RULE_METHODS as readonly string[]).includes(named)) fail(rule, `unknown method ${JSON.stringify(named)} (one of ${RULE_METHODS.join(', ')})`);
      method = named as RuleMethod;
    }
    const pattern = target[target.length - 1] as string;
    if (!PATTERN.test(pattern)) fail(rule, 'a pattern is a path glob starting with / (or * alone), without spaces, ; or =');
    rules.push({ ...(method ? { method } : {}), pattern, mode: mode as RouteMode });
  }
  return rules;
}

export function formatRouteModes(rules: readonly ModeRule[]): string {
  return rules.map((rule) => `${rule.method ? `${rule.method} ` : ''}${rule.pattern}=${rule.mode}`).join(';');
}

/** A catch-all rule (`*=mode`, `GET *=mode`) comes after the built-in defaults. */
export const isCatchAll = (rule: ModeRule): boolean => /^\*+$/.test(rule.pattern);

/** The glob as an anchored regex: `*` is any run of characters, everything else literal. */
export function globMatcher(pattern: string): (text: string) => boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
    .join('.*');
  const regex = new RegExp(`^${source}$`);
  return (text) => regex.test(text);
}

/** A template or a path without its format suffix: what patterns are matched against. */
export function stemOf(pathOrTemplate: string): string {
  if (pathOrTemplate.endsWith('.{format}')) return pathOrTemplate.slice(0, -'.{format}'.length);
  const slash = pathOrTemplate.lastIndexOf('/');
  const dot = pathOrTemplate.lastIndexOf('.');
  return dot > slash ? pathOrTemplate.slice(0, dot) : pathOrTemplate;
}
