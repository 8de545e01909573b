import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEGACY_PROBES } from '../../src/probe/legacy-probes.ts';
import { PROBES } from '../../src/probe/probes.ts';
import { V2_PROBES } from '../../src/probe/v2-probes.ts';

/**
 * Every UNCONFIRMED in mappings/ says how it gets settled: `probe: <name>` (or
 * `probes: <name>, <name>`) naming a probe `npm run probe` runs, or `no probe: <why>`, on the
 * same line or one of the next two. The files are read at test time.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const MAPPINGS = join(ROOT, 'mappings');
const WINDOW = 3;
const UNCONFIRMED = /(?<![A-Za-z_])UNCONFIRMED(?![A-Za-z_])/;
/** `probe: a-b` or `probes: a-b, c-d` (not `no probe:`): the names it lists. */
const NAMED = /(?<!no )\bprobes?: ((?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+)(?:, (?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+))*)/g;
const SETTLED = /\bprobes?:\s|\bno probe:\s/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    // The packages' tests quote the assumptions they check; the mappings themselves state them.
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const registered = new Set([...PROBES, ...V2_PROBES, ...LEGACY_PROBES].map((probe) => probe.name));

describe('every UNCONFIRMED in mappings/ says which probe settles it', () => {
  const all = files(MAPPINGS).map((path) => ({ path: relative(ROOT, path), lines: readFileSync(path, 'utf8').split('\n') }));

  it('names a probe, or says why none can, beside each UNCONFIRMED', () => {
    const unsettled: string[] = [];
    for (const { path, lines } of all) {
      lines.forEach((line, index) => {
        if (!UNCONFIRMED.test(line)) return;
        if (!SETTLED.test(lines.slice(index, index + WINDOW).join('\n'))) unsettled.push(`${path}:${index + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(unsettled).toEqual([]);
  });

  it('names only probes that npm run probe runs', () => {
    const unknown: string[] = [];
    for (const { path, lines } of all) {
      lines.forEach((line, index) => {
        for (const match of line.matchAll(NAMED)) {
          for (const name of (match[1] as string).split(', ')) if (!registered.has(name)) unknown.push(`${path}:${index + 1}: ${name}`);
        }
      });
    }
    expect(unknown).toEqual([]);
  });
});
