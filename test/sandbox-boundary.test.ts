import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The sandbox is the reference the gateway is compared against, so it must not inherit the
 * gateway's code (or its bugs): it may import only itself, the v2 wire (src/v2/), node: and
 * packages. See sandbox/README.md.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SANDBOX = join(ROOT, 'sandbox');
const ALLOWED = [SANDBOX + sep, join(ROOT, 'src', 'v2') + sep];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier: static imports and re-exports (`from '...'`), bare imports, import(). */
function specifiers(text: string): string[] {
  const found = [
    ...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return found.map((m) => m[1] as string);
}

/** The relative imports of `file` that resolve outside the sandbox and src/v2/. */
function escapes(file: string, text: string): string[] {
  return specifiers(text)
    .filter((spec) => spec.startsWith('.') || spec.startsWith('/'))
    .filter((spec) => !ALLOWED.some((dir) => resolve(dirname(file), spec).startsWith(dir)))
    .map((spec) => `${relative(ROOT, file)}: ${spec}`);
}

describe('sandbox boundary', () => {
  it('imports nothing outside sandbox/ and src/v2/ (node: and packages aside)', () => {
    const files = sources(SANDBOX);
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((file) => escapes(file, readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('catches an import of the gateway, a re-export and a dynamic import', () => {
    const file = join(SANDBOX, 'legacy', 'x.ts');
    const text = ["import { a } from '../../src/routes/v2-router.ts';", "export * from '../../src/app.ts';", "const m = await import('../../src/cache/x.ts');", "import 'hono';", "import { b } from '../../src/v2/ids.ts';"].join('\n');
    expect(escapes(file, text)).toEqual([
      'sandbox/legacy/x.ts: ../../src/routes/v2-router.ts',
      'sandbox/legacy/x.ts: ../../src/app.ts',
      'sandbox/legacy/x.ts: ../../src/cache/x.ts',
    ]);
  });
});
