import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  againstAllowList,
  cycles,
  importGraph,
  overImporting,
  oversized,
  projectPath,
  sourceFiles,
  upwardEdges,
  type ImportGraph,
} from '../support/import-graph.ts';

/**
 * The import rules of production code, read from the source text (test/support/import-graph.ts):
 * 1. no production file over 400 lines;
 * 2. no runtime import cycle;
 * 3. no import cycle through type-only imports either: a type is owned by the lowest module
 *    that defines it, and read from there;
 * 4. a mapping reaches the gateway through at most two src/ modules (the mapping API);
 * 5. the stages of src/ import downward only, in the order of LAYERS, type-only imports included.
 * Where today's code breaks a rule, the offenders are named in an allow-list below; a listed
 * offender that stops offending fails the test too, so each list can only shrink.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Production is what `npm run build` compiles and ships (tsconfig.build.json): the gateway
 * (src/, mappings/), the embedded sandbox and the facts it shares. scripts/, bench/ and load/
 * are operator and measuring tools run from the checkout, and sandbox/test/ is tests: none ships.
 */
const PRODUCTION = ['src', 'mappings', 'sandbox', 'facts'];
const NOT_SHIPPED = ['sandbox/test', 'mappings/**/*.test.ts'];
/** The resource packages keep their tests beside their routes; the build leaves those out. */
const notShipped = (path: string): boolean => path.startsWith('sandbox/test/') || (path.startsWith('mappings/') && path.endsWith('.test.ts'));
const MAX_LINES = 400;

/**
 * Files allowed over 400 lines: none (there were 21 before the large files were split). Never
 * add one: split the file along its seams instead.
 */
const OVERSIZED_TODAY: string[] = [];

/** Runtime cycles allowed: none (the sandbox's last two were broken). Never add one. */
const CYCLES_TODAY: string[] = [];

/**
 * The stages of src/ from the bottom up, derived from the import graph with type-only imports
 * included: a folder (or a file named here) may import the ones before it, never the ones after,
 * not even for a type. A file named here is a stage of its own, apart from its folder: the
 * shared state's contract (shared-state.ts) sits below the caches, clients and caller lookups
 * that read it, while the state's implementations build on them. This order leaves the upward
 * edges of UPWARD_TODAY. mappings/ sits right above the mapping API it imports; sandbox/ and
 * facts/ are outside the order (the sandbox boundary test keeps them apart). A new src/ folder
 * or root file must be placed here.
 */
const LAYERS = [
  'src/v2', // the v2 wire: parameters, formats, errors, ids, the route table
  'src/ops', // configuration, logger, metrics, key redaction, the route modes' names
  'src/state/shared-state.ts', // the shared state's contract: its interface, keys and health
  'src/cache', // cursors, coalesced misses, single-flight, purge timers
  'src/upstream', // the NerdGraph client, documents, NRQL and literals
  'src/caller', // key, identity, accounts (looked up over NerdGraph)
  'src/state', // shared state (memory or Redis) behind the caches and budgets
  'src/budget', // NerdGraph's budgets, injected into the client
  'src/routes', // the mapping contract, router, runners
  'src/mapping-api.ts', // the one module mappings import
  'mappings', // one module per v2 route
  'src/compare', // answers judged field by field, parity
  'src/modes', // translate, passthrough, shadow, compare
  'src/routing', // the one match per request, and the mode strategy it chooses
  'src/probe', // probing a real account
  'src/bridge', // /bridge/: explain, parity pages
  'src/app.ts',
  'src/gateway.ts',
  'src/index.ts',
];

/**
 * A file's stage in `order`: the file itself when the order names it, else its folder under
 * src/, the root file itself, or mappings; undefined elsewhere.
 */
const stageIn =
  (order: readonly string[]) =>
  (path: string): string | undefined => {
    if (order.includes(path)) return path;
    if (path.startsWith('mappings/')) return 'mappings';
    const parts = path.split('/');
    if (parts[0] !== 'src') return undefined;
    return parts.length === 2 ? path : `src/${parts[1]}`;
  };
const layerOf = stageIn(LAYERS);

/** The package a mappings/ file belongs to (mappings/<package>/...); undefined elsewhere. */
function packageOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'mappings' && parts.length > 2 ? parts[1] : undefined;
}

/**
 * The package rule: a resource package imports the mapping API, mappings/common/ and itself,
 * never another package; mappings/common/ imports no package. Type-only imports count: a type
 * borrowed from another package couples the two as much as a value does.
 */
