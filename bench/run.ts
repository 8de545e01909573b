/**
 * `npm run bench`: autocannon against each scenario (bench/scenarios.ts) on three targets,
 * each in its own process:
 *   (a) the gateway on the sandbox, (b) the gateway on a canned upstream that replays the
 *   sandbox's recorded answers with no work, (c) a Hono hello-world answering as many bytes.
 * Prints a Markdown table and ratios; exits 1 if any request failed or answered non-2xx.
 */
import { cpus, platform, arch } from 'node:os';
import autocannon from 'autocannon';
import { killAll, startTarget, type Target } from './children.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';

function envNumber(name: string, fallback: number, integer = false): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
}

interface Settings {
  durationS: number;
  warmupS: number;
  connections: number;
  apmApps: number;
}

interface Measured {
  scenario: Scenario;
  target: TargetSpec;
  rps: number;
  p50: number;
  p99: number;
  cpuPerReq: number;
  /** undefined for the hello-world, which has no upstream. */
  upstreamPerReq: number | undefined;
  non2xx: number;
  errors: number;
}

interface TargetSpec {
  key: 'a' | 'b' | 'c';
  label: string;
  target: Target;
  gateway: boolean;
}

/** Sum of every v2bridge_upstream_requests_total series on the gateway's /metrics. */
async function upstreamRequests(gateway: Target): Promise<number> {
  const text = await (await fetch(`${gateway.base}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(/^v2bridge_upstream_requests_total(?:\{[^}]*\})?\s+(\S+)$/gm)) sum += Number(match[1]);
  return sum;
}

/** One request, checked for 2xx; returns the answer's size in bytes. */
async function probe(target: Target, scenario: Scenario): Promise<number> {
  const res = await fetch(`${target.base}${scenario.path}`, { headers: scenario.headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${target.name} answered ${res.status} to ${scenario.path}: ${body.toString('utf8').slice(0, 200)}`);
  return body.length;
}

interface Run {
  result: autocannon.Result;
  /** Response times (ms, sub-millisecond) of the 2xx answers, sorted ascending. */
  latencies: number[];
}

/**
 * One autocannon run. Latencies are collected from its `response` events because its own
 * histogram truncates to whole milliseconds, which reads as 0 for the hello-world.
 */
function cannon(target: Target, scenario: Scenario, settings: Settings, seconds: number): Promise<Run> {
  const latencies: number[] = [];
  return new Promise<Run>((resolve, reject) => {
    const instance = autocannon(
      { url: `${target.base}${scenario.path}`, headers: scenario.headers, connections: settings.connections, duration: seconds },
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

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

async function measure(spec: TargetSpec, scenario: Scenario, settings: Settings): Promise<{ row: Measured; warmupFailures: number }> {
  const warm = await cannon(spec.target, scenario, settings, settings.warmupS);
  // Snapshot order keeps the /metrics scrapes out of the CPU window.
  const upstreamBefore = spec.gateway ? await upstreamRequests(spec.target) : 0;
  const cpuBefore = await spec.target.ask('cpu');
  const { result, latencies } = await cannon(spec.target, scenario, settings, settings.durationS);
  const cpuAfter = await spec.target.ask('cpu');
  const upstreamAfter = spec.gateway ? await upstreamRequests(spec.target) : 0;
  const completed = result.requests.total;
  const per = (n: number): number => (completed > 0 ? n / completed : NaN);
  return {
    warmupFailures: warm.result.non2xx + warm.result.errors,
    row: {
      scenario,
      target: spec,
      rps: completed / result.duration,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuPerReq: per(cpuAfter - cpuBefore),
      upstreamPerReq: spec.gateway ? per(upstreamAfter - upstreamBefore) : undefined,
      non2xx: result.non2xx,
      errors: result.errors,
    },
  };
}

const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

function table(rows: Measured[]): string {
  const lines = [
    '| scenario | target | req/s | p50 ms | p99 ms | gateway CPU µs/req | upstream req per request | non-2xx |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const failures = r.errors > 0 ? `${r.non2xx} (+${r.errors} errors)` : String(r.non2xx);
    const upstream = r.upstreamPerReq === undefined ? 'n/a' : fixed(r.upstreamPerReq, 3);
    lines.push(
      `| ${r.scenario.name} | (${r.target.key}) ${r.target.label} | ${fixed(r.rps, 0)} | ${fixed(r.p50, 2)} | ${fixed(r.p99, 2)} | ${fixed(r.cpuPerReq, 0)} | ${upstream} | ${failures} |`,
    );
  }
  return lines.join('\n');
}

function ratios(rows: Measured[]): string {
  const lines: string[] = [];
  for (const scenario of SCENARIOS) {
    const of = (key: TargetSpec['key']): Measured | undefined => rows.find((r) => r.scenario === scenario && r.target.key === key);
    const [a, b, c] = [of('a'), of('b'), of('c')];
    if (!a || !b || !c) continue;
    lines.push(
      `- ${scenario.name}: throughput vs (c) hello-world: (a) ${fixed(a.rps / c.rps, 3)}, (b) ${fixed(b.rps / c.rps, 3)}; ` +
        `CPU/req (b) ÷ (c): ${fixed(b.cpuPerReq / c.cpuPerReq, 2)}×`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<number> {
  const settings: Settings = {
    durationS: envNumber('BENCH_DURATION_S', 5),
    warmupS: envNumber('BENCH_WARMUP_S', 1),
    connections: envNumber('BENCH_CONNECTIONS', 10, true),
    apmApps: envNumber('SANDBOX_APM_APPS', 500, true),
  };
  const cpuList = cpus();
  const out = (line = ''): void => {
    process.stdout.write(`${line}\n`);
  };
  out('# v2-bridge benchmark');
  out();
  out(
    `command: BENCH_DURATION_S=${settings.durationS} BENCH_WARMUP_S=${settings.warmupS} BENCH_CONNECTIONS=${settings.connections} ` +
      `SANDBOX_APM_APPS=${settings.apmApps} npm run bench`,
  );
  out(`machine: node ${process.version}, ${cpuList[0]?.model.trim() ?? 'unknown CPU'}, ${cpuList.length} cores, ${platform()} ${arch()}`);
  out(
    `method: autocannon (in the parent process, sharing the cores with the targets), ${settings.connections} connections; ` +
      `per target and scenario a ${settings.warmupS} s warm-up (not measured; fills the gateway's caches and JIT), then ${settings.durationS} s measured`,
  );

  const sandbox = await startTarget('sandbox', { SANDBOX_APM_APPS: String(settings.apmApps) });
  const graphqlUrl = `${sandbox.base}/graphql`;
  const canned = await startTarget('canned', { CANNED_RECORD_FROM: graphqlUrl });
  const [onSandbox, onCanned] = await Promise.all([
    startTarget('gateway', { NERDGRAPH_URL: graphqlUrl }),
    startTarget('gateway', { NERDGRAPH_URL: `${canned.base}/graphql` }),
  ]);

  // Capture: one request per scenario through (b) makes the canned upstream record the
  // sandbox's answers for every operation it needs; from then on it only replays them.
  for (const scenario of SCENARIOS) await probe(onCanned, scenario);
  const captured = await canned.ask('freeze');
  out(`canned upstream: replays ${captured.map((c) => `${c.operation} (${c.bytes} B)`).join(', ')}, captured once from the sandbox (${settings.apmApps} APM apps)`);

  // The hello-world answers each scenario path with as many bytes as the gateway does.
  const sizes: Record<string, number> = {};
  for (const scenario of SCENARIOS) sizes[scenario.path] = await probe(onSandbox, scenario);
  const hello = await startTarget('hello', { HELLO_BODIES: JSON.stringify(sizes) });
  out(`hello-world body sizes: ${SCENARIOS.map((s) => `${s.path} ${sizes[s.path]} B`).join(', ')}`);
  out();

  const specs: TargetSpec[] = [
    { key: 'a', label: 'gateway → sandbox', target: onSandbox, gateway: true },
    { key: 'b', label: 'gateway → canned upstream', target: onCanned, gateway: true },
    { key: 'c', label: 'Hono hello-world', target: hello, gateway: false },
  ];
  const rows: Measured[] = [];
  let failures = 0;
  for (const scenario of SCENARIOS) {
    for (const spec of specs) {
      process.stderr.write(`running ${scenario.name} on (${spec.key}) ${spec.label}…\n`);
      const { row, warmupFailures } = await measure(spec, scenario, settings);
      rows.push(row);
      failures += warmupFailures + row.non2xx + row.errors;
    }
  }

  out(table(rows));
  out();
  out('gateway CPU µs/req is the target process\'s own CPU (user+system) per completed request: the gateway for (a)/(b), the hello-world for (c); never the sandbox\'s or the canned upstream\'s.');
  out('upstream req per request: v2bridge_upstream_requests_total delta ÷ completed requests; below 1 when concurrent identical requests share one NerdGraph call (single-flight) and accounts come from the cache.');
  out('p50/p99: 2xx response times measured by autocannon\'s clients (sub-millisecond).');
  out();
  out(ratios(rows));
  if (failures > 0) {
    out();
    out(`FAILED: ${failures} non-2xx answers or errors (warm-up included)`);
    return 1;
  }
  return 0;
}

// Children die with us, whatever the way out.
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

main().then(
  (code) => {
    killAll();
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    killAll();
    process.exit(1);
  },
);
