/**
 * `LOAD_REPLICAS=2 npm run load`: the scale-out run. Per replica count it starts, from scratch:
 * Debian's redis-server on a free loopback port, ONE sandbox process (sandbox/main.ts), the
 * NerdGraph meter in front of its /graphql (load/meter.ts, its own process), and that many
 * gateway processes (src/index.ts as `npm start` runs it) sharing Redis and STATE_SECRET, with
 * NERDGRAPH_URL at the meter, LEGACY_REST_URL at the sandbox and REPLICA_NAME A, B, ...
 * The clients are split evenly: one autocannon instance per replica, each with its share of the
 * connections (a keep-alive connection stays on one replica, as behind a connection-level load
 * balancer), all in this process, so the load generator costs the same with 1 or 2 replicas.
 * `LOAD_REPLICAS=1,2` runs both in sequence and compares them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { z } from 'zod';
import { REDIS_SERVER, startRedis, type TestRedis } from '../test/support/redis.ts';
import { procRss, startChild, stopChild, waitForOutput, type Child } from './children.ts';
import { meterKeyHash, readMeter, resetMeter } from './meter.ts';
import { buildMix, chooser, describeMix, type MixEntry } from './mix.ts';
import { breakdown, delta, mb, merge, scrape, total, type Scrape } from './scrape.ts';

export interface ReplicaRunOptions {
  replicaCounts: readonly number[];
  clients: number;
  durationS: number;
  key: string;
  compiled: boolean;
  apmApps: number;
  /** Held by the meter before relaying each NerdGraph call (0: the sandbox's own speed). */
  upstreamDelayMs: number;
  /** NERDGRAPH_CONCURRENCY_PER_KEY as the gateways read it: what the meter's peak is held against. */
  concurrencyBudget: number;
}

const REPLICA_NAMES = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] as const;

interface ReplicaFigures {
  name: string;
  /** Requests its autocannon instance completed. */
  clientRequests: number;
  connections: number;
  /** v2 requests on its /metrics. */
  served: Map<number, number>;
  rssPeak: number | undefined;
  rssEnd: number | undefined;
  exitCode: number | null;
}

interface RunFigures {
  replicas: number;
  mix: string;
  requests: number;
  durationS: number;
  latency: { p50: number; p99: number; max: number };
  statuses: Map<number, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  served: Map<number, number>;
  gatewayUpstream: number;
  meterCalls: number;
  meterRelayErrors: number;
  topOperations: string;
  /** Peak NerdGraph calls in flight at once with the load's key, at the meter. */
  peakLoadKey: number;
  /** The highest peak of any other key (the mix's wrong keys). */
  peakOtherKeys: number;
  stateFallbacks: number;
  degradedAtEnd: number;
  budgetDecisions: Map<string, number>;
  redisCommands: number | undefined;
  perReplica: ReplicaFigures[];
}

const ReadyzBody = z.object({ sharedState: z.object({ state: z.string() }).optional() });

/** Until the replica's shared state is on Redis ('shared'), so the run measures Redis, not the start-up memory. */
async function waitUntilShared(base: string, name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const body = ReadyzBody.parse(await (await fetch(`${base}/readyz`)).json());
      last = body.sharedState?.state ?? 'no sharedState in /readyz';
      if (last === 'shared') return;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`replica ${name} never reported its shared state on Redis (last: ${last})`);
}

async function redisCommandsProcessed(redis: TestRedis): Promise<number | undefined> {
  try {
    const info = await redis.inspect().info('stats');
    const value = /^total_commands_processed:(\d+)/m.exec(info)?.[1];
    return value === undefined ? undefined : Number(value);
  } catch {
    return undefined;
  }
}

/** Nearest-rank percentile of ascending values. */
function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number);
}

interface CannonRun {
  result: autocannon.Result;
  latencies: number[];
}

function cannon(base: string, connections: number, durationS: number, choose: () => MixEntry, key: string, onStop: (stop: () => void) => void): Promise<CannonRun> {
  const latencies: number[] = [];
  return new Promise<CannonRun>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections,
        duration: durationS,
        timeout: 30,
        requests: [
          {
            setupRequest: (request) => {
              const made = choose().request();
              return { ...request, method: made.method, path: made.path, body: made.body ?? '', headers: made.headers ?? { 'X-Api-Key': key } };
            },
          },
        ],
      },
      (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve({ result, latencies })),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime);
    });
    onStop(() => instance.stop());
  });
}