function crossPackageImports(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const own = packageOf(from);
    if (own === undefined) continue;
    for (const to of targets) {
      const theirs = packageOf(to);
      if (to.startsWith('mappings/') && theirs === undefined) out.push(`${from} -> ${to} (mappings/ holds packages only)`);
      else if (theirs !== undefined && theirs !== own && theirs !== 'common') out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}

/** The fragments each package's documents spread: its own (fragments/ of its folder) or common's only. */
function crossPackageFragments(files: ReadonlyMap<string, string>): string[] {
  const fragmentHome = new Map<string, string>();
  for (const path of files.keys()) {
    const match = /^mappings\/([^/]+)\/fragments\/([A-Za-z0-9_]+)\.graphql$/.exec(path);
    if (match) fragmentHome.set(match[2] as string, match[1] as string);
  }
  const out: string[] = [];
  for (const [path, text] of files) {
    const own = packageOf(path);
    if (own === undefined) continue;
    for (const [, name] of text.matchAll(/\.\.\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) {
      const home = fragmentHome.get(name as string);
      if (home !== undefined && home !== own && home !== 'common') out.push(`${path} spreads ${name} of mappings/${home}/`);
    }
  }
  return out.sort();
}

const graphqlFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.graphql'))
    .map((entry) => join(entry.parentPath, entry.name));

/**
 * Imports that go up today, one group per pair of folders that import each other (the order keeps
 * the direction that reads as the design). Strike an edge when its import moves; never add one.
 */
const UPWARD_TODAY = [
  // The caches stay cold in a recorded run (inRecordedRun), while upstream/micro-cache.ts
  // builds on cache/single-flight.ts and purge-timer.ts: the run's marker could move down.
  'src/cache/coalescing-cache.ts -> src/upstream/recorded-run.ts',
  'src/cache/cursor-cache.ts -> src/upstream/recorded-run.ts',
];

const productionFiles = (): string[] =>
  PRODUCTION.flatMap((folder) => sourceFiles(join(ROOT, folder))).filter((file) => !notShipped(projectPath(ROOT, file)));
const read = (file: string): string => readFileSync(file, 'utf8');
const runtimeGraph = (): ImportGraph => importGraph(ROOT, productionFiles(), read);
/** The graph with type-only imports as edges too: erased at runtime, but they still couple the code. */
const typeGraph = (): ImportGraph => importGraph(ROOT, productionFiles(), read, { typeOnly: true });

/** An in-memory project for the self-tests: root-relative paths to source texts. */
function world(files: Record<string, string>, options: { typeOnly?: boolean } = {}): ImportGraph {
  const at = (path: string): string => join(ROOT, path);
  const texts = new Map(Object.entries(files).map(([path, text]) => [at(path), text]));
  return importGraph(ROOT, [...texts.keys()], (file) => texts.get(file) ?? '', { ...options, isFile: (file) => texts.has(file) });
}

describe('architecture: import rules of production code', () => {
  it('counts as production exactly what the build ships', () => {
    // TypeScript's own reader: the globs (mappings/**/*.test.ts) look like comments to a plain one.
    const build = ts.parseConfigFileTextToJson('tsconfig.build.json', read(join(ROOT, 'tsconfig.build.json'))).config as { include: string[]; exclude: string[] };
    expect([...build.include].sort()).toEqual([...PRODUCTION].sort());
    expect(build.exclude).toEqual(NOT_SHIPPED);
  });

  it(`has no production file over ${MAX_LINES} lines beyond the allow-list`, () => {
    const files = productionFiles();
    expect(files.length).toBeGreaterThan(200);
    const long = oversized(new Map(files.map((file) => [projectPath(ROOT, file), read(file)])), MAX_LINES);
    const { unexpected, stale } = againstAllowList(
      long.map((file) => file.path),
      OVERSIZED_TODAY,
    );
    const lines = new Map(long.map((file) => [file.path, file.lines]));
    expect(unexpected.map((path) => `${path} (${lines.get(path)} lines)`), 'over 400 lines: split it').toEqual([]);
    expect(stale, 'now at most 400 lines: strike from OVERSIZED_TODAY').toEqual([]);
  });

  it('has no runtime import cycle among src/, mappings/, sandbox/ and facts/ beyond the allow-list', () => {
    const { unexpected, stale } = againstAllowList(cycles(runtimeGraph()), CYCLES_TODAY);
    expect(unexpected, 'a runtime import cycle').toEqual([]);
    expect(stale, 'broken since: strike from CYCLES_TODAY').toEqual([]);
  });

  it('has no import cycle among src/, mappings/, sandbox/ and facts/, type-only imports included', () => {
    expect(cycles(typeGraph()), 'an import cycle through type-only imports: move the type to the lowest module that defines it').toEqual([]);
  });

  it('lets every mapping import at most two src/ modules, type-only imports included', () => {
    const graph = typeGraph();
    const mappings = [...graph.keys()].filter((path) => path.startsWith('mappings/'));
    expect(mappings.length).toBeGreaterThan(50);
    expect(overImporting(graph, 'mappings/', 'src/', 2)).toEqual([]);
  });

  it('keeps every resource package to the mapping API, mappings/common/ and itself', () => {
    const graph = importGraph(ROOT, productionFiles(), read, { typeOnly: true });
    const packages = new Set([...graph.keys()].map(packageOf).filter((name) => name !== undefined));
    expect(packages.size).toBeGreaterThan(10);
    expect(crossPackageImports(graph), 'a package imports another: move what both need to mappings/common/').toEqual([]);
    // The packages' own tests too: a test that needs two packages belongs to test/.
    const tests = sourceFiles(join(ROOT, 'mappings')).filter((file) => file.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(10);
    const withTests = importGraph(ROOT, [...productionFiles(), ...tests], read, { typeOnly: true });
    expect(crossPackageImports(withTests).filter((edge) => edge.split(' -> ')[0]?.endsWith('.test.ts'))).toEqual([]);
    const documents = new Map(graphqlFiles(join(ROOT, 'mappings')).map((file) => [projectPath(ROOT, file), read(file)]));
    expect(documents.size).toBeGreaterThan(50);
    expect(crossPackageFragments(documents), "a document spreads another package's fragment: move it to mappings/common/fragments/").toEqual([]);
  });

  it('places every src/ file in a stage, and imports downward only beyond the allow-list, type-only imports included', () => {
    const graph = typeGraph();
    const unplaced = [...graph.keys()].filter((path) => path.startsWith('src/') && !LAYERS.includes(layerOf(path) as string));
    expect(unplaced, 'a src/ folder or root file missing from LAYERS').toEqual([]);
    const { unexpected, stale } = againstAllowList(upwardEdges(graph, LAYERS, layerOf), UPWARD_TODAY);
    expect(unexpected, 'imports a later stage of LAYERS').toEqual([]);
    expect(stale, 'no longer upward: strike from UPWARD_TODAY').toEqual([]);
  });
});

describe('architecture rules catch what they forbid (in-memory graphs)', () => {
  it('catches a file over the limit, not one at it', () => {
    const texts = new Map([
      ['src/long.ts', 'x;\n'.repeat(401)],
      ['src/full.ts', 'x;\n'.repeat(400)],
      ['src/short.ts', 'x;\n'],
    ]);
    expect(oversized(texts, 400)).toEqual([{ path: 'src/long.ts', lines: 401 }]);
  });

  it('catches runtime cycles through imports, re-exports and import(), not through types', () => {
    const graph = world({
      // a <-> b by a plain import and a re-export.
      'src/a.ts': "import { b } from './b.ts';",
      'src/b.ts': "export * from './a.ts';",
      // c -> d -> e -> c, the last by a dynamic import, through a folder's index.
      'src/c.ts': "import { d } from './d';",
      'src/d.ts': "export { e } from './e/index.ts';",
      'src/e/index.ts': "const c = await import('../c.ts');",
      // f <-> g only by types: erased at runtime, no cycle.
      'src/f.ts': "import type { G } from './g.ts';\nimport { type H, type I } from './g.ts';",
      'src/g.ts': "export type { F } from './f.ts';\n// import { f } from './f.ts' in a comment is no import",
      // h <-> i: one name of the braces is a value, so the import stays.
      'src/h.ts': "import { type I, i } from './i.ts';",
      'src/i.ts': "import { h } from './h.ts';",
    });
    expect(cycles(graph)).toEqual([
      'src/a.ts -> src/b.ts -> src/a.ts',
      'src/c.ts -> src/d.ts -> src/e/index.ts -> src/c.ts',
      'src/h.ts -> src/i.ts -> src/h.ts',
    ]);
  });

  it('catches cycles through type-only imports once they count', () => {
    const files = {
      // f <-> g only by types: a circle of the code, though none at runtime.
      'src/f.ts': "import type { G } from './g.ts';",
      'src/g.ts': "import { type F } from './f.ts';",
      // j -> k by a value, k -> j by a type: a circle too.
      'src/j.ts': "import { k } from './k.ts';",
      'src/k.ts': "export type { J } from './j.ts';",
      // l -> m by a type, nothing back: no circle.
      'src/l.ts': "import type { M } from './m.ts';",
      'src/m.ts': '',
    };
    expect(cycles(world(files))).toEqual([]);
    expect(cycles(world(files, { typeOnly: true }))).toEqual(['src/f.ts -> src/g.ts -> src/f.ts', 'src/j.ts -> src/k.ts -> src/j.ts']);
  });

  it('catches a mapping that imports three src/ modules, counting type-only imports', () => {
    const graph = world(
      {
        'mappings/good.ts': "import { defineListMapping } from '../src/mapping-api.ts';\nimport { x } from './shared/x.ts';",
        'mappings/shared/x.ts': "import type { Mapping } from '../../src/mapping-api.ts';",
        'mappings/bad.ts': [
          "import { defineListMapping } from '../src/mapping-api.ts';",
          "import type { Mapping } from '../src/routes/mapping.ts';",
          "import { notFound } from '../src/v2/errors.ts';",
        ].join('\n'),
        'src/mapping-api.ts': '',
        'src/routes/mapping.ts': '',
        'src/v2/errors.ts': '',
      },
      { typeOnly: true },
    );
    expect(overImporting(graph, 'mappings/', 'src/', 2)).toEqual([
      'mappings/bad.ts imports 3: src/mapping-api.ts, src/routes/mapping.ts, src/v2/errors.ts',
    ]);
  });

  it('catches an import from a lower stage to a higher one, not types, not within a stage', () => {
    const graph = world({
      'src/v2/errors.ts': "import { call } from '../upstream/client.ts';\nimport type { Env } from '../routes/context.ts';",
      'src/upstream/client.ts': "import { V2Error } from '../v2/errors.ts';\nimport { quote } from './literal.ts';",
      'src/upstream/literal.ts': '',
      'src/routes/context.ts': "import { call } from '../upstream/client.ts';",
      'src/app.ts': "import { Env } from './routes/context.ts';",
    });
    const order = ['src/v2', 'src/upstream', 'src/routes', 'src/app.ts'];
    expect(upwardEdges(graph, order, stageIn(order))).toEqual(['src/v2/errors.ts -> src/upstream/client.ts']);
    expect(upwardEdges(graph, [...order].reverse(), stageIn(order))).toEqual([
      'src/app.ts -> src/routes/context.ts',
      'src/routes/context.ts -> src/upstream/client.ts',
      'src/upstream/client.ts -> src/v2/errors.ts',
    ]);
  });

  it('catches a package importing another package, by type too, and common importing a package', () => {
    const graph = world(
      {
        'mappings/labels/list.ts': "import { x } from './labels.ts';\nimport { y } from '../common/y.ts';\nimport type { Z } from '../users/users.ts';",
        'mappings/labels/labels.ts': "import { defineListMapping } from '../../src/mapping-api.ts';",
        'mappings/common/y.ts': "import { u } from '../users/users.ts';",
        'mappings/users/users.ts': '',
        'mappings/stray.ts': '',
        'mappings/users/show.ts': "import { s } from '../stray.ts';",
        'src/mapping-api.ts': '',
      },
      { typeOnly: true },
    );
    expect(crossPackageImports(graph)).toEqual([
      'mappings/common/y.ts -> mappings/users/users.ts',
      'mappings/labels/list.ts -> mappings/users/users.ts',
      'mappings/users/show.ts -> mappings/stray.ts (mappings/ holds packages only)',
    ]);
    const documents = new Map([
      ['mappings/labels/fragments/LabelFields.graphql', 'fragment LabelFields on Entity { name }'],
      ['mappings/common/fragments/GuidFields.graphql', 'fragment GuidFields on Entity { guid }'],
      ['mappings/users/Users.graphql', 'query Users { a { ...GuidFields ...LabelFields } }'],
      ['mappings/labels/Labels.graphql', 'query Labels { a { ...LabelFields } }'],
    ]);
    expect(crossPackageFragments(documents)).toEqual(['mappings/users/Users.graphql spreads LabelFields of mappings/labels/']);
  });

  it('catches a type-only import from a lower stage to a higher one, and places a file named in the order apart from its folder', () => {
    const graph = world(
      {
        'src/v2/format.ts': "import type { GatewayContext } from '../routes/context.ts';",
        'src/routes/context.ts': '',
        // The contract sits below the client that reads it; the folder's other files above.
        'src/upstream/client.ts': "import type { SharedState } from '../state/shared-state.ts';\nimport type { RedisState } from '../state/redis-state.ts';",
        'src/state/shared-state.ts': '',
        'src/state/redis-state.ts': "import type { SharedState } from './shared-state.ts';",
      },
      { typeOnly: true },
    );
    const order = ['src/v2', 'src/state/shared-state.ts', 'src/upstream', 'src/state', 'src/routes'];
    expect(upwardEdges(graph, order, stageIn(order))).toEqual(['src/upstream/client.ts -> src/state/redis-state.ts', 'src/v2/format.ts -> src/routes/context.ts']);
  });

  it('tells new offenders from struck ones against an allow-list', () => {
    expect(againstAllowList(['a', 'b'], ['b', 'c'])).toEqual({ unexpected: ['a'], stale: ['c'] });
  });
});
