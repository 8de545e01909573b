import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { routeTable } from '../../src/routes/compat-report.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** Top-level folders a newcomer meets in the repository: not dot-folders, not installed or built output. */
function topLevelFolders(): string[] {
  const generated = new Set(['node_modules', 'dist', 'coverage']);
  return readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !generated.has(entry.name))
    .map((entry) => entry.name)
    .sort();
}

/** Relative link targets in a Markdown text (no scheme, no bare anchor), without their #fragment. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] ?? '').filter((target) => !/^[a-z]+:/.test(target));
}

describe('README.md, the map', () => {
  const readme = read('README.md');

  it('stays under 600 lines (long material lives in docs/)', () => {
    expect(readme.split('\n').length).toBeLessThan(600);
  });

  it('names every top-level folder, as `folder/`', () => {
    const folders = topLevelFolders();
    expect(folders.length).toBeGreaterThan(5);
    const unnamed = folders.filter((folder) => !readme.includes(`\`${folder}/\``));
    expect(unnamed).toEqual([]);
  });

  it('draws the request stages as a Mermaid diagram', () => {
    expect(readme).toMatch(/```mermaid\nflowchart/);
  });

  it('gives the set-up and test commands CI relies on', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  it('links only to files that exist', () => {
    const targets = relativeLinks(readme);
    expect(targets.length).toBeGreaterThan(5);
    expect(targets.filter((target) => !existsSync(new URL(`../../${target}`, import.meta.url)))).toEqual([]);
  });
});

describe('docs/', () => {
  it('links only to files that exist, from every topic file', () => {
    const docs = readdirSync(new URL('../../docs/', import.meta.url)).filter((name) => name.endsWith('.md'));
    const broken = docs.flatMap((name) =>
      relativeLinks(read(`docs/${name}`))
        .filter((target) => !existsSync(new URL(`../../docs/${target}`, import.meta.url)))
        .map((target) => `${name} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });
});

describe('docs/compatibility.md', () => {
  it('embeds the supported-routes table generated from mappings/ (run npm run compat -- --table)', async () => {
    const embedded = /<!-- compat:start -->\n([\s\S]*?)\n<!-- compat:end -->/.exec(read('docs/compatibility.md'))?.[1];
    expect(embedded).toBe(routeTable(await loadMappings()));
  });
});
