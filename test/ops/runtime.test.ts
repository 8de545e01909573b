import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * One runtime everywhere: the Node line CI installs (.ci/run), the container's base images and
 * package.json's engines agree, and CI itself runs on it, not on whatever node the machine had.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}/${path}`, 'utf8');

const wanted = /^NODE_WANTED=(\d+)\.\d+\.\d+$/m.exec(read('.ci/run'))?.[1];

describe('the runtime', () => {
  it('is the same Node line in .ci/run, every Dockerfile stage and engines', () => {
    expect(wanted).toBeDefined();
    const froms = [...read('Dockerfile').matchAll(/^FROM node:(\S+)/gm)].map((match) => match[1] ?? '');
    expect(froms.length).toBeGreaterThan(0);
    // node:26-bookworm-slim and node:26.12.1-bookworm-slim alike name the line 26.
    const stages = froms.map((tag) => /^(\d+)[.-]/.exec(tag)?.[1] ?? tag);
    expect(new Set(stages)).toEqual(new Set([wanted]));
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const floor = Number(/^>=(\d+)$/.exec(engines)?.[1]);
    expect(floor).toBeLessThanOrEqual(Number(wanted));
    // Node 20 reached its end of life on 2026-04-30; 22 on 2027-04-30: no line below 24 is allowed in.
    expect(floor).toBeGreaterThanOrEqual(24);
  });

  // CI runs .ci/run with CI=true; the script moves onto the wanted line when the machine's node is older.
  it.runIf(process.env.CI === 'true')('is what CI runs the suite on, or a later line', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(Number(wanted));
  });
});
