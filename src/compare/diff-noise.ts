import { maskSecrets } from './secrets.ts';
import type { JsonValue } from '../v2/xml.ts';
import { decodeAnswerBody } from './answer.ts';
import { diffValues, headerDifferences } from './diff-walk.ts';
import type { AnswerSnapshot, Difference } from './types.ts';

/**
 * Noise (diff.ts judges with it): where two legacy answers to the same request differ, read as
 * "this moves anyway". A difference of the translation there is noise rather than a mismatch,
 * when it is the same kind of movement (NoiseIndex, sameMovement).
 */

/** The strict ancestors of a concrete path: `a[id=5].b` -> ``, `a`, `a[id=5]`. */
export function ancestorPaths(path: string): string[] {
  if (path.startsWith('(')) {
    const dot = path.indexOf('.');
    return dot === -1 ? [] : [path.slice(0, dot)];
  }
  const ancestors = path === '' ? [] : [''];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < path.length; i++) {
    const ch = path[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (depth > 0) {
      if (ch === '"') inString = true;
      else if (ch === ']') depth--;
      continue;
    }
    if ((ch === '.' || ch === '[') && i > 0) ancestors.push(path.slice(0, i));
    if (ch === '[') depth++;
  }
  return ancestors;
}

/**
 * A difference is noise when the legacy answers differ at its own path, or under a node where
 * they differ (an element present in one legacy answer only: everything in it is unstable).
 * Two refinements of "ancestor or descendant", so noise never hides a real mismatch: a list
 * whose length moved between the legacy calls only excuses a length difference there, not every
 * element below it; and only a length difference is excused by noise inside its elements (a
 * node missing from the translation is real whatever moves inside it).
 */
export class NoiseIndex {
  private readonly exact = new Map<string, Difference>();
  private readonly unstableNodes = new Set<string>();
  private readonly aboveNoise = new Set<string>();

  constructor(differences: readonly Difference[]) {
    for (const d of differences) {
      this.exact.set(d.path, d);
      if (d.kind !== 'length') this.unstableNodes.add(d.path);
      for (const ancestor of ancestorPaths(d.path)) this.aboveNoise.add(ancestor);
    }
  }

  covers(d: Difference): boolean {
    const moved = this.exact.get(d.path);
    if (moved !== undefined) return sameMovement(moved, d);
    if (d.kind === 'length' && this.aboveNoise.has(d.path)) return true;
    if (this.unstableNodes.size === 0) return false;
    return ancestorPaths(d.path).some((ancestor) => this.unstableNodes.has(ancestor));
  }
}

/**
 * How far from the first legacy value a translated number may be and still be noise: within
 * NOISE_SPREAD times what the legacy value moved between its two reads, or NOISE_FLOOR of it
 * (two reads a moment apart can land close together by chance while the open minute moves).
 */
export const NOISE_SPREAD = 10;
export const NOISE_FLOOR = 0.02;

/**
 * Is the translation's difference the kind of movement the legacy answers showed there? The same
 * kind of difference, and for numbers a distance of the order of the legacy movement: a field
 * the translation dropped, a changed type or a value off by orders of magnitude stays a mismatch
 * even where the legacy value moves.
 */
function sameMovement(moved: Difference, d: Difference): boolean {
  if (moved.kind !== d.kind) return false;
  if (d.kind !== 'value' || typeof d.legacy !== 'number' || typeof d.translated !== 'number') return true;
  if (typeof moved.translated !== 'number') return false;
  const spread = Math.abs(moved.translated - d.legacy);
  return Math.abs(d.translated - d.legacy) <= Math.max(NOISE_SPREAD * spread, NOISE_FLOOR * Math.abs(d.legacy));
}

export function noiseOf(legacy: AnswerSnapshot, legacyBody: JsonValue, again: AnswerSnapshot | undefined): NoiseIndex | undefined {
  if (again === undefined) return undefined;
  // A second call that failed differently says the route is flaky, not where the body moves.
  if (again.status !== legacy.status) return new NoiseIndex(headerDifferences(legacy, again).filter((d) => d.path === '(status)'));
  const decoded = decodeAnswerBody(again.contentType, again.body);
  if (!decoded.ok) return undefined;
  return new NoiseIndex([...headerDifferences(legacy, again), ...diffValues(legacyBody, maskSecrets(decoded.value))]);
}
