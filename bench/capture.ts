import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Target } from './children.ts';
import type { Scenario } from './scenarios.ts';
import { CAPTURE_KEYS } from './capture-keys.ts';

/**
 * The capture phase: every request the bench will send, sent once through the (b) gateway while
 * the canned upstream records. Several lanes (CAPTURE_LANES) run side by side, each one request at a
 * time under its own API key (bench/capture-keys.ts); after each request the canned upstream
 * hands the lane the bodies it received under that key since the lane's last ask, and the
 * scenario's main operation among them is what the (d) proxy will send for that very request
 * (the gateway sends no request id upstream: one request in flight per key is what ties a body
 * to its request). A request whose main operation did not reach upstream was answered by a
 * cache: its set is not distinct, and the bench stops.
 */

/** One request, checked for 2xx; returns the answer's size in bytes. `role` names the target in the error. */
export async function probe(target: Target, role: string, path: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${target.base}${path}`, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${role} answered ${res.status} to ${path}: ${body.toString('utf8').slice(0, 200)}`);
  return body.length;
}

export interface Capture {
  /** Request URL -> the main operation's body the gateway sent for it. */
  table: Record<string, string>;
  requests: number;
  ms: number;
  /** Per scenario: the mean size of the body (d) sends up, in bytes. */
  bodyBytes: Map<string, number>;
}

export async function capture(gateway: Target, canned: Target, scenarios: readonly Scenario[]): Promise<Capture> {
  const started = performance.now();
  const table: Record<string, string> = {};
  // Each request once (a cached row's request is also the first of its distinct set).
  const work = new Map<string, Scenario>();
  for (const scenario of scenarios) for (const path of scenario.paths ?? [scenario.path]) if (!work.has(path)) work.set(path, scenario);
  const queue = [...work];
  let next = 0;
  const lane = async (apiKey: string): Promise<void> => {
    await canned.ask('drain', apiKey);
    while (next < queue.length) {
      const [path, scenario] = queue[next++] as [string, Scenario];
      await probe(gateway, '(b) gateway on the canned upstream, capturing', path, { ...scenario.headers, 'X-Api-Key': apiKey });
      const sent = (await canned.ask('drain', apiKey)).find((seen) => seen.operation === scenario.mainOperation);
      if (!sent) {
        throw new Error(`${scenario.name}: the gateway sent no ${scenario.mainOperation} for ${path.slice(0, 120)}: a cache answered it, so the set is not distinct`);
      }
      table[path] = sent.requestBody;
    }
  };
  await Promise.all(CAPTURE_KEYS.map(lane));
  const bodyBytes = new Map<string, number>();
  for (const scenario of scenarios) {
    const paths = scenario.paths ?? [scenario.path];
    bodyBytes.set(scenario.name, paths.reduce((sum, path) => sum + Buffer.byteLength(table[path] ?? ''), 0) / paths.length);
  }
  return { table, requests: work.size, ms: performance.now() - started, bodyBytes };
}

/** The table in a temp file for the (d) proxy (thousands of bodies do not fit in the environment); removed when the bench exits. */
export function writeTable(table: Record<string, string>): string {
  const file = join(tmpdir(), `v2bridge-bench-proxy-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(table));
  process.on('exit', () => rmSync(file, { force: true }));
  return file;
}
