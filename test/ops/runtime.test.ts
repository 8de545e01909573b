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
    const stages = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((match) => match[1]);
    expect(stages.length).toBeGreaterThan(0);
    expect(new Set(stages)).toEqual(new Set([wanted]));
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const floor = Number(/^>=(\d+)$/.exec(engines)?.[1]);
    expect(floor).toBeLessThanOrEqual(Number(wanted));
    // Node 20 reached its end of life on 2026-04-30; 22 on 2027-04-30: no line below 24 is allowed in.
    expect(floor).toBeGreaterThanOrEqual(24);
  });

  it.runIf(process.env.CI === 'true')('is what CI runs the suite on', () => {
    expect(process.versions.node.split('.')[0]).toBe(wanted);
  });
});
