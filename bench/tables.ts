import type { Measured, Settings, TargetKey } from './measure.ts';
import { median } from './measure.ts';
import type { Scenario } from './scenarios.ts';

/** The bench's Markdown tables and sections, from the measured rows (bench/run.ts prints them). */

export const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** The row of `scenario` on target `key` among `from`. */
export const rowOf = (from: readonly Measured[], scenario: Scenario, key: TargetKey): Measured | undefined =>
  from.find((r) => r.scenario === scenario && r.target.key === key);

export function table(rows: readonly Measured[]): string {
  const lines = [
    '| scenario | target | req/s | p50 ms | p99 ms | target CPU µs/req | upstream req per request | main operation per request | non-2xx |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const failures = r.errors > 0 ? `${r.non2xx} (+${r.errors} errors)` : String(r.non2xx);
    const upstream = r.upstreamPerReq === undefined ? 'n/a' : fixed(r.upstreamPerReq, 3);
    const main = r.mainPerReq === undefined ? 'n/a' : fixed(r.mainPerReq, 3);
    lines.push(
      `| ${r.scenario.name} | (${r.target.key}) ${r.target.label} | ${fixed(r.rps, 0)} | ${fixed(r.p50, 2)} | ${fixed(r.p99, 2)} | ${fixed(r.cpuPerReq, 0)} | ${upstream} | ${main} | ${failures} |`,
    );
  }
  return lines.join('\n');
}

/** A gateway row of a distinct scenario whose main operation reached upstream less than this per request was partly served by a cache (the margin covers requests cut at the window's edges). */
const MAIN_PER_REQUEST_FLOOR = 0.99;

/**
 * The distinct rows' honesty check. Only a gateway has a micro-cache, so a gateway row fails when
 * its own rate brings a request back inside the window, or when its main operation reached
 * upstream less than once per request. The headroom against the fastest target (normally (d),
 * the rate a gateway could at best reach) is a warning: the set is then too small for a gateway
 * as fast as that target. Returns the lines and how many rows failed.
 */
export function distinctCheck(rows: readonly Measured[], distinct: readonly Scenario[], microCacheMs: number): { text: string; failed: number } {
  const lines: string[] = [];
  let failed = 0;
  for (const scenario of distinct) {
    const mine = rows.filter((r) => r.scenario === scenario);
    if (mine.length === 0) continue;
    const size = scenario.paths?.length ?? 1;
    const repeatS = (r: Measured): number => size / r.rps;
    const fastest = mine.reduce((best, r) => (r.rps > best.rps ? r : best));
    const headroom = repeatS(fastest) * 1000 > microCacheMs;
    const gateways = mine.filter((r) => r.mainPerReq !== undefined);
    const repeated = gateways.filter((r) => repeatS(r) * 1000 <= microCacheMs);
    const served = gateways.filter((r) => (r.mainPerReq as number) < MAIN_PER_REQUEST_FLOOR);
    failed += new Set([...repeated, ...served]).size;
    lines.push(
      `- ${scenario.name}: ${scenario.varies} (micro-cache ${microCacheMs} ms); a request comes back every ` +
        `${gateways.map((r) => `${fixed(repeatS(r), 2)} s on (${r.target.key})`).join(', ')}` +
        (repeated.length > 0 ? ` **TOO SOON ON ${repeated.map((r) => `(${r.target.key})`).join(', ')}: the micro-cache can answer repeats**` : '') +
        `; ${scenario.mainOperation} per request: ${gateways.map((r) => `(${r.target.key}) ${fixed(r.mainPerReq as number, 3)}`).join(', ') || 'no gateway row'}` +
        (served.length > 0 ? ` **A CACHE SERVED ${served.map((r) => `(${r.target.key})`).join(', ')}: below ${MAIN_PER_REQUEST_FLOOR}**` : '') +
        (headroom ? '' : `; warning: at the fastest target's rate, (${fastest.target.key}) ${fixed(fastest.rps, 0)} req/s, it would come back every ${fixed(repeatS(fastest), 2)} s: too small a set for a gateway that fast`),
    );
  }
  return { text: lines.join('\n'), failed };
}

