/**
 * `npm run bench`: autocannon against each scenario (bench/scenarios.ts) on four targets,
 * each in its own process:
 *   (a) the gateway on the sandbox, (b) the gateway on a canned upstream that replays the
 *   sandbox's recorded answers with no work, (c) a Hono hello-world answering as many bytes,
 *   (d) a minimal pass-through proxy (node:http + undici) on the same canned upstream: one
 *   upstream request per request, the answer streamed back, no reshaping (the floor).
 * Then a 1-connection pass on (b) and (d) for the latency the gateway adds.
 * The migration modes get three more targets on a canned legacy REST API (bench/targets/
 * canned-legacy.ts, replaying the sandbox's legacy face): (e) that canned API called directly,
 * (f) the gateway in passthrough mode in front of it, (g) the gateway in compare mode (the
 * caller answered from the legacy API; translation, second legacy call and diff off the path).
 * Scale-out, (h): the application show served by replica B after replica A warmed the state
 * they share in Redis (bench/replica-row.ts), against (b) and (d) in the same run.
 * Prints Markdown tables, ratios and whether the speed goals are met; exits 1 if any request
 * failed or answered non-2xx.
 */
import { cpus, platform, arch } from 'node:os';
import autocannon from 'autocannon';
import { killAll, startTarget, type Target } from './children.ts';
import { REPLICA_JIT_WARMUP_KEY, REPLICA_ROW_SCENARIO, replicaRowUnavailable, startReplicaPair, type ReplicaPair, type SideSample } from './replica-row.ts';
import { startNodeFlags } from '../scripts/start-flags.ts';
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
  /** (h) only: Redis's CPU and commands per completed request, beyond the measured gateway's own; B's fallbacks to memory meanwhile. */
  side?: { cpuPerReq: number; commandsPerReq: number; fallbacks: number };
}

const TARGET_KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] as const;

interface TargetSpec {
  key: (typeof TARGET_KEYS)[number];
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
  /** Asked in the legacy API's own ids (Scenario.legacyPath): a legacy client's target ((e), (f), (g)). */
  legacyIds?: true;
  /** Only these scenarios (by name); all when unset. */
  scenarios?: readonly string[];
  /** A process the target leans on, sampled around the measurement ((h): Redis). */
  side?: () => Promise<SideSample>;
}

/** Sum of every v2bridge_upstream_requests_total series on the gateway's /metrics. */
async function upstreamRequests(gateway: Target): Promise<number> {
  const text = await (await fetch(`${gateway.base}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(/^v2bridge_upstream_requests_total(?:\{[^}]*\})?\s+(\S+)$/gm)) sum += Number(match[1]);
  return sum;
}

/** v2bridge_compare_results_total by outcome, summed over routes, from the gateway's /metrics. */
async function compareOutcomes(gateway: Target): Promise<Record<string, number>> {
  const text = await (await fetch(`${gateway.base}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^v2bridge_compare_results_total\{.*outcome="([a-z_]+)".*\}\s+(\S+)$/gm)) {
    counts[match[1] as string] = (counts[match[1] as string] ?? 0) + Number(match[2]);
  }
  return counts;
}

/**
 * One request, checked for 2xx; returns the answer's size in bytes. `role` names the target in
 * the error: several are the gateway in different modes, and a passthrough's answer is the
 * legacy API's.
 */
