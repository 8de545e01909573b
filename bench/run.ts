/**
 * `npm run bench`: autocannon against each scenario on several targets, each in its own process.
 * The primary rows are distinct requests (bench/distinct.ts): every request asks another app,
 * host or name set, from a set too large for the gateway's micro-cache or identical-query budget
 * to answer, checked in the run. The repeated-request rows stay, named "… (cached)".
 *   (a) the gateway on the sandbox, (b) the gateway on a canned upstream that replays the
 *   sandbox's recorded answers (keyed by operation and variables) with no work, (c) a Hono
 *   hello-world answering as many bytes (cached rows), (d) a minimal pass-through proxy
 *   (node:http + undici) on the same canned upstream: per request, the one upstream body the
 *   gateway sent for that very request (captured one at a time, bench/capture.ts), the answer
 *   streamed back, no reshaping (the floor), and (t) the floor of a translation on the same canned
 *   upstream (bench/targets/translator.ts): per request every NerdGraph request the gateway sent
 *   for that very request, in order, each answer parsed, mapped to the gateway's v2 body by plain
 *   code, serialised (distinct rows; the distinct goals are (b) against (t)).
 * Then a 1-connection pass for the latency the gateway adds.
 * The migration modes, on cached rows, get more targets on a canned legacy REST API (bench/
 * targets/canned-legacy.ts): (d') a minimal proxy in front of it (passthrough's floor), (e) that
 * API called directly, (f) the gateway in passthrough, (g) the gateway in compare.
 * Scale-out, (h): the cached show served by replica B after replica A warmed the state they
 * share in Redis (bench/replica-row.ts).
 * Tracing, (i): the (b) gateway with OTEL_EXPORTER_OTLP_ENDPOINT set, exporting every span to a
 * local sink (bench/targets/otlp-sink.ts), on the distinct rows; printed against (b) as ratios.
 * Prints Markdown tables, ratios, the goals (bench/goals.ts) and, with BENCH_STAGES=1, where the
 * (b) gateway's CPU goes in each distinct row (bench/stages.ts). BENCH_RECORD=1 appends the
 * output to docs/performance.md (bench/record.ts). Exits 1 if any request failed or answered
 * non-2xx, or a cache served a distinct row.
 */
import { cpus, platform, arch } from 'node:os';
import { readFile } from 'node:fs/promises';
import { killAll, startTarget } from './children.ts';
import { REPLICA_JIT_WARMUP_KEY, REPLICA_ROW_SCENARIO, replicaRowUnavailable, startReplicaPair, type ReplicaPair } from './replica-row.ts';
import { startNodeFlags } from '../scripts/start-flags.ts';
import { buildScenarios, type Scenario } from './scenarios.ts';
import { capture, probe, writeTable } from './capture.ts';
import { TARGET_KEYS, measure, asLegacy, type Measured, type Settings, type TargetSpec } from './measure.ts';
import { distinctCheck, distinctRatios, fixed, latencyTable, modesSection, ratios, replicaSection, table, tracingSection, type PairedRound } from './tables.ts';
import { goals } from './goals.ts';
import { formatStageTables, stageTable, type CpuProfile } from './stages.ts';
import { recordRun } from './record.ts';

function envNumber(name: string, fallback: number, integer = false): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
}

/** The gateway's micro-cache window at its default config (src/ops/config.ts), unless the environment sets another. */
const MICRO_CACHE_MS = Number(process.env.MICRO_CACHE_MS ?? 1000);

/**
 * NerdGraph allows an account 3,000 NRQL queries a minute, and the gateway keeps to it
 * (NRQL_PER_ACCOUNT_PER_MINUTE): a limit of the real upstream, which neither the canned upstream
 * nor the (d) proxy has. Distinct NRQL rows run at thousands a second, so the bench's gateways
 * get a budget no run reaches; the micro-cache and the identical-query budget stay at their defaults.
 */
const GATEWAY_ENV = { NRQL_PER_ACCOUNT_PER_MINUTE: '1000000' };

/** v2bridge_compare_results_total by outcome, summed over routes, from the gateway's /metrics. */
async function compareOutcomes(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^v2bridge_compare_results_total\{.*outcome="([a-z_]+)".*\}\s+(\S+)$/gm)) {
    counts[match[1] as string] = (counts[match[1] as string] ?? 0) + Number(match[2]);
  }
  return counts;
}

