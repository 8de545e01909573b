import autocannon from 'autocannon';
import type { Target } from './children.ts';
import type { SideSample } from './replica-row.ts';
import type { Scenario } from './scenarios.ts';

/**
 * One measurement of one scenario on one target: autocannon after a warm-up, with the target's
 * own CPU, its NerdGraph calls (by operation, for gateways) and, for (h), Redis's share.
 */
export const TARGET_KEYS = ['a', 'b', 'c', 'd', "d'", 'e', 'f', 'g', 'h', 'i', 't'] as const;
export type TargetKey = (typeof TARGET_KEYS)[number];

export interface Settings {
  durationS: number;
  warmupS: number;
  connections: number;
  apmApps: number;
}

export interface TargetSpec {
  key: TargetKey;
  label: string;
  target: Target;
  gateway: boolean;
  /** The warm-up goes here instead of `target` ((h): replica A warms, replica B is measured). */
  warmOn?: Target;
  /**
   * Before that warm-up, one on `target` itself with this key instead of the scenario's (for a
   * warm-up plus a measurement's time): its code warms (JIT) while every cache entry it makes
   * belongs to another caller ((h): so B is not measured cold, yet finds nothing of its own for
   * the scenario's key).
   */
  jitWarmKey?: string;
  /** Asked in the legacy API's own ids (Scenario.legacyPath): a legacy client's target ((d'), (e), (f), (g)). */
  legacyIds?: true;
  /** Only these scenarios (by name); all when unset. */
  scenarios?: readonly string[];
  /** A process the target leans on, sampled around the measurement ((h): Redis). */
  side?: () => Promise<SideSample>;
}

export interface Measured {
  scenario: Scenario;
  target: TargetSpec;
  rps: number;
  p50: number;
  p99: number;
  cpuPerReq: number;
  /** undefined for targets that are not the gateway. */
  upstreamPerReq: number | undefined;
  /** The scenario's main operation alone, per request (gateways). */
  mainPerReq: number | undefined;
  non2xx: number;
  errors: number;
  /** (h) only: Redis's CPU and commands per completed request, beyond the measured gateway's own; B's fallbacks to memory meanwhile. */
  side?: { cpuPerReq: number; commandsPerReq: number; fallbacks: number };
  /** BENCH_STAGES=1, distinct (b) rows: the .cpuprofile of exactly the measured window. */
  profile?: string;
}

