import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Target } from './children.ts';
import type { Scenario } from './scenarios.ts';
import { CAPTURE_KEYS } from './capture-keys.ts';
import type { RecordedCall } from './targets/translator-server.ts';

/** Operations a gateway sends per caller (and keeps), not per request: not replayed by (t). */
export const PER_CALLER_OPERATIONS: ReadonlySet<string> = new Set(['AccessibleAccounts']);

/** Consecutive requests of one scenario a lane takes at a time. */
const CHUNK = 50;

/**
 * The capture phase: every request the bench will send, sent once through the (b) gateway while
 * the canned upstream records. Several lanes (CAPTURE_LANES) run side by side, each one request at a
 * time under its own API key (bench/capture-keys.ts); after each request the canned upstream
 * hands the lane the bodies it received under that key since the lane's last ask (the gateway
 * sends no request id upstream: one request in flight per key is what ties a body to its
 * request). Every body of a request is kept, in the order sent: the scenario's main operation
 * among them is what the (d) proxy sends for that very request, and all of them are what the
 * (t) translator sends, less the caller's account lookup (PER_CALLER_OPERATIONS), which the
 * gateway sends once per key and keeps, not once per request. A lane takes its requests in runs
 * of consecutive ones of one scenario (CHUNK), so what a gateway keeps per caller between
 * requests (a host directory per app) is read as a single caller walking the set reads it: on
 * the first request of the app in the run, not on each. A request whose main operation did not
 * reach upstream was answered by a cache: its set is not distinct, and the bench stops.
 */
/** One request, checked for 2xx; returns the answer's size in bytes. `role` names the target in the error. */
export async function probe(target: Target, role: string, path: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${target.base}${path}`, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${role} answered ${res.status} to ${path}: ${body.toString('utf8').slice(0, 200)}`);
  return body.length;
}

export interface Capture {
  /** Request URL -> the main operation's body the gateway sent for it ((d) sends it). */
  table: Record<string, string>;
  /** Request URL -> every body the gateway sent for it, in order, less PER_CALLER_OPERATIONS ((t) sends them). */
  calls: Record<string, RecordedCall[]>;
  requests: number;
  ms: number;
  /** Per scenario: the mean size of the body (d) sends up, in bytes. */
  bodyBytes: Map<string, number>;
  /** Per scenario: the mean number of NerdGraph requests (t) sends per request. */
  callsPerRequest: Map<string, number>;
}

export async function capture(gateway: Target, canned: Target, scenarios: readonly Scenario[]): Promise<Capture> {
  const started = performance.now();
  const table: Record<string, string> = {};
  const calls: Record<string, RecordedCall[]> = {};
  // Each request once (a cached row's request is also the first of its distinct set).
  const work = new Map<string, Scenario>();
  for (const scenario of scenarios) for (const path of scenario.paths ?? [scenario.path]) if (!work.has(path)) work.set(path, scenario);
  // Runs of up to CHUNK consecutive requests of one scenario, in the order above.
  const chunks: [string, Scenario][][] = [];
  for (const entry of work) {
    const last = chunks.at(-1);
    if (last && last.length < CHUNK && last[0]?.[1] === entry[1]) last.push(entry);
    else chunks.push([entry]);
  }
  let next = 0;
  const lane = async (apiKey: string): Promise<void> => {
    await canned.ask('drain', apiKey);
    while (next < chunks.length) {
      for (const [path, scenario] of chunks[next++] as [string, Scenario][]) {
        await probe(gateway, '(b) gateway on the canned upstream, capturing', path, { ...scenario.headers, 'X-Api-Key': apiKey });
        const seen = await canned.ask('drain', apiKey);
        const sent = seen.find((s) => s.operation === scenario.mainOperation);
        if (!sent) {
          throw new Error(`${scenario.name}: the gateway sent no ${scenario.mainOperation} for ${path.slice(0, 120)}: a cache answered it, so the set is not distinct`);
        }
        table[path] = sent.requestBody;
        calls[path] = seen.filter((s) => !PER_CALLER_OPERATIONS.has(s.operation)).map((s) => ({ operation: s.operation, body: s.requestBody }));
      }
    }
  };
  await Promise.all(CAPTURE_KEYS.map(lane));
  const bodyBytes = new Map<string, number>();
  const callsPerRequest = new Map<string, number>();
  for (const scenario of scenarios) {
    const paths = scenario.paths ?? [scenario.path];
    bodyBytes.set(scenario.name, paths.reduce((sum, path) => sum + Buffer.byteLength(table[path] ?? ''), 0) / paths.length);
    callsPerRequest.set(scenario.name, paths.reduce((sum, path) => sum + (calls[path]?.length ?? 0), 0) / paths.length);
  }
  return { table, calls, requests: work.size, ms: performance.now() - started, bodyBytes, callsPerRequest };
}

/** A table in a temp file for the (d) proxy or the (t) translator (thousands of bodies do not fit in the environment); removed when the bench exits. */
export function writeTable(table: Record<string, unknown>, name = 'proxy'): string {
  const file = join(tmpdir(), `v2bridge-bench-${name}-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(table));
  process.on('exit', () => rmSync(file, { force: true }));
  return file;
}
