import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MAPPING_KINDS, methodsOf, type Mapping } from './mapping.ts';

/**
 * Discovers the route mappings by walking the resource packages: mappings/<resource>/ holds a
 * resource's route modules (each default-exports one mapping), its resource modules (no default
 * export), its GraphQL documents and its tests; mappings/common/ holds what several packages
 * share and no route. Adding a route is adding a module to its package (with its document and
 * test), nothing else.
 */
export const MAPPINGS_DIR = fileURLToPath(new URL('../../mappings/', import.meta.url));
/**
 * From source (Node's own type stripping) the mappings are .ts; compiled (dist/mappings) they
 * are .js, beside their source maps. Loading only this module's own kind keeps a compiled
 * server from picking up a stray .ts, and a source run from loading a stale .js.
 */
const MAPPING_EXTENSION = import.meta.url.endsWith('.js') ? '.js' : '.ts';

function isMapping(value: unknown): value is Mapping {
  const m = value as Partial<Mapping> | null;
  return (
    m !== null &&
    typeof m === 'object' &&
    m.kind !== undefined &&
    MAPPING_KINDS.has(m.kind) &&
    typeof m.id === 'string' &&
    typeof m.route === 'string' &&
    typeof m.operation === 'string'
  );
}

/** What several packages share: never a route. */
const COMMON_PACKAGE = 'common';

/** The modules of every package but common/, tests and declarations left out, in a stable order. */
function packageModules(dir: string): string[] {
  const modules: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === COMMON_PACKAGE) continue;
    for (const file of readdirSync(join(dir, entry.name))) {
      if (file.endsWith(MAPPING_EXTENSION) && !file.endsWith('.d.ts') && !file.endsWith(`.test${MAPPING_EXTENSION}`)) modules.push(join(dir, entry.name, file));
    }
  }
  return modules.sort();
}

/**
 * The mappings of the packages under `roots` (default: mappings/ alone, what the gateway, the
 * compatibility report and the tools serve). Tests of a stage add a root of their own fixture
 * packages; a route may still be declared only once across all roots.
 */
export async function loadMappings(roots: string | readonly string[] = MAPPINGS_DIR): Promise<Mapping[]> {
  const mappings: Mapping[] = [];
  for (const dir of typeof roots === 'string' ? [roots] : roots) {
    for (const file of packageModules(dir)) {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      if (module.default === undefined) continue; // a resource module: schemas, reshapes, titles
      if (!isMapping(module.default)) throw new Error(`${relative(join(dir, '..'), file)} must default-export a mapping (a define...Mapping helper of src/routes/mapping.ts) or nothing`);
      mappings.push(module.default);
    }
  }
  const ids = new Set<string>();
  for (const mapping of mappings) {
    // A passthrough mapping declares several methods of its template: each may be declared once.
    const methods = mapping.kind === 'passthrough' ? methodsOf(mapping) : [mapping.method];
    for (const method of methods) {
      const key = `${method} ${mapping.route}`;
      if (ids.has(key)) throw new Error(`two mappings declare ${key}`);
      ids.add(key);
    }
  }
  return mappings;
}