/** v2bridge_upstream_requests_total by operation, summed over outcomes, from the gateway's /metrics. */
export async function upstreamByOperation(gateway: Target): Promise<Map<string, number>> {
  const text = await (await fetch(`${gateway.base}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^v2bridge_upstream_requests_total\{([^}]*)\}\s+(\S+)$/gm)) {
    const operation = /operation="([^"]*)"/.exec(match[1] as string)?.[1] ?? '';
    counts.set(operation, (counts.get(operation) ?? 0) + Number(match[2]));
  }
  return counts;
}

const total = (counts: Map<string, number>): number => [...counts.values()].reduce((sum, n) => sum + n, 0);

/** The scenario as a legacy client asks it: in the legacy API's own ids (Scenario.legacyPath). */
export function asLegacy(scenario: Scenario): Scenario {
  return scenario.legacyPath === undefined ? scenario : { ...scenario, path: scenario.legacyPath };
}

interface Run {
  result: autocannon.Result;
  /** Response times (ms, sub-millisecond) of the 2xx answers, sorted ascending. */
  latencies: number[];
}

/**
 * Where each target is in each distinct set: runs on one target continue the walk (warm-up,
 * measurement, the 1-connection pass), so a path comes back only after the whole set.
 */
const walks = new Map<string, number>();

/**
 * One autocannon run. A distinct scenario's connections share one walk of its set, each request
 * taking the next path. Latencies are collected from its `response` events because its own
 * histogram truncates to whole milliseconds, which reads as 0 for the hello-world.
 */
function cannon(target: Target, scenario: Scenario, connections: number, seconds: number): Promise<Run> {
  const latencies: number[] = [];
  const paths = scenario.paths;
  const walkKey = `${target.base} ${scenario.name}`;
  const requests = paths
    ? [
        {
          setupRequest: (request: autocannon.Request): autocannon.Request => {
            const at = walks.get(walkKey) ?? 0;
            walks.set(walkKey, at + 1);
            return { ...request, path: paths[at % paths.length] as string };
          },
        },
      ]
    : undefined;
  return new Promise<Run>((resolve, reject) => {
    const instance = autocannon(
      { url: `${target.base}${scenario.path}`, headers: scenario.headers, connections, duration: seconds, ...(requests ? { requests } : {}) },
      (error: unknown, result) => {
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve({ result, latencies: latencies.sort((x, y) => x - y) });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

export async function measure(
  spec: TargetSpec,
  scenario: Scenario,
  settings: Settings,
  options: { connections?: number; profile?: boolean } = {},
): Promise<{ row: Measured; warmupFailures: number }> {
  const connections = options.connections ?? settings.connections;
  // The row stays keyed by the scenario itself; only what is sent follows the target's ids.
  const asked = spec.legacyIds ? asLegacy(scenario) : scenario;
  // As long as a warm-up and a measurement: a younger process than (b), B would otherwise be
  // measured while V8 still optimises (its compiler threads' CPU counts as B's).
  const jitWarm =
    spec.jitWarmKey === undefined
      ? undefined
      : await cannon(spec.target, { ...asked, headers: { ...asked.headers, 'X-Api-Key': spec.jitWarmKey } }, connections, settings.warmupS + settings.durationS);
  const warm = await cannon(spec.warmOn ?? spec.target, asked, connections, settings.warmupS);
  // Snapshot order keeps the /metrics scrapes (and the profiler's start and stop) out of the CPU window.
  const upstreamBefore = spec.gateway ? await upstreamByOperation(spec.target) : undefined;
  const sideBefore = await spec.side?.();
  if (options.profile) await spec.target.ask('profileStart');
  const cpuBefore = await spec.target.ask('cpu');
  const { result, latencies } = await cannon(spec.target, asked, connections, settings.durationS);
  const cpuAfter = await spec.target.ask('cpu');
  const profile = options.profile ? await spec.target.ask('profileStop') : undefined;
  const sideAfter = await spec.side?.();
  const upstreamAfter = spec.gateway ? await upstreamByOperation(spec.target) : undefined;
  const completed = result.requests.total;
  const per = (n: number): number => (completed > 0 ? n / completed : NaN);
  // Less the INFO commands of the first sample (two of them; the second sample's are counted after they answer).
  const side =
    sideBefore && sideAfter
      ? { cpuPerReq: per(sideAfter.cpuUs - sideBefore.cpuUs), commandsPerReq: per(sideAfter.commands - sideBefore.commands - 2), fallbacks: sideAfter.fallbacks - sideBefore.fallbacks }
      : undefined;
  const main = (counts: Map<string, number> | undefined): number => counts?.get(scenario.mainOperation) ?? 0;
  return {
    warmupFailures: warm.result.non2xx + warm.result.errors + (jitWarm ? jitWarm.result.non2xx + jitWarm.result.errors : 0),
    row: {
      scenario,
      target: spec,
      rps: completed / result.duration,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuPerReq: per(cpuAfter - cpuBefore),
      upstreamPerReq: upstreamBefore && upstreamAfter ? per(total(upstreamAfter) - total(upstreamBefore)) : undefined,
      mainPerReq: upstreamBefore && upstreamAfter ? per(main(upstreamAfter) - main(upstreamBefore)) : undefined,
      non2xx: result.non2xx,
      errors: result.errors,
      ...(side ? { side } : {}),
      ...(profile ? { profile } : {}),
    },
  };
}
