import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';

/**
 * Reading the project's import graph from source text, without a compiler: the sandbox boundary
 * test (sandbox/test/boundary.test.ts) and the architecture rules (test/ops/architecture.test.ts)
 * both stand on it. Only sourceFiles and the default file-exists check touch the disk: the rest
 * judges what it is given (texts, a graph), so each rule can be shown failing on a small
 * in-memory graph.
 */

/** One module specifier of a source file, and whether it is erased at compile time. */
export interface ImportRef {
  specifier: string;
  /** `import type`, `export type`, or braces where every name is marked `type`: gone at runtime. */
  typeOnly: boolean;
}

/** The text without its comments: comments hold paths too (`see src/v2/ids.ts`), which are no imports. */
export function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** `type X`, `{ type A, type B }` (every name a type): the clause between import/export and from. */
function isTypeOnlyClause(clause: string): boolean {
  const trimmed = clause.trim();
  if (/^type\b/.test(trimmed)) return true;
  const braces = /^\{([\s\S]*)\}$/.exec(trimmed);
  if (!braces) return false;
  const names = (braces[1] as string).split(',').map((name) => name.trim()).filter((name) => name !== '');
  return names.length > 0 && names.every((name) => /^type\s/.test(name));
}

/**
 * Every module specifier in a source text, in this order: `from '...'` (imports and re-exports),
 * bare `import '...'`, `import('...')`, `require('...')`. Only the first kind can be type-only.
 */
export function importsOf(text: string): ImportRef[] {
  const code = stripComments(text);
  const fromClauses = [...code.matchAll(/\b(?:import|export)\b([^'"`;]*?)\bfrom\s*['"]([^'"]+)['"]/g)].map((m) => ({
    specifier: m[2] as string,
    typeOnly: isTypeOnlyClause(m[1] as string),
  }));
  const runtime = [
    // At a statement's start only: `['--import', 'tsx']` in a child's argv is no import.
    /(?:^|;)\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*[,)]/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ].flatMap((pattern) => [...code.matchAll(pattern)].map((m) => ({ specifier: m[1] as string, typeOnly: false })));
  return [...fromClauses, ...runtime];
}

/** Every module specifier in a source text, type-only ones included. */
export function specifiers(text: string): string[] {
  return importsOf(text).map((ref) => ref.specifier);
}

/** A package or builtin (`zod`, `node:fs`), not a file of the project. */
export const isPackage = (spec: string): boolean => !spec.startsWith('.') && !spec.startsWith('/');

const isFileOnDisk = (path: string): boolean => existsSync(path) && statSync(path).isFile();

/** The file a relative specifier names (with or without its extension, or a folder's index). */
export function resolveFile(from: string, spec: string, isFile: (path: string) => boolean = isFileOnDisk): string {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) if (isFile(candidate)) return candidate;
  return base;
}

/** `file` lies under the folder `dir` (absolute paths). */
export const inside = (dir: string, file: string): boolean => file.startsWith(dir + sep);

/** Every .ts/.mts/.js/.mjs file under `dir`, skipping the folders `skip` names (absolute paths). */
export function sourceFiles(dir: string, skip: readonly string[] = []): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return skip.includes(path) || entry.name === 'node_modules' ? [] : sourceFiles(path, skip);
      return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
    })
    .sort();
}

/** Edges between project files, by root-relative posix path (`src/app.ts`): importer -> imported. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** A root-relative posix path, the same on every platform. */
export const projectPath = (root: string, file: string): string => relative(root, file).split(sep).join(posix.sep);

export interface GraphOptions {
  /** Keep type-only imports as edges too (they are erased at runtime, but still couple the code). */
  typeOnly?: boolean;
  isFile?: (path: string) => boolean;
}

/**
 * The import graph of `files` (absolute paths): packages left out, edges kept only to files in
 * `files` (imports leaving the set are another rule's business), type-only imports left out
 * unless asked for. Dynamic `import()` counts: it is a runtime dependency like any other.
 */
