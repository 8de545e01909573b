import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { inside, isPackage, resolveFile, sourceFiles, specifiers } from '../../test/support/import-graph.ts';

/**
 * The sandbox is the witness the gateway is compared against, so it must share no code with
 * the gateway: this test reads the import graph, not folder names. Every import,
 * re-export and import() of every sandbox file is resolved and followed, file by file; the
 * graph may reach only sandbox/ itself, node: builtins and packages, and the neutral facts
 * module (facts/, data equal by definition) as long as that module imports nothing. The
 * sandbox's own tests (sandbox/test/) may use test helpers, but reach no gateway code either,
 * not even through a helper: tests that check the sandbox with inputs the gateway builds (its
 * GUIDs, literals, NRQL, titles) are the gateway's, in test/sandbox/.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SANDBOX = join(ROOT, 'sandbox');
const FACTS = join(ROOT, 'facts');

// The sandbox's own tests ship nothing, and have a rule of their own (gatewayReached).
const sources = (dir: string): string[] => sourceFiles(dir, [join(SANDBOX, 'test')]);
const GATEWAY = [join(ROOT, 'src'), join(ROOT, 'mappings')];

const BUILTINS = new Set(builtinModules);

/**
 * Follows the imports from `entries`, reading files through `read`; returns every edge that
 * leaves the allowed ground, as `importer -> specifier (resolved)`.
 */
export function escapes(entries: readonly string[], read: (file: string) => string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const facts = inside(FACTS, file);
    for (const spec of specifiers(read(file))) {
      const where = `${relative(ROOT, file)} -> ${spec}`;
      if (spec.startsWith('node:') || BUILTINS.has(spec)) continue;
      if (isPackage(spec)) {
        // Packages are allowed to the sandbox, not to the facts, which import nothing.
        if (facts) found.push(`${where} (the facts module imports nothing)`);
        continue;
      }
      const target = resolveFile(file, spec);
      if (facts) found.push(`${where} (the facts module imports nothing)`);
      else if (inside(SANDBOX, target) || inside(FACTS, target)) queue.push(target);
      else found.push(`${where} (${relative(ROOT, target)} is outside sandbox/)`);
    }
  }
  return found;
}

/** Every edge by which `entries` reach gateway code (src/, mappings/), through any file on the way. */
export function gatewayReached(entries: readonly string[], read: (file: string) => string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of specifiers(read(file))) {
      if (spec.startsWith('node:') || BUILTINS.has(spec) || isPackage(spec)) continue;
      const target = resolveFile(file, spec);
      if (GATEWAY.some((dir) => inside(dir, target))) found.push(`${relative(ROOT, file)} -> ${spec} (gateway code)`);
      else queue.push(target);
    }
  }
  return found;
}

describe('sandbox boundary (the import graph)', () => {
  it('reaches nothing outside sandbox/ but node:, packages and the import-free facts module', () => {
    const files = sources(SANDBOX);
    expect(files.length).toBeGreaterThan(20);
    expect(files).toContain(join(SANDBOX, 'server.ts'));
    expect(files).toContain(join(SANDBOX, 'main.ts'));
    expect(escapes(files, (file) => readFileSync(file, 'utf8'))).toEqual([]);
  });

  it('catches a direct, a re-exported, a dynamic and an indirect import of gateway code', () => {
    const at = (path: string): string => join(ROOT, path);
    const world: Record<string, string> = {
      [at('sandbox/a.ts')]: [
        "import { x } from '../src/v2/ids.ts';",
        "import type { Y } from '../src/routes/mapping.ts';",
        "export * from '../src/app.ts';",
        "export { z } from '../mappings/retired/retired.ts';",
        "const m = await import('../src/cache/x.ts');",
        "import { ok } from './b.ts';",
        "import { fact } from '../facts/v2-routes.ts';",
        "import 'hono';",
        "import { readFileSync } from 'node:fs';",
        '// a comment naming ../src/v2/format.ts is no import',
      ].join('\n'),
      // An allowed-looking file inside the sandbox that reaches the gateway itself.
      [at('sandbox/b.ts')]: "export { V2Error as ok } from '../src/v2/errors.ts';",
      [at('facts/v2-routes.ts')]: "import { z } from 'zod';\nexport const fact = 1;",
    };
    const read = (file: string): string => world[file] ?? '';
    expect(escapes([at('sandbox/a.ts')], read)).toEqual([
      'sandbox/a.ts -> ../src/v2/ids.ts (src/v2/ids.ts is outside sandbox/)',
      'sandbox/a.ts -> ../src/routes/mapping.ts (src/routes/mapping.ts is outside sandbox/)',
      'sandbox/a.ts -> ../src/app.ts (src/app.ts is outside sandbox/)',
      'sandbox/a.ts -> ../mappings/retired/retired.ts (mappings/retired/retired.ts is outside sandbox/)',
      'sandbox/a.ts -> ../src/cache/x.ts (src/cache/x.ts is outside sandbox/)',
      'sandbox/b.ts -> ../src/v2/errors.ts (src/v2/errors.ts is outside sandbox/)',
      'facts/v2-routes.ts -> zod (the facts module imports nothing)',
    ]);
  });

  it("keeps the sandbox's own tests clear of gateway code, through test helpers too", () => {
    // This file's texts name gateway paths as data: its one helper is walked instead.
    const self = fileURLToPath(import.meta.url);
    const tests = [...sourceFiles(join(SANDBOX, 'test')).filter((file) => file !== self), join(ROOT, 'test/support/import-graph.ts')];
    expect(tests.length).toBeGreaterThan(10);
    expect(gatewayReached(tests, (file) => readFileSync(file, 'utf8'))).toEqual([]);
    const at = (path: string): string => join(ROOT, path);
    const world: Record<string, string> = {
      [at('sandbox/test/a.test.ts')]: "import { h } from '../../test/support/h.ts';\nimport { s } from '../server.ts';",
      [at('test/support/h.ts')]: "export { V2Error as h } from '../../src/v2/errors.ts';",
      [at('sandbox/server.ts')]: "import { z } from 'zod';",
    };
    expect(gatewayReached([at('sandbox/test/a.test.ts')], (file) => world[file] ?? '')).toEqual([
      'test/support/h.ts -> ../../src/v2/errors.ts (gateway code)',
    ]);
  });

  it('lets the facts modules in only while each imports nothing', () => {
    const facts = sourceFiles(FACTS);
    expect(facts).toContain(join(FACTS, 'v2-routes.ts'));
    expect(facts).toContain(join(FACTS, 'v2-titles.ts'));
    expect(escapes(facts, (file) => readFileSync(file, 'utf8'))).toEqual([]);
    expect(facts.flatMap((file) => specifiers(readFileSync(file, 'utf8')))).toEqual([]);
  });
});
