/**
 * Counts of the NerdGraph requests the sandbox answered, by operation name (the request's
 * `operationName`, else the name of its one operation), with the NRQL queries each ran: every
 * `nrql(query:)` field executed (Actor.nrql and Account.nrql, aliased ones each counted). The
 * compatibility report's cost table (`npm run compat`) and its test read them: what a v2 call
 * costs in NerdGraph calls and NRQL queries is counted where New Relic would count it.
 *
 * Every HTTP request to /graphql counts as a call, refused ones too (a bad key, the concurrency
 * limit, a body that is not GraphQL): each one is a round trip the client paid for. Those have
 * no operation read yet and count as REFUSED_OPERATION.
 */
export interface ReadCounts {
  /** NerdGraph HTTP requests, by operation name. */
  calls: Record<string, number>;
  /** NRQL queries executed, by the operation of the request that ran them. */
  nrql: Record<string, number>;
  totalCalls: number;
  totalNrql: number;
}

export interface ReadCounter {
  calls: Map<string, number>;
  nrql: Map<string, number>;
}

/** The label of requests answered before their operation was read (401, 429, 400, 413, a document that does not validate). */
export const REFUSED_OPERATION = '(refused)';
/** The label of a GraphQL document whose operation has no name. */
export const ANONYMOUS_OPERATION = '(anonymous)';

export const createReadCounter = (): ReadCounter => ({ calls: new Map(), nrql: new Map() });

/** The label of operations past the bound below (names are the client's own: without a bound, any client could grow the counts without end). */
export const OTHER_OPERATION = '(other)';
/** Distinct operation names counted; the gateway sends a few dozen. */
const MAX_OPERATIONS = 500;

/** One NerdGraph request of `operation` that ran `nrqlQueries` NRQL queries. */
export function countRead(counter: ReadCounter, name: string, nrqlQueries: number): void {
  const operation = counter.calls.has(name) || counter.calls.size < MAX_OPERATIONS ? name : OTHER_OPERATION;
  counter.calls.set(operation, (counter.calls.get(operation) ?? 0) + 1);
  if (nrqlQueries > 0) counter.nrql.set(operation, (counter.nrql.get(operation) ?? 0) + nrqlQueries);
}

/** A snapshot: later requests do not change it. */
export function readCounts(counter: ReadCounter): ReadCounts {
  const sorted = (counts: Map<string, number>): Record<string, number> => Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : 1)));
  const sum = (counts: Map<string, number>): number => [...counts.values()].reduce((n, v) => n + v, 0);
  return { calls: sorted(counter.calls), nrql: sorted(counter.nrql), totalCalls: sum(counter.calls), totalNrql: sum(counter.nrql) };
}

/** Starts counting from zero (between two measured requests). */
export function resetReadCounts(counter: ReadCounter): void {
  counter.calls.clear();
  counter.nrql.clear();
}