/** One run with `count` replicas, everything started for it and stopped after it. */
async function runOnce(count: number, options: ReplicaRunOptions): Promise<RunFigures> {
  const started: Child[] = [];
  let redis: TestRedis | undefined;
  try {
    redis = await startRedis();
    const redisUrl = redis.url;
    const sandbox = startChild('sandbox/main.ts', { SANDBOX_PORT: '0', SANDBOX_APM_APPS: String(options.apmApps) });
    started.push(sandbox);
    const sandboxUrl = (await waitForOutput(sandbox, /sandbox listening on (http:\/\/\S+)/, 'the sandbox'))[1] as string;
    const meter = startChild('load/meter-main.ts', { METER_TARGET: `${sandboxUrl}/graphql`, METER_DELAY_MS: String(options.upstreamDelayMs) });
    started.push(meter);
    const meterUrl = (await waitForOutput(meter, /load meter listening on (http:\/\/\S+)/, 'the NerdGraph meter'))[1] as string;

    // One secret for this run's replicas: Redis key names and caller identities derive from it.
    const secret = randomBytes(32).toString('base64url');
    const names = REPLICA_NAMES.slice(0, count);
    const gateways = names.map((name) =>
      startChild(
        'src/index.ts',
        { PORT: '0', HOST: '127.0.0.1', REDIS_URL: redisUrl, STATE_SECRET: secret, NERDGRAPH_URL: meterUrl, LEGACY_REST_URL: sandboxUrl, REPLICA_NAME: name },
        options.compiled,
      ),
    );
    started.push(...gateways);
    const bases = await Promise.all(
      gateways.map(async (gateway, i) => `http://127.0.0.1:${(await waitForOutput(gateway, /"port":(\d+)[^\n]*v2-bridge listening/, `replica ${names[i]}`))[1]}`),
    );
    await Promise.all(bases.map((base, i) => waitUntilShared(base, names[i] as string)));

    const mix = await buildMix(bases[0] as string, options.key);
    const choose = chooser(mix);
    const before = await Promise.all(bases.map((base) => scrape(base)));
    const redisBefore = await redisCommandsProcessed(redis);
    await resetMeter(meterUrl);

    // Even split of the connections; the first replicas take the remainder.
    const shares = names.map((_, i) => Math.floor(options.clients / count) + (i < options.clients % count ? 1 : 0));
    const stops: Array<() => void> = [];
    const onSigint = (): void => stops.forEach((stop) => stop());
    process.once('SIGINT', onSigint);
    const runs = await Promise.all(bases.map((base, i) => cannon(base, shares[i] as number, options.durationS, choose, options.key, (stop) => stops.push(stop))));
    process.off('SIGINT', onSigint);

    const after = await Promise.all(bases.map((base) => scrape(base)));
    const redisAfter = await redisCommandsProcessed(redis);
    const meterStats = await readMeter(meterUrl);
    const rss = gateways.map((g) => ({ end: procRss(g.process.pid, 'VmRSS'), peak: procRss(g.process.pid, 'VmHWM') }));
    const exitCodes = await Promise.all(gateways.map((g) => stopChild(g)));

    const servedPer = bases.map((_, i) => delta((before[i] as Scrape).byStatus, (after[i] as Scrape).byStatus));
    const statuses = new Map<number, number>();
    for (const { result } of runs) {
      for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses.set(Number(code), (statuses.get(Number(code)) ?? 0) + (stat.count ?? 0));
    }
    const all = new Float64Array(runs.reduce((n, r) => n + r.latencies.length, 0));
    let at = 0;
    for (const run of runs) {
      all.set(run.latencies, at);
      at += run.latencies.length;
    }
    all.sort();
    const loadKey = meterKeyHash(options.key);
    const otherPeaks = Object.entries(meterStats.peakInFlight).filter(([hash]) => hash !== loadKey).map(([, n]) => n);
    const topOperations = Object.entries(meterStats.byOperation)
      .sort(([, a], [, b]) => b - a)
      .slice(0, 6)
      .map(([operation, n]) => `${operation || '(unnamed)'} ${n}`)
      .join(', ');

    return {
      replicas: count,
      mix: describeMix(mix),
      requests: runs.reduce((n, r) => n + r.result.requests.total, 0),
      durationS: Math.max(...runs.map((r) => r.result.duration)),
      latency: { p50: percentile(all, 50), p99: percentile(all, 99), max: all.length > 0 ? (all[all.length - 1] as number) : NaN },
      statuses,
      non2xx: runs.reduce((n, r) => n + r.result.non2xx, 0),
      errors: runs.reduce((n, r) => n + r.result.errors, 0),
      timeouts: runs.reduce((n, r) => n + r.result.timeouts, 0),
      served: merge(servedPer),
      gatewayUpstream: after.reduce((n, s, i) => n + s.upstream - (before[i] as Scrape).upstream, 0),
      meterCalls: meterStats.calls,
      meterRelayErrors: meterStats.relayErrors,
      topOperations,
      peakLoadKey: meterStats.peakInFlight[loadKey] ?? 0,
      peakOtherKeys: Math.max(0, ...otherPeaks),
      stateFallbacks: after.reduce((n, s, i) => n + s.stateFallbacks - (before[i] as Scrape).stateFallbacks, 0),
      degradedAtEnd: after.reduce((n, s) => n + (s.stateDegraded > 0 ? 1 : 0), 0),
      budgetDecisions: merge(after.map((s, i) => delta((before[i] as Scrape).budgetDecisions, s.budgetDecisions))),
      // Less the first INFO itself (the second is counted after it answers).
      redisCommands: redisBefore !== undefined && redisAfter !== undefined ? redisAfter - redisBefore - 1 : undefined,
      perReplica: names.map((name, i) => ({
        name,
        clientRequests: runs[i]?.result.requests.total ?? 0,
        connections: shares[i] as number,
        served: servedPer[i] as Map<number, number>,
        rssEnd: rss[i]?.end,
        rssPeak: rss[i]?.peak,
        exitCode: exitCodes[i] ?? null,
      })),
    };
  } finally {
    await Promise.all(started.map((child) => stopChild(child, 5_000)));
    for (const child of started) child.cleanup();
    await redis?.stop();
  }
}

