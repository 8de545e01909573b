/**
 * npm run growth: cost per v2 request at 1x, 10x and 100x data, as a
 * Markdown table for docs/performance.md "## Growth", then each route's growth per 10x.
 *
 * Each dimension's sandbox runs in a child process (bench/growth-child.ts) behind a counter of
 * NerdGraph calls, NRQL queries and answer bytes; the gateway runs here, in process, as the
 * tests build it, so its CPU time (process.cpuUsage around each request) is its own. Counts are
 * exact and repeatable; CPU is the median of GROWTH_REPEAT fresh gateways, after one unmeasured
 * pass over every 1x world (JIT warm-up).
 *
 *   GROWTH_ONLY=apps|hosts|names|events   one dimension (a prefix of its name)
 *   GROWTH_REPEAT=3                       fresh gateways per route (CPU median)
 *   GROWTH_MAX_SCALE=2                    1x and 10x only
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DIMENSIONS, measureRoute, type Dimension, type Measurement } from './growth-measure.ts';
import type { GrowthWorld } from './growth-sandbox.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./growth-child.ts', import.meta.url));
const Ready = z.object({ origin: z.string() });

const only = process.env.GROWTH_ONLY;
const repeat = Math.max(1, Number(process.env.GROWTH_REPEAT ?? 3));
const maxScale = Math.min(3, Math.max(1, Number(process.env.GROWTH_MAX_SCALE ?? 3)));

async function startChild(world: GrowthWorld): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(world)], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const origin = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve(Ready.parse(message).origin));
    child.once('exit', (code) => reject(new Error(`growth: the sandbox child exited (${code})`)));
  });
  return { origin, child };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Every route of a dimension at one scale, each `times` times on a fresh gateway; CPU is the median. */
async function measureScale(dimension: Dimension, scale: number, times: number): Promise<Measurement[]> {
  const world = dimension.worldAt(scale);
  const { origin, child } = await startChild(world);
  try {
    const rows: Measurement[] = [];
    for (const route of dimension.routes(world, scale)) {
      const runs: Measurement[][] = [];
      for (let run = 0; run < times; run++) runs.push(await measureRoute(dimension.name, scale, route, { origin, graphqlUrl: `${origin}/graphql`, cpu: true }));
      const first = runs[0] ?? [];
      for (const [index, measured] of first.entries()) {
        const same = runs.map((run) => run[index] as Measurement);
        // Counts are deterministic: a run that differs is a finding, not noise.
        if (same.some((other) => other.calls !== measured.calls || other.upstreamBytes !== measured.upstreamBytes)) console.error(`note: ${measured.route} at ${scale} counted differently between runs`);
        rows.push({ ...measured, cpuMicros: median(same.map((other) => other.cpuMicros)) });
      }
    }
    return rows;
  } finally {
    child.disconnect();
  }
}

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
const ratio = (to: number, from: number): string => (from === 0 ? (to === 0 ? '1' : '∞') : `${(to / from).toFixed(to / from >= 10 ? 0 : 1)}`);

function table(rows: Measurement[]): string {
  const lines = [
    '| dimension | scale | route | requests | items | calls | NRQL | upstream KB | answer KB | upstream B/item | CPU µs |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const perItem = row.items === 0 ? '-' : String(Math.round(row.upstreamBytes / row.items));
    lines.push(`| ${row.dimension} | ${row.scale} | ${row.route} | ${row.requests} | ${row.items} | ${row.calls} | ${row.nrql} | ${kb(row.upstreamBytes)} | ${kb(row.answerBytes)} | ${perItem} | ${Math.round(row.cpuMicros)} |`);
  }
  return lines.join('\n');
}

/** Growth per 10x of the knob: how much items, calls, upstream bytes and CPU multiply. */
function growth(rows: Measurement[]): string {
  const lines = ['| dimension | route | step | items × | calls × | NRQL × | upstream × | CPU × |', '|---|---|---|---:|---:|---:|---:|---:|'];
  const keyOf = (row: Measurement) => `${row.dimension}|${row.route}`;
  const byRoute = new Map<string, Measurement[]>();
  for (const row of rows) byRoute.set(keyOf(row), [...(byRoute.get(keyOf(row)) ?? []), row]);
  for (const series of byRoute.values()) {
    for (let step = 1; step < series.length; step++) {
      const [from, to] = [series[step - 1] as Measurement, series[step] as Measurement];
      lines.push(
        `| ${to.dimension} | ${to.route} | ${from.scale}→${to.scale} | ${ratio(to.items, from.items)} | ${ratio(to.calls, from.calls)} | ${ratio(to.nrql, from.nrql)} | ${ratio(to.upstreamBytes, from.upstreamBytes)} | ${ratio(to.cpuMicros, from.cpuMicros)} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dimensions = DIMENSIONS.filter((dimension) => only === undefined || dimension.name.startsWith(only));
  if (dimensions.length === 0) throw new Error(`GROWTH_ONLY=${only} names no dimension (${DIMENSIONS.map((d) => d.name).join(', ')})`);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`growth: ${dimensions.map((d) => d.name).join(', ')}; scales ${maxScale === 3 ? '1x, 10x, 100x' : maxScale === 2 ? '1x, 10x' : '1x'}; ${repeat} fresh gateway(s) per route; ${cpus().length}-core ${cpu.trim()}, node ${process.version}`);
  // JIT warm-up: every route once at 1x, not measured.
  for (const dimension of dimensions) await measureScale(dimension, dimension.scales[0], 1);
  const rows: Measurement[] = [];
  for (const dimension of dimensions) {
    for (const scale of dimension.scales.slice(0, maxScale)) {
      const started = Date.now();
      rows.push(...(await measureScale(dimension, scale, repeat)));
      console.error(`  ${dimension.name} at ${scale}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }
  console.log(`\n${table(rows)}\n\nGrowth per 10x of the knob:\n\n${growth(rows)}`);
}

await main();