async function main(): Promise<number> {
  const settings: Settings = {
    durationS: envNumber('BENCH_DURATION_S', 5),
    warmupS: envNumber('BENCH_WARMUP_S', 1),
    connections: envNumber('BENCH_CONNECTIONS', 10, true),
    apmApps: envNumber('SANDBOX_APM_APPS', 12_000, true),
  };
  const stages = process.env.BENCH_STAGES === '1';
  const printed: string[] = [];
  const out = (line = ''): void => {
    printed.push(line);
    process.stdout.write(`${line}\n`);
  };
  const cpuList = cpus();
  out('# v2-bridge benchmark');
  out();
  out(
    `command: BENCH_DURATION_S=${settings.durationS} BENCH_WARMUP_S=${settings.warmupS} BENCH_CONNECTIONS=${settings.connections} ` +
      `SANDBOX_APM_APPS=${settings.apmApps}${process.env.BENCH_ONLY ? ` BENCH_ONLY="${process.env.BENCH_ONLY}"` : ''}${stages ? ' BENCH_STAGES=1' : ''} npm run bench`,
  );
  out(`machine: node ${process.version}, ${cpuList[0]?.model.trim() ?? 'unknown CPU'}, ${cpuList.length} cores, ${platform()} ${arch()}`);
  out(
    `method: autocannon (in the parent process, sharing the cores with the targets), ${settings.connections} connections; ` +
      `per target and scenario a ${settings.warmupS} s warm-up (not measured; fills the gateway's caches and JIT), then ${settings.durationS} s measured; ` +
      `the gateway at its default config (micro-cache ${MICRO_CACHE_MS} ms, identical-query budget 120 a minute) but NerdGraph's account NRQL limit (NRQL_PER_ACCOUNT_PER_MINUTE=${GATEWAY_ENV.NRQL_PER_ACCOUNT_PER_MINUTE}), which the canned upstream and (d) do not have; distinct rows walk their set in order, one path per request, across all connections; ` +
      `(f) and (g) again in paired rounds, order alternated (BENCH_MODE_ROUNDS, default 3 in all), the compare goal on their median`,
  );

  const { distinct, cached } = buildScenarios(settings.apmApps);
  const all = [...distinct, ...cached];
  // BENCH_ONLY: comma-separated scenario names and/or target keys to measure (e.g. "application show,b,d");
  // "replica" stands for the scale-out row with what it is compared with.
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((x) => x.trim())
    .flatMap((x) => (x === 'replica' ? [REPLICA_ROW_SCENARIO, 'b', 'd', 'h'] : [x]))
    .filter(Boolean);
  const onlyNames = only.filter((x) => all.some((s) => s.name === x));
  const onlyKeys = only.filter((x) => TARGET_KEYS.some((key) => key === x));
  const unknown = only.filter((x) => !onlyNames.includes(x) && !onlyKeys.includes(x));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: no scenario or target named ${unknown.map((x) => `"${x}"`).join(', ')}`);
  const wanted = (scenario: Scenario): boolean => onlyNames.length === 0 || onlyNames.includes(scenario.name);
  const chosen = (scenario: Scenario, spec: Pick<TargetSpec, 'key' | 'scenarios'>): boolean =>
    wanted(scenario) && (onlyKeys.length === 0 || onlyKeys.includes(spec.key)) && (spec.scenarios === undefined || spec.scenarios.includes(scenario.name));

  const sandbox = await startTarget('sandbox', { SANDBOX_APM_APPS: String(settings.apmApps) });
  const graphqlUrl = `${sandbox.base}/graphql`;
  const canned = await startTarget('canned', { CANNED_RECORD_FROM: graphqlUrl });
  // BENCH_CPU_PROF_DIR: profile the (b) gateway (`node --cpu-prof`), written when the bench ends.
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  const cannedLegacy = await startTarget('canned-legacy', { CANNED_LEGACY_FROM: sandbox.base });
  const [onSandbox, onCanned] = await Promise.all([
    startTarget('gateway', { ...GATEWAY_ENV, NERDGRAPH_URL: graphqlUrl }, startNodeFlags()),
    startTarget('gateway', { ...GATEWAY_ENV, NERDGRAPH_URL: `${canned.base}/graphql`, ...(stages ? { BENCH_STAGES: '1' } : {}) }, [
      ...startNodeFlags(),
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ]),
  ]);

  // Capture: every request the (b) and (d) rows will send goes once through (b), one at a time,
  // so the canned upstream records each answer and (d) learns each body. Cached rows first: a
  // distinct request asking the same thing within the micro-cache window would hide theirs.
  const captured = await capture(onCanned, canned, [...cached, ...distinct.filter(wanted)]);
  // The migration-mode gateways: both on the canned upstreams, so neither waits on real work.
  const modeEnv = { ...GATEWAY_ENV, NERDGRAPH_URL: `${canned.base}/graphql`, LEGACY_REST_URL: cannedLegacy.base };
  const [passthrough, comparing] = await Promise.all([
    startTarget('gateway', { ...modeEnv, ROUTE_MODES: '*=passthrough' }, startNodeFlags()),
    startTarget('gateway', { ...modeEnv, ROUTE_MODES: '*=compare' }, startNodeFlags()),
  ]);
  // A passthrough caller is a legacy client: it asks in the legacy API's ids.
  for (const scenario of cached) await probe(passthrough, "(f) gateway in passthrough (the canned legacy API capturing the sandbox's legacy face)", asLegacy(scenario).path, scenario.headers);
  await cannedLegacy.ask('freeze');
  const frozen = await canned.ask('freeze');
  out(
    `capture: ${captured.requests} requests through (b), one at a time, in ${(captured.ms / 1000).toFixed(1)} s; the canned upstream replays ` +
      `${frozen.map((c) => `${c.operation} ×${c.answers} (${(c.bytes / c.answers / 1024).toFixed(1)} KiB each)`).join(', ')}, captured from the sandbox (${settings.apmApps} APM apps)`,
  );
  for (const scenario of distinct.filter(wanted)) out(`distinct set, ${scenario.name}: ${scenario.varies}`);

  // The hello-world answers each cached scenario path with as many bytes as the gateway does.
  const sizes: Record<string, number> = {};
  for (const scenario of cached) sizes[scenario.path] = await probe(onSandbox, '(a) gateway on the sandbox', scenario.path, scenario.headers);
  const hello = await startTarget('hello', { HELLO_BODIES: JSON.stringify(sizes) });
  out(`hello-world body sizes: ${cached.map((s) => `${s.name} ${sizes[s.path]} B`).join(', ')}`);
  const proxy = await startTarget('proxy', { PROXY_UPSTREAM: `${canned.base}/graphql`, PROXY_TABLE: writeTable(captured.table) });
  const translator = await startTarget('translator', { TRANSLATOR_UPSTREAM: `${canned.base}/graphql`, TRANSLATOR_TABLE: writeTable(captured.calls, 'translator') });
  const legacyProxy = await startTarget('legacy-proxy', { PROXY_UPSTREAM: cannedLegacy.base });
  out(
    `pass-through proxy (d): one upstream request per request, the body the gateway sent for that request: ` +
      `${[...distinct.filter(wanted), ...cached].map((s) => `${s.name}: ${s.mainOperation} (${(captured.bodyBytes.get(s.name) ?? NaN).toFixed(0)} B up)`).join(', ')}`,
  );
  out(
    `minimal translator (t): per request the NerdGraph requests the gateway sent for that request, one after the other, each answer parsed, mapped with plain code, serialised: ` +
      `${distinct.filter(wanted).map((s) => `${s.name}: ${fixed(captured.callsPerRequest.get(s.name) ?? NaN, 2)} requests up per request`).join(', ')}`,
  );
  out();

  const cachedNames = cached.map((s) => s.name);
  const distinctNames = distinct.map((s) => s.name);
  const specs: TargetSpec[] = [
    { key: 'a', label: 'gateway → sandbox', target: onSandbox, gateway: true },
    { key: 'b', label: 'gateway → canned upstream', target: onCanned, gateway: true },
    { key: 'c', label: 'Hono hello-world', target: hello, gateway: false, scenarios: cachedNames },
    { key: 'd', label: 'pass-through proxy → canned upstream', target: proxy, gateway: false },
    { key: 't', label: 'minimal translator → canned upstream', target: translator, gateway: false, scenarios: distinctNames },
    { key: "d'", label: 'pass-through proxy → canned legacy', target: legacyProxy, gateway: false, legacyIds: true, scenarios: cachedNames },
    { key: 'e', label: 'canned legacy REST API, called directly', target: cannedLegacy, gateway: false, legacyIds: true, scenarios: cachedNames },
    { key: 'f', label: 'gateway, passthrough → canned legacy', target: passthrough, gateway: true, legacyIds: true, scenarios: cachedNames },
    { key: 'g', label: 'gateway, compare → canned legacy (+ canned upstream off the path)', target: comparing, gateway: true, legacyIds: true, scenarios: cachedNames },
  ];
  // (h): two replicas sharing one Redis, on the same canned upstream as (b).
  let pair: ReplicaPair | undefined;
  const replicaRow = { key: 'h', scenarios: [REPLICA_ROW_SCENARIO] } as const;
  if (all.some((scenario) => chosen(scenario, replicaRow))) {
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
        'replica row (h), on the cached show: gateways A and B share one redis-server on loopback (REDIS_URL, STATE_SECRET) and the canned upstream; ' +
          "per run B first warms its code with another key, then A warms the shared state with the scenario's requests, then B is measured",
      );
    }
  }
  // (i): the (b) gateway with tracing on, every span exported to a local sink (distinct rows only);
  // (b) is the same gateway with tracing off. Started only when a chosen scenario has it.
  const tracingRow = { key: 'i', scenarios: distinct.map((s) => s.name) } as const;
  let sink: Awaited<ReturnType<typeof startTarget>> | undefined;
  if (all.some((scenario) => chosen(scenario, tracingRow))) {
    sink = await startTarget('otlp-sink');
    const traced = await startTarget('gateway', { ...GATEWAY_ENV, NERDGRAPH_URL: `${canned.base}/graphql`, OTEL_EXPORTER_OTLP_ENDPOINT: sink.base }, startNodeFlags());
    // (b) served every request of the capture before it is measured: (i) gets the same, so both are measured as warm (JIT) as each other.
    const warmStarted = performance.now();
    let warmed = 0;
    for (const scenario of distinct.filter((s) => chosen(s, tracingRow))) {
      for (const path of scenario.paths ?? [scenario.path]) {
        await probe(traced, '(i) gateway with tracing on', path, scenario.headers);
        warmed++;
      }
    }
    specs.push({ ...tracingRow, label: 'gateway with tracing on (OTLP/HTTP to a local sink answering 200) → canned upstream', target: traced, gateway: true });
    out(
      'tracing row (i): the (b) gateway with OTEL_EXPORTER_OTLP_ENDPOINT set (SDK defaults: every span sampled, batched every 5 s) to a local sink that answers 200; (b) has tracing off; ' +
        `(i) first served the ${warmed} requests (b) served in the capture, one at a time (${((performance.now() - warmStarted) / 1000).toFixed(1)} s), so both are as warm`,
    );
  }
  const rows: Measured[] = [];
  let failures = 0;
  const run = async (scenario: Scenario, spec: TargetSpec, into: Measured[], note: string, options: Parameters<typeof measure>[3] = {}): Promise<Measured> => {
    process.stderr.write(`running ${scenario.name} on (${spec.key}) ${spec.label}${note}…\n`);
    const { row, warmupFailures } = await measure(spec, scenario, settings, options);
    into.push(row);
    failures += warmupFailures + row.non2xx + row.errors;
    return row;
  };
  const isDistinct = (scenario: Scenario): boolean => scenario.paths !== undefined;
  for (const scenario of all) {
    for (const spec of specs.filter((s) => chosen(scenario, s))) {
      await run(scenario, spec, rows, '', { profile: stages && spec.key === 'b' && isDistinct(scenario) });
    }
  }

  // Latency without queueing, one connection: (b), (t) and (d) on the distinct rows; the migration
  // modes and (h) on the cached ones (the compare goal reads it).
  const single: Measured[] = [];
  for (const scenario of all) {
    const keys = isDistinct(scenario) ? ['b', 't', 'd'] : ['e', 'f', 'g', 'h'];
    for (const spec of specs.filter((s) => keys.includes(s.key) && chosen(scenario, s))) await run(scenario, spec, single, ', 1 connection', { connections: 1 });
  }

  // The compare goal is a 10 % bound on a p50 ratio, and one pass on a shared 2-core machine
  // moves more than that from run to run: (f) and (g) are measured again in paired rounds, the
  // order alternated so neither always runs on a warmer machine, and the goal reads the median.
  const rounds: PairedRound[] = [];
  const pairRounds = envNumber('BENCH_MODE_ROUNDS', 3, true);
  for (const scenario of cached) {
    const [f, g] = (['f', 'g'] as const).map((key) => specs.find((s) => s.key === key && chosen(scenario, s)));
    const first = rows.find((r) => r.scenario === scenario && r.target.key === 'g')?.p50 ?? NaN;
    const base = rows.find((r) => r.scenario === scenario && r.target.key === 'f')?.p50 ?? NaN;
    if (!f || !g || !Number.isFinite(first / base)) continue;
    rounds.push({ scenario, ratio: first / base });
    for (let round = 2; round <= pairRounds; round++) {
      const p50: Record<string, number> = {};
      for (const spec of round % 2 === 0 ? [g, f] : [f, g]) p50[spec.key] = (await run(scenario, spec, [], `, round ${round}`)).p50;
      rounds.push({ scenario, ratio: (p50.g ?? NaN) / (p50.f ?? NaN) });
    }
  }

  await pair?.stop();
  const distinctRows = rows.filter((r) => isDistinct(r.scenario));
  out('## Distinct requests (the primary rows)');
  out();
  out(table(distinctRows));
  out();
  const check = distinctCheck(distinctRows, distinct, MICRO_CACHE_MS);
  out("Distinct sets, checked in this run (on a gateway row a request must not come back inside the micro-cache window, and the row must send its main operation upstream once per request; a warning when the fastest target's rate would bring it back sooner):");
  out();
  out(check.text);
  out();
  out(`1 connection, (b) gateway, (t) translator and (d) proxy on the canned upstream (${settings.warmupS} s warm-up, ${settings.durationS} s measured each):`);
  out();
  out(latencyTable(single, distinct));
  out();
  out(distinctRatios(rows, single, distinct));
  out();
  out('## Cached (one identical request repeated)');
  out();
  out(table(rows.filter((r) => !isDistinct(r.scenario))));
  out();
  out(ratios(rows, single, cached));
  out();
  out("target CPU µs/req is the measured process's own CPU (user+system) per completed request: the gateway for (a)/(b)/(f)/(g)/(h), the hello-world for (c), the proxy for (d)/(d'), the translator for (t); never the sandbox's or the canned upstreams'.");
  out('upstream req per request: v2bridge_upstream_requests_total delta ÷ completed requests (all operations; the main-operation column counts the scenario\'s own); below 1 when identical reads share one NerdGraph call (in flight together, or inside the micro-cache window) and accounts come from the cache.');
  out("p50/p99: 2xx response times measured by autocannon's clients (sub-millisecond).");
  out();
  out('## Goals');
  out();
  out(goals({ rows, single, rounds, distinct, cached, connections: settings.connections }));
  out();
  if (stages) {
    const profiled = distinctRows.filter((r) => r.profile !== undefined);
    const stageRows = await Promise.all(
      profiled.map(async (r) => ({
        scenario: r.scenario.name,
        cpuPerReqUs: r.cpuPerReq,
        // The profile is what this bench's own gateway target wrote (Profiler.stop's result).
        stages: stageTable(JSON.parse(await readFile(r.profile as string, 'utf8')) as CpuProfile),
      })),
    );
    out('## Where the (b) gateway\'s CPU goes, distinct rows (a CPU profile of each measured window)');
    out();
    out(formatStageTables(stageRows));
    out();
    out(`profiles: ${profiled.map((r) => r.profile).join(', ')}`);
    out();
  }
  const tracingTable = tracingSection(rows, distinct);
  if (tracingTable !== '') {
    const stats = sink ? ((await (await fetch(`${sink.base}/stats`)).json()) as { posts: number; spans: number; bytes: number }) : undefined;
    out('## Tracing: (b) tracing off against (i) tracing on');
    out();
    out(tracingTable);
    out();
    if (stats) out(`the sink received ${stats.spans} spans in ${stats.posts} exports (${(stats.bytes / 1024 / 1024).toFixed(1)} MiB of OTLP JSON), warm-ups included.`);
    out();
  }
  const scaleOut = replicaSection(rows, single, cached);
  if (scaleOut !== '') {
    out('## Scale-out: the cached show on replica B after replica A warmed the shared state');
    out();
    out(scaleOut);
    out();
  }
  out('## Migration modes (cached rows)');
  out();
  out(modesSection(rows, single, await compareOutcomes(comparing.base), settings, rounds, cached));
  let code = 0;
  if (check.failed > 0) {
    out();
    out(`FAILED: ${check.failed} distinct row(s) not distinct (a cache could answer or did); their figures are not the gateway's work`);
    code = 1;
  }
  if (failures > 0) {
    out();
    out(`FAILED: ${failures} non-2xx answers or errors (warm-up included)`);
    code = 1;
  }
  if (process.env.BENCH_RECORD === '1') {
    recordRun(printed.join('\n'));
    process.stderr.write('bench: recorded in docs/performance.md under "## History"\n');
  }
  return code;
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