async function probe(target: Target, role: string, scenario: Scenario): Promise<number> {
  const res = await fetch(`${target.base}${scenario.path}`, { headers: scenario.headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`${role} answered ${res.status} to ${scenario.path}: ${body.toString('utf8').slice(0, 200)}`);
  return body.length;
}

/** The scenario as a legacy client asks it: in the legacy API's own ids (Scenario.legacyPath). */
function asLegacy(scenario: Scenario): Scenario {
  return scenario.legacyPath === undefined ? scenario : { ...scenario, path: scenario.legacyPath };
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
function cannon(target: Target, scenario: Scenario, connections: number, seconds: number): Promise<Run> {
  const latencies: number[] = [];
  return new Promise<Run>((resolve, reject) => {
    const instance = autocannon(
      { url: `${target.base}${scenario.path}`, headers: scenario.headers, connections, duration: seconds },
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
function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

async function measure(
  spec: TargetSpec,
  scenario: Scenario,
  settings: Settings,
  connections = settings.connections,
): Promise<{ row: Measured; warmupFailures: number }> {
  // The row stays keyed by the scenario itself; only what is sent follows the target's ids.
  const asked = spec.legacyIds ? asLegacy(scenario) : scenario;
  // As long as a warm-up and a measurement: a younger process than (b), B would otherwise be
  // measured while V8 still optimises (its compiler threads' CPU counts as B's).
  const jitWarm =
    spec.jitWarmKey === undefined
      ? undefined
      : await cannon(spec.target, { ...asked, headers: { ...asked.headers, 'X-Api-Key': spec.jitWarmKey } }, connections, settings.warmupS + settings.durationS);
  const warm = await cannon(spec.warmOn ?? spec.target, asked, connections, settings.warmupS);
  // Snapshot order keeps the /metrics scrapes out of the CPU window.
  const upstreamBefore = spec.gateway ? await upstreamRequests(spec.target) : 0;
  const sideBefore = await spec.side?.();
  const cpuBefore = await spec.target.ask('cpu');
  const { result, latencies } = await cannon(spec.target, asked, connections, settings.durationS);
  const cpuAfter = await spec.target.ask('cpu');
  const sideAfter = await spec.side?.();
  const upstreamAfter = spec.gateway ? await upstreamRequests(spec.target) : 0;
  const completed = result.requests.total;
  const per = (n: number): number => (completed > 0 ? n / completed : NaN);
  // Less the INFO commands of the first sample (two of them; the second sample's are counted after they answer).
  const side =
    sideBefore && sideAfter
      ? { cpuPerReq: per(sideAfter.cpuUs - sideBefore.cpuUs), commandsPerReq: per(sideAfter.commands - sideBefore.commands - 2), fallbacks: sideAfter.fallbacks - sideBefore.fallbacks }
      : undefined;
  return {
    warmupFailures: warm.result.non2xx + warm.result.errors + (jitWarm ? jitWarm.result.non2xx + jitWarm.result.errors : 0),
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
      ...(side ? { side } : {}),
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

function latencyTable(single: Measured[]): string {
  const lines = [
    '| scenario | (b) gateway p50 ms, 1 connection | (d) proxy p50 ms, 1 connection | added p50 ms | (b) p99 ms | (d) p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of SCENARIOS) {
    const b = single.find((r) => r.scenario === scenario && r.target.key === 'b');
    const d = single.find((r) => r.scenario === scenario && r.target.key === 'd');
    if (!b || !d) continue;
    lines.push(`| ${scenario.name} | ${fixed(b.p50, 2)} | ${fixed(d.p50, 2)} | ${fixed(b.p50 - d.p50, 2)} | ${fixed(b.p99, 2)} | ${fixed(d.p99, 2)} |`);
  }
  return lines.join('\n');
}

function ratios(rows: Measured[], single: Measured[]): string {
  const lines: string[] = [];
  for (const scenario of SCENARIOS) {
    const of = (key: TargetSpec['key'], from = rows): Measured | undefined => from.find((r) => r.scenario === scenario && r.target.key === key);
    const [a, b, c, d] = [of('a'), of('b'), of('c'), of('d')];
    const [b1, d1] = [of('b', single), of('d', single)];
    if (!a || !b || !c || !d) continue;
    lines.push(
      `- ${scenario.name}: (b) ÷ (d) proxy: req/s ${fixed(b.rps / d.rps, 2)}×, CPU/req ${fixed(b.cpuPerReq / d.cpuPerReq, 2)}×` +
        (b1 && d1 ? `; added p50 at 1 connection ${fixed(b1.p50 - d1.p50, 2)} ms` : '') +
        `; throughput vs (c) hello-world: (a) ${fixed(a.rps / c.rps, 3)}, (b) ${fixed(b.rps / c.rps, 3)}, (d) ${fixed(d.rps / c.rps, 3)}`,
    );
  }
  return lines.join('\n');
}

/** The speed goals of issue 9, each against (d) in this same run. */
function goals(rows: Measured[], single: Measured[]): string {
  const lines: string[] = [];
  const of = (name: string, key: TargetSpec['key'], from = rows): Measured | undefined =>
    from.find((r) => r.scenario.name === name && r.target.key === key);
  const verdict = (met: boolean): string => (met ? 'MET' : 'NOT MET');
  for (const [name, floor] of [['application show', 0.8], ['applications list', 1.0], ['metric data', 1.0]] as const) {
    const [b, d] = [of(name, 'b'), of(name, 'd')];
    if (!b || !d) continue;
    const ratio = b.rps / d.rps;
    lines.push(`- goal: ${name} req/s (b) ÷ (d) >= ${floor.toFixed(1)}: ${fixed(ratio, 2)} ${verdict(ratio >= floor)}`);
  }
  const added = SCENARIOS.flatMap((s) => {
    const [b, d] = [of(s.name, 'b', single), of(s.name, 'd', single)];
    return b && d ? [{ name: s.name, ms: b.p50 - d.p50 }] : [];
  });
  const worst = added.reduce((w, x) => (x.ms > w.ms || !Number.isFinite(w.ms) ? x : w), { name: 'none', ms: NaN });
  lines.push(
    `- goal: added p50 at 1 connection <= 1 ms in every scenario: worst ${fixed(worst.ms, 2)} ms (${worst.name}) ` +
      verdict(added.length > 0 && added.every((x) => Number.isFinite(x.ms) && x.ms <= 1)),
  );
  return lines.join('\n');
}

/** (h) against the single gateway (b) and the proxy floor (d) of the same run. */
function replicaSection(rows: Measured[], single: Measured[]): string {
  const lines: string[] = [];
  for (const scenario of SCENARIOS) {
    const of = (key: TargetSpec['key'], from = rows): Measured | undefined => from.find((r) => r.scenario === scenario && r.target.key === key);
    const [h, b, d, h1, b1] = [of('h'), of('b'), of('d'), of('h', single), of('b', single)];
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

/** The migration-mode rows: passthrough against the legacy API called directly, compare against passthrough. */
function modesSection(rows: Measured[], single: Measured[], shadow: Record<string, number>, connections: number, rounds: ReadonlyArray<{ scenario: Scenario; ratio: number }>): string {
  const lines = [
    `| scenario | (e) legacy direct req/s | (f) passthrough req/s | (g) compare req/s | (f) ÷ (e) req/s | p50 ms (e) / (f) / (g) | 1 connection p50 ms (e) / (f) / (g) | compare p50 ÷ passthrough p50 (${connections} connections, median of the paired rounds; 1 connection) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  for (const scenario of SCENARIOS) {
    const of = (key: TargetSpec['key'], from = rows): Measured | undefined => from.find((r) => r.scenario === scenario && r.target.key === key);
    const [e, f, g, e1, f1, g1] = [of('e'), of('f'), of('g'), of('e', single), of('f', single), of('g', single)];
    if (!e || !f || !g || !e1 || !f1 || !g1) continue;
    const paired = rounds.filter((r) => r.scenario === scenario).map((r) => r.ratio);
    const [many, one] = [paired.length > 0 ? median(paired) : g.p50 / f.p50, g1.p50 / f1.p50];
    lines.push(
      `| ${scenario.name} | ${fixed(e.rps, 0)} | ${fixed(f.rps, 0)} | ${fixed(g.rps, 0)} | ${fixed(f.rps / e.rps, 2)} | ${fixed(e.p50, 2)} / ${fixed(f.p50, 2)} / ${fixed(g.p50, 2)} | ` +
        `${fixed(e1.p50, 2)} / ${fixed(f1.p50, 2)} / ${fixed(g1.p50, 2)} | ${fixed(many, 2)}; ${fixed(one, 2)} |`,
    );
    const each = paired.length > 1 ? ` (median of ${paired.length} paired rounds: ${paired.map((r) => fixed(r, 2)).join(', ')})` : '';
    verdicts.push(`- goal: ${scenario.name}, compare caller p50 within 10 % of passthrough: ${fixed(many, 2)}× at ${connections} connections${each}, ${fixed(one, 2)}× at 1 connection ${many <= 1.1 && one <= 1.1 ? 'MET' : 'NOT MET'}`);
  }
  const outcomes = Object.entries(shadow).map(([outcome, n]) => `${outcome} ${n}`).join(', ');
  return [...lines, '', `(g) shadow work over the whole run: ${outcomes || 'none recorded'} (dropped: shed because the queue was full or the event loop busy, so callers never wait for it).`, '', ...verdicts].join('\n');
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
      `per target and scenario a ${settings.warmupS} s warm-up (not measured; fills the gateway's caches and JIT), then ${settings.durationS} s measured; ` +
      `(f) and (g) again in paired rounds, order alternated (BENCH_MODE_ROUNDS, default 3 in all), the compare goal on their median`,
  );

  // BENCH_ONLY: comma-separated scenario names and/or target keys to measure (e.g. "application show,b");
  // "replica" stands for the scale-out row with what it is compared with: "application show,b,d,h".
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((x) => x.trim())
    .flatMap((x) => (x === 'replica' ? [REPLICA_ROW_SCENARIO, 'b', 'd', 'h'] : [x]))
    .filter(Boolean);
  const onlyNames = only.filter((x) => SCENARIOS.some((s) => s.name === x));
  const onlyKeys = only.filter((x) => TARGET_KEYS.some((key) => key === x));
  const unknown = only.filter((x) => !onlyNames.includes(x) && !onlyKeys.includes(x));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: no scenario or target named ${unknown.map((x) => `"${x}"`).join(', ')}`);
  const chosen = (scenario: Scenario, spec: Pick<TargetSpec, 'key' | 'scenarios'>): boolean =>
    (onlyNames.length === 0 || onlyNames.includes(scenario.name)) &&
    (onlyKeys.length === 0 || onlyKeys.includes(spec.key)) &&
    (spec.scenarios === undefined || spec.scenarios.includes(scenario.name));

  const sandbox = await startTarget('sandbox', { SANDBOX_APM_APPS: String(settings.apmApps) });
  const graphqlUrl = `${sandbox.base}/graphql`;
  const canned = await startTarget('canned', { CANNED_RECORD_FROM: graphqlUrl });
  // BENCH_CPU_PROF_DIR: profile the (b) gateway (`node --cpu-prof`), written when the bench ends.
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const cannedLegacy = await startTarget('canned-legacy', { CANNED_LEGACY_FROM: sandbox.base });
  const [onSandbox, onCanned] = await Promise.all([
    startTarget('gateway', { NERDGRAPH_URL: graphqlUrl }, startNodeFlags()),
    startTarget('gateway', { NERDGRAPH_URL: `${canned.base}/graphql` }, [...startNodeFlags(), ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])]),
  ]);

  // Capture: one request per scenario through (b) makes the canned upstream record the
  // sandbox's answers for every operation it needs; from then on it only replays them.
  for (const scenario of SCENARIOS) await probe(onCanned, '(b) gateway on the canned upstream, capturing', scenario);
  // The migration-mode gateways: both on the canned upstreams, so neither waits on real work.
  const modeEnv = { NERDGRAPH_URL: `${canned.base}/graphql`, LEGACY_REST_URL: cannedLegacy.base };
  const [passthrough, comparing] = await Promise.all([
    startTarget('gateway', { ...modeEnv, ROUTE_MODES: '*=passthrough' }, startNodeFlags()),
    startTarget('gateway', { ...modeEnv, ROUTE_MODES: '*=compare' }, startNodeFlags()),
  ]);
  // A passthrough caller is a legacy client: it asks in the legacy API's ids.
  for (const scenario of SCENARIOS) await probe(passthrough, '(f) gateway in passthrough (the canned legacy API capturing the sandbox\'s legacy face)', asLegacy(scenario));
  await cannedLegacy.ask('freeze');
  const captured = await canned.ask('freeze');
  out(`canned upstream: replays ${captured.map((c) => `${c.operation} (${c.bytes} B)`).join(', ')}, captured once from the sandbox (${settings.apmApps} APM apps)`);

  // The hello-world answers each scenario path with as many bytes as the gateway does.
  const sizes: Record<string, number> = {};
  for (const scenario of SCENARIOS) sizes[scenario.path] = await probe(onSandbox, '(a) gateway on the sandbox', scenario);
  const hello = await startTarget('hello', { HELLO_BODIES: JSON.stringify(sizes) });
  out(`hello-world body sizes: ${SCENARIOS.map((s) => `${s.path} ${sizes[s.path]} B`).join(', ')}`);

  // The proxy sends, per scenario path, the body the gateway sent for the scenario's main operation.
  const proxyBodies: Record<string, string> = {};
  for (const scenario of SCENARIOS) {
    const main = captured.find((c) => c.operation === scenario.mainOperation);
    if (!main) throw new Error(`${scenario.name}: the gateway never sent ${scenario.mainOperation}, so (d) has nothing to send`);
    proxyBodies[scenario.path.split('?')[0] as string] = main.requestBody;
  }
  const proxy = await startTarget('proxy', { PROXY_UPSTREAM: `${canned.base}/graphql`, PROXY_BODIES: JSON.stringify(proxyBodies) });
  out(
    `pass-through proxy (d): one upstream request per request, ${SCENARIOS.map((s) => `${s.name}: ${s.mainOperation} ` +
      `(${Buffer.byteLength(proxyBodies[s.path.split('?')[0] as string] as string)} B up)`).join(', ')}`,
  );
  out();

  const specs: TargetSpec[] = [
    { key: 'a', label: 'gateway → sandbox', target: onSandbox, gateway: true },
    { key: 'b', label: 'gateway → canned upstream', target: onCanned, gateway: true },
    { key: 'c', label: 'Hono hello-world', target: hello, gateway: false },
    { key: 'd', label: 'pass-through proxy → canned upstream', target: proxy, gateway: false },
    { key: 'e', label: 'canned legacy REST API, called directly', target: cannedLegacy, gateway: false, legacyIds: true },
    { key: 'f', label: 'gateway, passthrough → canned legacy', target: passthrough, gateway: true, legacyIds: true },
    { key: 'g', label: 'gateway, compare → canned legacy (+ canned upstream off the path)', target: comparing, gateway: true, legacyIds: true },
  ];
  // (h): two replicas sharing one Redis, on the same canned upstream as (b).
  let pair: ReplicaPair | undefined;
  const replicaRow = { key: 'h', scenarios: [REPLICA_ROW_SCENARIO] } as const;
  if (SCENARIOS.some((scenario) => chosen(scenario, replicaRow))) {
    const unavailable = replicaRowUnavailable();
    if (unavailable) {
      out(`(h) skipped: ${unavailable}`);
    } else {
      pair = await startReplicaPair(`${canned.base}/graphql`);
      specs.push({
        ...replicaRow,
        label: 'gateway replica B after replica A warmed the shared state (Redis) → canned upstream',
        target: pair.b,
        warmOn: pair.a,
        jitWarmKey: REPLICA_JIT_WARMUP_KEY,
        gateway: true,
        side: pair.sample,
      });
      out(
        'replica row (h): gateways A and B share one redis-server on loopback (REDIS_URL, STATE_SECRET) and the canned upstream; ' +
          'per run B first warms its code with another key, then A warms the shared state with the scenario\'s requests, then B is measured',
      );
    }
  }
  const rows: Measured[] = [];
  let failures = 0;
  for (const scenario of SCENARIOS) {
    for (const spec of specs.filter((s) => chosen(scenario, s))) {
      process.stderr.write(`running ${scenario.name} on (${spec.key}) ${spec.label}…\n`);
      const { row, warmupFailures } = await measure(spec, scenario, settings);
      rows.push(row);
      failures += warmupFailures + row.non2xx + row.errors;
    }
  }

  // Latency the gateway adds, without queueing: one connection, (b) against (d).
  const single: Measured[] = [];
  for (const scenario of SCENARIOS) {
    for (const spec of specs.filter((s) => ['b', 'd', 'e', 'f', 'g', 'h'].includes(s.key) && chosen(scenario, s))) {
      process.stderr.write(`running ${scenario.name} on (${spec.key}) ${spec.label}, 1 connection…\n`);
      const { row, warmupFailures } = await measure(spec, scenario, settings, 1);
      single.push(row);
      failures += warmupFailures + row.non2xx + row.errors;
    }
  }

  // The compare goal is a 10 % bound on a p50 ratio, and one pass on a shared 2-core machine
  // moves more than that from run to run: (f) and (g) are measured again in paired rounds, the
  // order alternated so neither always runs on a warmer machine, and the goal reads the median.
  const rounds: Array<{ scenario: Scenario; ratio: number }> = [];
  const pairRounds = envNumber('BENCH_MODE_ROUNDS', 3, true);
  for (const scenario of SCENARIOS) {
    const [f, g] = (['f', 'g'] as const).map((key) => specs.find((s) => s.key === key && chosen(scenario, s)));
    const first = rows.find((r) => r.scenario === scenario && r.target.key === 'g')?.p50 ?? NaN;
    const base = rows.find((r) => r.scenario === scenario && r.target.key === 'f')?.p50 ?? NaN;
    if (!f || !g || !Number.isFinite(first / base)) continue;
    rounds.push({ scenario, ratio: first / base });
    for (let round = 2; round <= pairRounds; round++) {
      const order = round % 2 === 0 ? [g, f] : [f, g];
      const p50: Record<string, number> = {};
      for (const spec of order) {
        process.stderr.write(`running ${scenario.name} on (${spec.key}) ${spec.label}, round ${round}…\n`);
        const { row, warmupFailures } = await measure(spec, scenario, settings);
        p50[spec.key] = row.p50;
        failures += warmupFailures + row.non2xx + row.errors;
      }
      rounds.push({ scenario, ratio: (p50.g ?? NaN) / (p50.f ?? NaN) });
    }
  }

  await pair?.stop();
  out(table(rows));
  out();
  out(`1 connection, (b) gateway and (d) proxy on the canned upstream (${settings.warmupS} s warm-up, ${settings.durationS} s measured each):`);
  out();
  out(latencyTable(single));
  out();
  out('gateway CPU µs/req is the target process\'s own CPU (user+system) per completed request: the gateway for (a)/(b), the hello-world for (c), the proxy for (d); never the sandbox\'s or the canned upstream\'s.');
  out('upstream req per request: v2bridge_upstream_requests_total delta ÷ completed requests; below 1 when identical reads share one NerdGraph call (in flight together, or inside the micro-cache window) and accounts come from the cache.');
  out('p50/p99: 2xx response times measured by autocannon\'s clients (sub-millisecond).');
  out();
  out(ratios(rows, single));
  out();
  out(goals(rows, single));
  out();
  const scaleOut = replicaSection(rows, single);
  if (scaleOut !== '') {
    out('## Scale-out: a show on replica B after replica A warmed the shared state');
    out();
    out(scaleOut);
    out();
  }
  out('## Migration modes');
  out();
  out(modesSection(rows, single, await compareOutcomes(comparing), settings.connections, rounds));
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