const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const rpsOf = (run: RunFigures): number => run.requests / run.durationS;
const gateway5xx = (run: RunFigures): number => total(run.served, (s) => s >= 500);
const upstreamPerRequest = (run: RunFigures): number => run.meterCalls / total(run.served);
const plural = (n: number): string => `${n} replica${n === 1 ? '' : 's'}`;

function report(run: RunFigures, options: ReplicaRunOptions): string[] {
  const v2Requests = total(run.served);
  const fiveXx = gateway5xx(run);
  const nonOk = new Map([...run.statuses].filter(([s]) => s < 200 || s >= 300));
  const budgets = [...run.budgetDecisions].sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${name} ${n}`).join(', ');
  const overBudget = run.peakLoadKey > options.concurrencyBudget;
  return [
    `requests: ${run.requests} in ${run.durationS.toFixed(1)} s = ${fixed(rpsOf(run), 0)} req/s (completed ÷ duration, all replicas)`,
    `latency: p50 ${fixed(run.latency.p50, 1)} ms, p99 ${fixed(run.latency.p99, 1)} ms, max ${fixed(run.latency.max, 0)} ms`,
    `non-2xx: ${run.non2xx} (${breakdown(nonOk)}); connection errors ${run.errors}, timeouts ${run.timeouts}`,
    `gateway 5xx (from /metrics of every replica): ${fiveXx}${fiveXx > 0 ? ` (${breakdown(new Map([...run.served].filter(([s]) => s >= 500)))})` : ''}`,
    `upstream calls per request (meter): ${fixed(upstreamPerRequest(run), 3)} (${run.meterCalls} NerdGraph calls reached the meter for ${v2Requests} requests; ` +
      `the replicas' /metrics count ${run.gatewayUpstream}${run.meterRelayErrors > 0 ? `; ${run.meterRelayErrors} the meter failed to relay` : ''})`,
    `NerdGraph calls by operation (meter): ${run.topOperations || 'none'}`,
    `peak concurrent NerdGraph calls per key (meter, all replicas together): ${run.peakLoadKey} for the load's key, budget ${options.concurrencyBudget} ` +
      `(NERDGRAPH_CONCURRENCY_PER_KEY): ${overBudget ? 'EXCEEDED' : 'within'}; any other key at most ${run.peakOtherKeys}`,
    `budget decisions (v2bridge_budget_decisions_total): ${budgets || 'none counted'}`,
    `per replica: ${run.perReplica
      .map((r) => {
        const served = total(r.served);
        return `${r.name} ${r.connections} clients, ${r.clientRequests} requests (${fixed((100 * served) / Math.max(1, v2Requests), 1)} % of the served), ` +
          `5xx ${total(r.served, (s) => s >= 500)}, RSS end ${mb(r.rssEnd)} peak ${mb(r.rssPeak)}, exit after SIGTERM ${r.exitCode}`;
      })
      .join('; ')}`,
    `Redis: ${run.stateFallbacks} fallbacks to memory (v2bridge_shared_state_fallbacks_total), ${run.degradedAtEnd} of ${run.replicas} replicas degraded at the end; ` +
      `${run.redisCommands === undefined ? 'commands n/a' : `${run.redisCommands} commands, ${fixed(run.redisCommands / Math.max(1, v2Requests), 2)} per request`}`,
  ];
}

