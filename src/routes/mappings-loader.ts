import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MAPPING_KINDS, methodsOf, type Mapping } from './mapping.ts';

/**
 * Discovers the route mappings: every module directly in mappings/ whose default export is a
 * mapping. Adding a route is adding a file there (and its query and tests), nothing else.
 */
export const MAPPINGS_DIR = fileURLToPath(new URL('../../mappings/', import.meta.url));
/**
 * From source (tsx) the mappings are .ts; compiled (dist/mappings) they are .js, beside their
 * source maps. Loading only this module's own kind keeps a compiled server from picking up
 * a stray .ts it cannot run, and tsx from loading a stale .js.
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

export async function loadMappings(dir: string = MAPPINGS_DIR): Promise<Mapping[]> {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith(MAPPING_EXTENSION) && !file.endsWith('.d.ts'))
    .sort();
  const mappings: Mapping[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { default?: unknown };
    if (!isMapping(module.default)) throw new Error(`mappings/${file} must default-export a mapping (a define...Mapping helper of src/routes/mapping.ts)`);
    mappings.push(module.default);
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
