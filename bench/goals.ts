import type { Measured } from './measure.ts';
import type { Scenario } from './scenarios.ts';
import { compareRatios, fixed, rowOf, type PairedRound } from './tables.ts';

/**
 * The speed goals, each against a floor measured in the same run, printed MET or NOT
 * MET with a closing "goals: N of M MET". A goal whose rows were not measured (BENCH_ONLY) is
 * left out of the count, and said so. The distinct rows are held to (t), the floor of a
 * translation (bench/targets/translator.ts: the same NerdGraph requests, parsed, mapped with
 * plain code, serialised), not to (d), which only streams bytes: what a gateway spends above (t)
 * is what it spends beyond translating.
 */
const CPU_CEILING = 1.5; // distinct (b) ÷ (t) CPU per request
const THROUGHPUT_FLOOR = 0.67; // distinct (b) ÷ (t) req/s
const P99_CEILING = 2; // distinct (b) ÷ (t) p99 at full connections
const PASSTHROUGH_FLOOR = 0.8; // (f) ÷ (d') req/s
const CACHED_SHOW_FLOOR = 0.3; // cached show (b) ÷ (c) hello-world req/s
const COMPARE_CEILING = 1.25; // compare p50 ÷ passthrough p50, at 1 connection and at full connections

export interface GoalInputs {
  rows: readonly Measured[];
  single: readonly Measured[];
  rounds: readonly PairedRound[];
  distinct: readonly Scenario[];
  cached: readonly Scenario[];
  connections: number;
}

export function goals({ rows, single, rounds, distinct, cached, connections }: GoalInputs): string {
  const lines: string[] = [];
  let met = 0;
  let counted = 0;
  const verdict = (ok: boolean): string => {
    counted++;
    if (ok) met++;
    return ok ? 'MET' : 'NOT MET';
  };
  const unmeasured: string[] = [];

  for (const scenario of distinct) {
    const [b, t] = [rowOf(rows, scenario, 'b'), rowOf(rows, scenario, 't')];
    if (!b || !t) {
      unmeasured.push(`${scenario.name} (b) vs (t)`);
      continue;
    }
    const [cpu, speed, p99] = [b.cpuPerReq / t.cpuPerReq, b.rps / t.rps, b.p99 / t.p99];
    lines.push(
      `- goal: ${scenario.name} (distinct), (b) ÷ (t) translator CPU/req <= ${CPU_CEILING}, req/s >= ${THROUGHPUT_FLOOR}, p99 at ${connections} connections <= ${P99_CEILING}: ` +
        `${fixed(cpu, 2)}×, ${fixed(speed, 2)}×, ${fixed(p99, 2)}× ${verdict(cpu <= CPU_CEILING && speed >= THROUGHPUT_FLOOR && p99 <= P99_CEILING)}`,
    );
  }

  for (const scenario of cached) {
    const [f, floor] = [rowOf(rows, scenario, 'f'), rowOf(rows, scenario, "d'")];
    if (!f || !floor) {
      unmeasured.push(`${scenario.name} (f) vs (d')`);
      continue;
    }
    const ratio = f.rps / floor.rps;
    lines.push(`- goal: ${scenario.name}, passthrough (f) ÷ (d') proxy → legacy req/s >= ${PASSTHROUGH_FLOOR}: ${fixed(ratio, 2)}× ${verdict(ratio >= PASSTHROUGH_FLOOR)}`);
  }

  const show = cached.find((s) => s.mainOperation === 'ApplicationByGuid');
  const [showB, hello] = show ? [rowOf(rows, show, 'b'), rowOf(rows, show, 'c')] : [undefined, undefined];
  if (show && showB && hello) {
    const ratio = showB.rps / hello.rps;
    lines.push(`- goal: ${show.name}, (b) ÷ (c) hello-world req/s >= ${CACHED_SHOW_FLOOR}: ${fixed(ratio, 3)}× ${verdict(ratio >= CACHED_SHOW_FLOOR)}`);
  } else unmeasured.push('the cached show (b) vs (c)');

  for (const scenario of cached) {
    const compare = compareRatios(rows, single, rounds, scenario);
    if (!compare) {
      unmeasured.push(`${scenario.name} (g) vs (f)`);
      continue;
    }
    const each = compare.paired.length > 1 ? ` (median of ${compare.paired.length} paired rounds: ${compare.paired.map((r) => fixed(r, 2)).join(', ')})` : '';
    lines.push(
      `- goal: ${scenario.name}, compare caller p50 ÷ passthrough p50 <= ${COMPARE_CEILING} at 1 connection and at ${connections}: ${fixed(compare.one, 2)}× at 1 connection, ${fixed(compare.many, 2)}× at ${connections} connections${each} ` +
        verdict(compare.many <= COMPARE_CEILING && compare.one <= COMPARE_CEILING),
    );
  }

  if (unmeasured.length > 0) lines.push(`- not measured in this run (BENCH_ONLY), so not counted: ${unmeasured.join(', ')}`);
  lines.push('', `goals: ${met} of ${counted} MET`);
  return lines.join('\n');
}