export function latencyTable(single: readonly Measured[], scenarios: readonly Scenario[]): string {
  const lines = [
    '| scenario | (b) gateway p50 ms, 1 connection | (t) translator p50 ms, 1 connection | (d) proxy p50 ms, 1 connection | added p50 ms over (t) | added p50 ms over (d) | (b) p99 ms | (t) p99 ms | (d) p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of scenarios) {
    const [b, t, d] = [rowOf(single, scenario, 'b'), rowOf(single, scenario, 't'), rowOf(single, scenario, 'd')];
    if (!b || (!d && !t)) continue;
    const [tp50, tp99, dp50, dp99] = [t?.p50 ?? NaN, t?.p99 ?? NaN, d?.p50 ?? NaN, d?.p99 ?? NaN];
    lines.push(
      `| ${scenario.name} | ${fixed(b.p50, 2)} | ${fixed(tp50, 2)} | ${fixed(dp50, 2)} | ${fixed(b.p50 - tp50, 2)} | ${fixed(b.p50 - dp50, 2)} | ${fixed(b.p99, 2)} | ${fixed(tp99, 2)} | ${fixed(dp99, 2)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The distinct rows' ratio table: (b) against (t), the floor of a translation (what the goals
 * read), and against (d), the pass-through floor; (t) against (d) is what translating itself
 * costs; (a) ÷ (b) what the sandbox's own work does to the gateway.
 */
export function distinctRatios(rows: readonly Measured[], single: readonly Measured[], scenarios: readonly Scenario[]): string {
  const lines = [
    '| scenario | (b) ÷ (t) req/s | (b) ÷ (t) CPU/req | (b) ÷ (t) p99 | (b) ÷ (d) req/s | (b) ÷ (d) CPU/req | (b) ÷ (d) p99 | (t) ÷ (d) CPU/req | added p50 at 1 connection over (t), ms | (a) ÷ (b) req/s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of scenarios) {
    const [a, b, d, t] = (['a', 'b', 'd', 't'] as const).map((key) => rowOf(rows, scenario, key));
    const [b1, t1] = [rowOf(single, scenario, 'b'), rowOf(single, scenario, 't')];
    if (!b || (!d && !t)) continue;
    const over = (key: 'rps' | 'cpuPerReq' | 'p99', floor: Measured | undefined): string => fixed(b[key] / (floor?.[key] ?? NaN), 2);
    lines.push(
      `| ${scenario.name} | ${over('rps', t)} | ${over('cpuPerReq', t)} | ${over('p99', t)} | ${over('rps', d)} | ${over('cpuPerReq', d)} | ${over('p99', d)} | ` +
        `${fixed((t?.cpuPerReq ?? NaN) / (d?.cpuPerReq ?? NaN), 2)} | ${fixed(b1 && t1 ? b1.p50 - t1.p50 : NaN, 2)} | ${fixed(a ? a.rps / b.rps : NaN, 2)} |`,
    );
  }
  return lines.join('\n');
}

export function ratios(rows: readonly Measured[], single: readonly Measured[], scenarios: readonly Scenario[]): string {
  const lines: string[] = [];
  for (const scenario of scenarios) {
    const [a, b, c, d] = (['a', 'b', 'c', 'd'] as const).map((key) => rowOf(rows, scenario, key));
    const [b1, d1] = [rowOf(single, scenario, 'b'), rowOf(single, scenario, 'd')];
    if (!b || !d) continue;
    lines.push(
      `- ${scenario.name}: (b) ÷ (d) proxy: req/s ${fixed(b.rps / d.rps, 2)}×, CPU/req ${fixed(b.cpuPerReq / d.cpuPerReq, 2)}×, p99 ${fixed(b.p99 / d.p99, 2)}×` +
        (b1 && d1 ? `; added p50 at 1 connection ${fixed(b1.p50 - d1.p50, 2)} ms` : '') +
        (a ? `; (a) on the sandbox ÷ (b): req/s ${fixed(a.rps / b.rps, 2)}×` : '') +
        (c ? `; throughput vs (c) hello-world: (b) ${fixed(b.rps / c.rps, 3)}, (d) ${fixed(d.rps / c.rps, 3)}` : ''),
    );
  }
  return lines.join('\n');
}

/** (i) tracing on against (b) tracing off, the same gateway on the same canned upstream: the cost of tracing, as ratios. */
export function tracingSection(rows: readonly Measured[], scenarios: readonly Scenario[]): string {
  const lines = ['| scenario | (b) off: req/s | (i) on: req/s | (b) CPU µs/req | (i) CPU µs/req | CPU (i) ÷ (b) | p50 (i) ÷ (b) |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const scenario of scenarios) {
    const [off, on] = [rowOf(rows, scenario, 'b'), rowOf(rows, scenario, 'i')];
    if (!off || !on) continue;
    lines.push(
      `| ${scenario.name} | ${fixed(off.rps, 0)} | ${fixed(on.rps, 0)} | ${fixed(off.cpuPerReq, 0)} | ${fixed(on.cpuPerReq, 0)} | ${fixed(on.cpuPerReq / off.cpuPerReq, 2)}× | ${fixed(on.p50 / off.p50, 2)}× |`,
    );
  }
  return lines.length > 2 ? lines.join('\n') : '';
}

/** (h) against the single gateway (b) and the proxy floor (d) of the same run. */
export function replicaSection(rows: readonly Measured[], single: readonly Measured[], scenarios: readonly Scenario[]): string {
  const lines: string[] = [];
  for (const scenario of scenarios) {
    const [h, b, d, h1, b1] = [rowOf(rows, scenario, 'h'), rowOf(rows, scenario, 'b'), rowOf(rows, scenario, 'd'), rowOf(single, scenario, 'h'), rowOf(single, scenario, 'b')];
    if (!h) continue;
    const parts = [`- ${scenario.name}, (h) replica B: ${fixed(h.rps, 0)} req/s, p50 ${fixed(h.p50, 2)} ms`];
    if (b) parts.push(`(h) ÷ (b) single gateway: req/s ${fixed(h.rps / b.rps, 2)}×, p50 ${fixed(h.p50 / b.p50, 2)}×, CPU/req ${fixed(h.cpuPerReq / b.cpuPerReq, 2)}×`);
    if (d) parts.push(`(h) ÷ (d) proxy: req/s ${fixed(h.rps / d.rps, 2)}×`);
    if (h1 && b1) parts.push(`added p50 at 1 connection over (b) ${fixed(h1.p50 - b1.p50, 2)} ms`);
    parts.push(`upstream req per request ${fixed(h.upstreamPerReq ?? NaN, 3)}${b ? ` ((b): ${fixed(b.upstreamPerReq ?? NaN, 3)})` : ''}`);
    if (h.side) {
      parts.push(`Redis: ${fixed(h.side.commandsPerReq, 2)} commands and ${fixed(h.side.cpuPerReq, 0)} µs CPU per request (not in the gateway CPU column)`);
      parts.push(`B's shared-state fallbacks to memory while measured: ${h.side.fallbacks}${h.side.fallbacks > 0 ? ' (Redis too slow or gone: B was partly not sharing)' : ''}`);
    }
    lines.push(parts.join('; '));
  }
  return lines.join('\n');
}