export function importGraph(root: string, files: readonly string[], read: (file: string) => string, options: GraphOptions = {}): ImportGraph {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(read(file))
      .filter((ref) => (options.typeOnly === true || !ref.typeOnly) && !isPackage(ref.specifier))
      .map((ref) => resolveFile(file, ref.specifier, options.isFile))
      .filter((target) => known.has(target))
      .map((target) => projectPath(root, target));
    graph.set(projectPath(root, file), [...new Set(targets)]);
  }
  return graph;
}

/** The shortest path of edges from `start` back to `start`, as the nodes it visits (start first). */
function shortestCycleThrough(graph: ImportGraph, start: string, within: ReadonlySet<string>): string[] | undefined {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const next of graph.get(node) ?? []) {
      if (!within.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0] as string) as string);
        return path;
      }
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      queue.push(next);
    }
  }
  return undefined;
}

/** The strongly connected components of the graph (Tarjan), each one a set of mutually reachable files. */
function components(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * The runtime import cycles, each as `a.ts -> b.ts -> a.ts`: for every file caught in a cycle,
 * the shortest cycle through it (the same cycle found from two of its files is listed once).
 */
export function cycles(graph: ImportGraph): string[] {
  const listed = new Set<string>();
  const described: string[] = [];
  for (const component of components(graph)) {
    const within = new Set(component);
    for (const start of component) {
      const path = shortestCycleThrough(graph, start, within);
      if (!path) continue;
      // One spelling per cycle: rotated to start at its smallest file.
      const first = path.indexOf([...path].sort()[0] as string);
      const rotated = [...path.slice(first), ...path.slice(0, first)];
      const text = [...rotated, rotated[0]].join(' -> ');
      if (!listed.has(text)) described.push(text);
      listed.add(text);
    }
  }
  return described.sort();
}

export interface LongFile {
  path: string;
  lines: number;
}

/** Files longer than `limit` lines, longest first. */
export function oversized(texts: ReadonlyMap<string, string>, limit: number): LongFile[] {
  return [...texts]
    .map(([path, text]) => ({ path, lines: lineCount(text) }))
    .filter((file) => file.lines > limit)
    .sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path));
}

/** Lines as `wc -l` counts them: newline characters. */
export const lineCount = (text: string): number => text.split('\n').length - 1;

/**
 * Files under `fromFolder` that import more than `max` distinct files under `toFolder`, as
 * `importer imports n: a, b, c` (folders as path prefixes, e.g. `mappings/` and `src/`).
 */
export function overImporting(graph: ImportGraph, fromFolder: string, toFolder: string, max: number): string[] {
  return [...graph]
    .filter(([from]) => from.startsWith(fromFolder))
    .map(([from, targets]) => ({ from, reached: targets.filter((to) => to.startsWith(toFolder)).sort() }))
    .filter(({ reached }) => reached.length > max)
    .map(({ from, reached }) => `${from} imports ${reached.length}: ${reached.join(', ')}`)
    .sort();
}

/**
 * Edges that import upward: from a file whose layer comes earlier in `order` to a file whose
 * layer comes later. `layerOf` names a file's layer; files outside the order are not judged
 * (whether every file has a place is the caller's check).
 */
export function upwardEdges(graph: ImportGraph, order: readonly string[], layerOf: (path: string) => string | undefined): string[] {
  const rank = (path: string): number => {
    const layer = layerOf(path);
    return layer === undefined ? -1 : order.indexOf(layer);
  };
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const fromRank = rank(from);
    if (fromRank < 0) continue;
    for (const to of targets) if (rank(to) > fromRank) found.push(`${from} -> ${to}`);
  }
  return found.sort();
}

/**
 * What an allow-list of known offenders leaves to fix: offenders it does not name (`unexpected`,
 * the rule broken anew) and names that no longer offend (`stale`, to strike from the list).
 */
export function againstAllowList(found: readonly string[], allowed: readonly string[]): { unexpected: string[]; stale: string[] } {
  return {
    unexpected: found.filter((item) => !allowed.includes(item)),
    stale: allowed.filter((item) => !found.includes(item)),
  };
}