function comparison(runs: readonly RunFigures[], options: ReplicaRunOptions): string[] {
  const header = `| | ${runs.map((r) => plural(r.replicas)).join(' | ')} |`;
  const row = (label: string, value: (r: RunFigures) => string): string => `| ${label} | ${runs.map(value).join(' | ')} |`;
  const lines = [
    header,
    `|---|${runs.map(() => '---:').join('|')}|`,
    row('req/s', (r) => fixed(rpsOf(r), 0)),
    row('p50 / p99 ms', (r) => `${fixed(r.latency.p50, 1)} / ${fixed(r.latency.p99, 1)}`),
    row('non-2xx (the mix\'s intended 401/404/422 included)', (r) => String(r.non2xx)),
    row('gateway 5xx', (r) => String(gateway5xx(r))),
    row('upstream calls per request', (r) => fixed(upstreamPerRequest(r), 3)),
    row(`peak concurrent NerdGraph calls per key (budget ${options.concurrencyBudget})`, (r) => String(r.peakLoadKey)),
    row('Redis fallbacks', (r) => String(r.stateFallbacks)),
    row('request split', (r) => r.perReplica.map((p) => `${p.name} ${fixed((100 * total(p.served)) / Math.max(1, total(r.served)), 0)} %`).join(', ')),
  ];
  const [first] = runs;
  if (first) {
    for (const other of runs.slice(1)) {
      lines.push('', `${plural(other.replicas)} ÷ ${plural(first.replicas)}: req/s ${fixed(rpsOf(other) / rpsOf(first), 2)}×, p50 ${fixed(other.latency.p50 / first.latency.p50, 2)}×, upstream calls per request ${fixed(upstreamPerRequest(other) / upstreamPerRequest(first), 2)}×`);
    }
  }
  return lines;
}

/** Runs every replica count in turn; answers whether each met the acceptance (0 gateway 5xx, peak within the budget). */
export async function runReplicaComparison(options: ReplicaRunOptions): Promise<boolean> {
  if (!existsSync(REDIS_SERVER)) throw new Error(`LOAD_REPLICAS needs Debian's redis-server at ${REDIS_SERVER} (apt-get install redis-server, or REDIS_SERVER_PATH)`);
  const out = (lines: readonly string[]): void => {
    process.stdout.write(`${lines.join('\n')}\n`);
  };
  out([
    `load: ${options.clients} clients for ${options.durationS} s; replica runs: ${options.replicaCounts.map(plural).join(', ')}, one after the other, each from scratch`,
    `setup: redis-server on loopback, one sandbox (${options.apmApps} APM apps) behind a NerdGraph meter${options.upstreamDelayMs > 0 ? ` holding each call ${options.upstreamDelayMs} ms` : ''}, ` +
      `gateways ${options.compiled ? 'compiled (node dist/src/index.js)' : "as npm start runs them (Node's own type stripping)"} with REDIS_URL, STATE_SECRET, info logs; ` +
      `clients split evenly, one autocannon instance per replica`,
    `machine: node ${process.version}, ${cpus()[0]?.model.trim() ?? 'cpu'}, ${cpus().length} cores (the load generator, Redis, the sandbox and the meter share them)`,
  ]);
  const runs: RunFigures[] = [];
  let met = true;
  for (const count of options.replicaCounts) {
    out(['', `== ${plural(count)} ==`]);
    const run = await runOnce(count, options);
    if (runs.length === 0) out([`mix: ${run.mix}`]);
    runs.push(run);
    out(report(run, options));
    if (gateway5xx(run) > 0 || run.peakLoadKey > options.concurrencyBudget) met = false;
  }
  if (runs.length > 1) out(['', ...comparison(runs, options)]);
  out(['', `acceptance (0 gateway 5xx; peak concurrent NerdGraph calls per key <= ${options.concurrencyBudget}): ${met ? 'MET' : 'NOT MET'} in ${runs.map((r) => plural(r.replicas)).join(' and ')}`]);
  return met;
}
