/**
 * A compiled route table for v2 path templates such as
 * `/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}`.
 *
 * v2 puts the format in a suffix, which Hono's path syntax cannot express, so the table is a
 * segment trie built once: a path is split on `/`, its last segment split at its last `.` into a
 * stem and the format, and the trie is walked segment by segment (literal child, then the
 * `{param}` child). It answers exactly as one anchored regex per template would (literals
 * matched as written, a param `[^/]+`, the format `[^./]+`), but without trying every template.
 *
 * Every template must end in `.{format}` or a literal extension (`/deployments.xml`): that is the
 * v2 wire, and it makes the format a property of the path rather than of the template.
 */

export interface RouteEntry<T> {
  template: string;
  methods: readonly string[];
  value: T;
}

export interface RouteHit<T> {
  value: T;
  template: string;
  methods: readonly string[];
  /** Path params as they appear in the path (not percent-decoded). */
  params: Readonly<Record<string, string>>;
}

export interface RouteMatch<T> {
  /** The path's format suffix, unchecked (`json`, `xml`, or whatever the caller sent). */
  format: string;
  /** Every entry whose template matches the path, in table order. */
  entries: Array<RouteHit<T>>;
  /** Every method of those entries, in table order, once each (for 405's Allow header). */
  allow: string[];
}

export interface RouteTable<T> {
  match(path: string): RouteMatch<T> | undefined;
}

interface Leaf {
  index: number;
  /** Param names in path order. */
  names: readonly string[];
  /** `undefined` for `.{format}`, else the literal extension the path must carry. */
  extension: string | undefined;
}

interface TrieNode {
  literals: Map<string, TrieNode>;
  param: TrieNode | undefined;
  leaves: Leaf[];
}

const node = (): TrieNode => ({ literals: new Map(), param: undefined, leaves: [] });

const PARAM = /^\{([a-z_]+)\}$/;
const FORMAT_SUFFIX = '.{format}';
const EXTENSION = /^[^./{}]+$/;

type Segment = { kind: 'literal'; text: string } | { kind: 'param'; name: string };

function fail(template: string, why: string): never {
  throw new Error(`Invalid route template ${JSON.stringify(template)}: ${why}`);
}

/** A whole segment: a literal without braces, or exactly one `{name}`. */
function segmentOf(template: string, text: string): Segment {
  if (text === '') fail(template, 'empty segment');
  const name = PARAM.exec(text)?.[1];
  if (name !== undefined) {
    if (name === 'format') fail(template, '{format} belongs only in the last segment, as .{format}');
    return { kind: 'param', name };
  }
  if (/[{}]/.test(text)) fail(template, `unknown placeholder syntax in ${JSON.stringify(text)} (a placeholder is a whole segment, {lowercase_name})`);
  return { kind: 'literal', text };
}

interface Parsed {
  segments: Segment[];
  extension: string | undefined;
}

function parse(template: string): Parsed {
  if (!template.startsWith('/')) fail(template, 'must start with /');
  const parts = template.slice(1).split('/');
  const last = parts.pop() as string;
  let stem: string;
  let extension: string | undefined;
  if (last.endsWith(FORMAT_SUFFIX)) {
    stem = last.slice(0, -FORMAT_SUFFIX.length);
  } else {
    const dot = last.lastIndexOf('.');
    if (dot < 0 || !EXTENSION.test(last.slice(dot + 1))) fail(template, 'must end in .{format} or a literal extension such as .xml');
    stem = last.slice(0, dot);
    extension = last.slice(dot + 1);
  }
  const segments = [...parts, stem].map((text) => segmentOf(template, text));
  const names = segments.flatMap((s) => (s.kind === 'param' ? [s.name] : []));
  if (new Set(names).size !== names.length) fail(template, 'a param name appears twice');
  return { segments, extension };
}

export function createRouteTable<T>(entries: ReadonlyArray<RouteEntry<T>>): RouteTable<T> {
  const root = node();
  entries.forEach((entry, index) => {
    if (entry.methods.length === 0) fail(entry.template, 'no methods');
    const { segments, extension } = parse(entry.template);
    let at = root;
    for (const segment of segments) {
      if (segment.kind === 'param') {
        at.param ??= node();
        at = at.param;
      } else {
        let next = at.literals.get(segment.text);
        if (!next) at.literals.set(segment.text, (next = node()));
        at = next;
      }
    }
    const names = segments.flatMap((s) => (s.kind === 'param' ? [s.name] : []));
    at.leaves.push({ index, names, extension });
  });

  /** Every leaf under `at` for segments[i..], with the params captured on the way. */
  function walk(at: TrieNode, segments: readonly string[], i: number, captured: string[], found: Array<[Leaf, string[]]>): void {
    if (i === segments.length) {
      for (const leaf of at.leaves) found.push([leaf, captured]);
      return;
    }
    const segment = segments[i] as string;
    const literal = at.literals.get(segment);
    if (literal) walk(literal, segments, i + 1, captured, found);
    // A param is never empty.
    if (at.param && segment !== '') walk(at.param, segments, i + 1, [...captured, segment], found);
  }

  return {
    match(path) {
      if (!path.startsWith('/')) return undefined;
      const segments = path.slice(1).split('/');
      const last = segments.pop() as string;
      const dot = last.lastIndexOf('.');
      if (dot < 0) return undefined;
      const format = last.slice(dot + 1);
      if (format === '') return undefined;
      segments.push(last.slice(0, dot));
      const found: Array<[Leaf, string[]]> = [];
      walk(root, segments, 0, [], found);
      const hits = found
        .filter(([leaf]) => leaf.extension === undefined || leaf.extension === format)
        .sort(([a], [b]) => a.index - b.index)
        .map(([leaf, values]): RouteHit<T> => {
          const entry = entries[leaf.index] as RouteEntry<T>;
          // Null prototype: a param may be named `__proto__` or `constructor`.
          const params = Object.create(null) as Record<string, string>;
          leaf.names.forEach((name, k) => (params[name] = values[k] as string));
          return { value: entry.value, template: entry.template, methods: entry.methods, params };
        });
      if (hits.length === 0) return undefined;
      return { format, entries: hits, allow: [...new Set(hits.flatMap((h) => h.methods))] };
    },
  };
}