export interface PairedRound {
  scenario: Scenario;
  ratio: number;
}

/** Compare p50 ÷ passthrough p50 at full connections (median of the paired rounds) and at 1 connection. */
export function compareRatios(rows: readonly Measured[], single: readonly Measured[], rounds: readonly PairedRound[], scenario: Scenario): { many: number; one: number; paired: number[] } | undefined {
  const [f, g, f1, g1] = [rowOf(rows, scenario, 'f'), rowOf(rows, scenario, 'g'), rowOf(single, scenario, 'f'), rowOf(single, scenario, 'g')];
  if (!f || !g || !f1 || !g1) return undefined;
  const paired = rounds.filter((r) => r.scenario === scenario).map((r) => r.ratio);
  return { many: paired.length > 0 ? median(paired) : g.p50 / f.p50, one: g1.p50 / f1.p50, paired };
}

/** The migration-mode rows: passthrough against its floor (d') and the legacy API called directly (e), compare against passthrough. */
export function modesSection(rows: readonly Measured[], single: readonly Measured[], shadow: Record<string, number>, settings: Settings, rounds: readonly PairedRound[], scenarios: readonly Scenario[]): string {
  const lines = [
    `| scenario | (e) legacy direct req/s | (d') proxy → legacy req/s | (f) passthrough req/s | (g) compare req/s | (f) ÷ (d') req/s | (f) ÷ (e) req/s | p50 ms (d') / (f) / (g) | 1 connection p50 ms (e) / (f) / (g) | compare p50 ÷ passthrough p50 (${settings.connections} connections, median of the paired rounds; 1 connection) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of scenarios) {
    const [e, dl, f, g] = (['e', "d'", 'f', 'g'] as const).map((key) => rowOf(rows, scenario, key));
    const [e1, f1, g1] = (['e', 'f', 'g'] as const).map((key) => rowOf(single, scenario, key));
    if (!f) continue;
    const compare = compareRatios(rows, single, rounds, scenario);
    lines.push(
      `| ${scenario.name} | ${fixed(e?.rps ?? NaN, 0)} | ${fixed(dl?.rps ?? NaN, 0)} | ${fixed(f.rps, 0)} | ${fixed(g?.rps ?? NaN, 0)} | ${fixed(f.rps / (dl?.rps ?? NaN), 2)} | ${fixed(f.rps / (e?.rps ?? NaN), 2)} | ` +
        `${fixed(dl?.p50 ?? NaN, 2)} / ${fixed(f.p50, 2)} / ${fixed(g?.p50 ?? NaN, 2)} | ${fixed(e1?.p50 ?? NaN, 2)} / ${fixed(f1?.p50 ?? NaN, 2)} / ${fixed(g1?.p50 ?? NaN, 2)} | ` +
        `${fixed(compare?.many ?? NaN, 2)}; ${fixed(compare?.one ?? NaN, 2)} |`,
    );
  }
  const outcomes = Object.entries(shadow).map(([outcome, n]) => `${outcome} ${n}`).join(', ');
  return [...lines, '', `(g) shadow work over the whole run: ${outcomes || 'none recorded'} (dropped: shed because the queue was full or the event loop busy, so callers never wait for it).`].join('\n');
}
