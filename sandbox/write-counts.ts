/**
 * Counts of the writes the sandbox executed, by face: the legacy face's by `METHOD template`
 * (`POST /v2/applications/{id}/deployments.{format}`), the NerdGraph face's by mutation field
 * (`changeTrackingCreateEvent`). Both faces write one shared world, so a write through either
 * is one write: the migration modes' tests use these counts to show no write ran twice.
 *
 * A write counts when it was executed: a legacy write answered 2xx, a mutation field that
 * resolved without an error (and, for payload-error mutations, with no payload errors).
 * Refused writes change nothing and are not counted.
 */
export interface WriteCounts {
  legacy: Record<string, number>;
  nerdgraph: Record<string, number>;
  total: number;
}

export interface WriteCounter {
  legacy: Map<string, number>;
  nerdgraph: Map<string, number>;
}

export const createWriteCounter = (): WriteCounter => ({ legacy: new Map(), nerdgraph: new Map() });

export function countWrite(counter: WriteCounter, face: 'legacy' | 'nerdgraph', label: string): void {
  const counts = counter[face];
  counts.set(label, (counts.get(label) ?? 0) + 1);
}

/** A snapshot: later writes do not change it. */
export function writeCounts(counter: WriteCounter): WriteCounts {
  const legacy = Object.fromEntries([...counter.legacy].sort(([a], [b]) => (a < b ? -1 : 1)));
  const nerdgraph = Object.fromEntries([...counter.nerdgraph].sort(([a], [b]) => (a < b ? -1 : 1)));
  const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((n, v) => n + v, 0);
  return { legacy, nerdgraph, total: sum(legacy) + sum(nerdgraph) };
}

/** A legacy route is a write when it reads its own body and is not a GET (see legacy/routes.ts). */
export const isLegacyWrite = (method: string, ownBody: boolean): boolean => ownBody && method !== 'GET' && method !== 'HEAD';
