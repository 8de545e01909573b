/**
 * `npm run load`: a bounded load and soak run. LOAD_CLIENTS concurrent clients (default 500)
 * send a mix of legacy requests for LOAD_DURATION_S seconds (default 60) to a gateway this
 * script starts as `npm start` does (embedded sandbox, info logs), or to LOAD_URL. With
 * LOAD_FAULTS=1 the gateway talks to a separate sandbox through load/fault-proxy.ts (500s,
 * connection resets, added latency). Prints throughput, latency, non-2xx, the gateway's own
 * 5xx and upstream calls per request (from its /metrics), and its RSS at start and end.
 * LOAD_REPLICAS=2 (or 1,2) is the scale-out run instead: load/replicas.ts.
 * Not part of CI: it takes a minute and both cores.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { z } from 'zod';
import { ROOT, procRss, startChild, waitForOutput, type Child } from './children.ts';
import { DEFAULT_FAULTS, startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { buildMix, chooser, describeMix } from './mix.ts';
import { runReplicaComparison } from './replicas.ts';
import { breakdown, delta, mb, scrape, total } from './scrape.ts';

const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

/** `2`, or `1,2` for both in sequence: each a count of gateway replicas (1 to 8). */
const replicaCounts = z
  .string()
  .trim()
  .regex(/^[1-8](\s*,\s*[1-8])*$/, 'replica counts from 1 to 8, comma-separated, e.g. 2 or 1,2')
  .transform((text) => text.split(',').map((n) => Number(n.trim())));

const Settings = z.object({
  LOAD_CLIENTS: z.coerce.number().int().positive().max(10_000).default(500),
  LOAD_DURATION_S: z.coerce.number().int().positive().max(3_600).default(60),
  /** A running gateway to drive instead of starting one (RSS then comes from its /metrics only). */
  LOAD_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The key the mix sends (the embedded sandbox's demo key by default). */
  LOAD_KEY: z.string().min(1).default(DEMO_KEY),
  LOAD_FAULTS: z.enum(['0', '1']).default('0'),
  /** 1: build, then run the gateway as production does (node dist/src/index.js) instead of on tsx. */
  LOAD_COMPILED: z.enum(['0', '1']).default('0'),
  SANDBOX_APM_APPS: z.coerce.number().int().min(1).max(100_000).default(500),
  /** The scale-out run (load/replicas.ts): Redis, one sandbox behind a NerdGraph meter, this many gateways. */
  LOAD_REPLICAS: replicaCounts.optional(),
  /** Replica runs: the meter holds each NerdGraph call this long, standing in for a slower NerdGraph. */
  LOAD_UPSTREAM_DELAY_MS: z.coerce.number().int().min(0).max(10_000).default(0),
  /** Read as the gateways read it: the budget the replica run holds the meter's peak against. */
  NERDGRAPH_CONCURRENCY_PER_KEY: z.coerce.number().int().positive().max(1_000).default(25),
});
type Settings = z.output<typeof Settings>;

function readSettings(): Settings {
  const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = Settings.safeParse(env);
  if (!parsed.success) {
    process.stderr.write(`load: invalid settings:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}\n`);
    process.exit(1);
  }
  if (parsed.data.LOAD_URL && parsed.data.LOAD_FAULTS === '1') {
    process.stderr.write('load: LOAD_FAULTS=1 needs the gateway this script starts (it cannot put a proxy behind LOAD_URL)\n');
    process.exit(1);
  }
  if (parsed.data.LOAD_REPLICAS && (parsed.data.LOAD_URL || parsed.data.LOAD_FAULTS === '1')) {
    process.stderr.write('load: LOAD_REPLICAS starts its own Redis, sandbox and gateways: it does not combine with LOAD_URL or LOAD_FAULTS\n');
    process.exit(1);
  }
  return parsed.data;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const settings = readSettings();
  if (settings.LOAD_REPLICAS) {
    if (settings.LOAD_COMPILED === '1') execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const met = await runReplicaComparison({
      replicaCounts: settings.LOAD_REPLICAS,
      clients: settings.LOAD_CLIENTS,
      durationS: settings.LOAD_DURATION_S,
      key: settings.LOAD_KEY,
      compiled: settings.LOAD_COMPILED === '1',
      apmApps: settings.SANDBOX_APM_APPS,
      upstreamDelayMs: settings.LOAD_UPSTREAM_DELAY_MS,
      concurrencyBudget: settings.NERDGRAPH_CONCURRENCY_PER_KEY,
    });
    process.exitCode = met ? 0 : 1;
    return;
  }
  const faults = settings.LOAD_FAULTS === '1';
  let gateway: Child | undefined;
  let sandbox: Child | undefined;
  let proxy: FaultProxy | undefined;
  let base = settings.LOAD_URL?.replace(/\/+$/, '') ?? '';
  let key = settings.LOAD_KEY;

  if (!settings.LOAD_URL) {
    const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', SANDBOX_APM_APPS: String(settings.SANDBOX_APM_APPS) };
    if (faults) {
      sandbox = startChild('sandbox/main.ts', { SANDBOX_PORT: '0', SANDBOX_APM_APPS: String(settings.SANDBOX_APM_APPS) });
      const url = (await waitForOutput(sandbox, /sandbox listening on (http:\/\/\S+)/, 'the sandbox'))[1] as string;
      proxy = await startFaultProxy(`${url}/graphql`);
      env.NERDGRAPH_URL = proxy.url;
    }
    if (settings.LOAD_COMPILED === '1') execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    gateway = startChild('src/index.ts', env, settings.LOAD_COMPILED === '1');
    if (faults) {
      const port = (await waitForOutput(gateway, /"port":(\d+)[^\n]*v2-bridge listening/, 'the gateway'))[1] as string;
      base = `http://127.0.0.1:${port}`;
    } else {
      const curl = await waitForOutput(gateway, /curl -H 'X-Api-Key: ([^']+)' (http:\/\/\S+)\/v2\/applications\.json/, 'the gateway');
      key = settings.LOAD_KEY === DEMO_KEY ? (curl[1] as string) : settings.LOAD_KEY;
      base = curl[2] as string;
    }
  }

  const mix = await buildMix(base, key);
  const choose = chooser(mix);
  const rssStart = procRss(gateway?.process.pid, 'VmRSS');
  const before = await scrape(base);
  const how = settings.LOAD_COMPILED === '1' ? 'compiled, node dist/src/index.js' : "as npm start does, on Node's own type stripping";
  const target = settings.LOAD_URL ? settings.LOAD_URL : `gateway (${how}; ${faults ? 'separate sandbox behind the fault proxy' : 'embedded sandbox'}, ${settings.SANDBOX_APM_APPS} APM apps, info logs)`;
  process.stdout.write(
    `load: ${settings.LOAD_CLIENTS} clients for ${settings.LOAD_DURATION_S} s against ${target}\n` +
      `machine: node ${process.version}, ${cpus()[0]?.model.trim() ?? 'cpu'}, ${cpus().length} cores (the load generator shares them)\n` +
      `mix: ${describeMix(mix)}\n` +
      (faults ? `faults: ${DEFAULT_FAULTS.error500 * 100}% 500, ${DEFAULT_FAULTS.reset * 100}% connection reset, ${DEFAULT_FAULTS.delay * 100}% delayed ${DEFAULT_FAULTS.delayMs[0]}-${DEFAULT_FAULTS.delayMs[1]} ms\n` : ''),
  );

  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: base,
        connections: settings.LOAD_CLIENTS,
        duration: settings.LOAD_DURATION_S,
        timeout: 30,
        requests: [
          {
            setupRequest: (request) => {
              const made = choose().request();
              return {
                ...request,
                method: made.method,
                path: made.path,
                body: made.body ?? '',
                headers: made.headers ?? { 'X-Api-Key': key },
              };
            },
          },
        ],
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    process.once('SIGINT', () => instance.stop());
  });

  const after = await scrape(base);
  const rssEnd = procRss(gateway?.process.pid, 'VmRSS');
  const rssPeak = procRss(gateway?.process.pid, 'VmHWM');
  const served = delta(before.byStatus, after.byStatus);
  const v2Requests = total(served);
  const statuses = new Map<number, number>();
  for (const [code, count] of Object.entries(result.statusCodeStats ?? {})) statuses.set(Number(code), count.count ?? 0);

  const lines = [
    `requests: ${result.requests.total} in ${result.duration.toFixed(1)} s = ${result.requests.average.toFixed(0)} req/s (mean of per-second counts)`,
    `latency: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
    `non-2xx: ${result.non2xx} (${breakdown(new Map([...statuses].filter(([s]) => s < 200 || s >= 300)))}); connection errors ${result.errors}, timeouts ${result.timeouts}`,
    `gateway 5xx (from /metrics): ${total(served, (s) => s >= 500)}${total(served, (s) => s >= 500) > 0 ? ` (${breakdown(new Map([...served].filter(([s]) => s >= 500)))})` : ''}`,
    `gateway RSS: start ${mb(rssStart ?? before.rss)}, end ${mb(rssEnd ?? after.rss)}${rssPeak !== undefined ? `, peak ${mb(rssPeak)}` : ''} (V8 heap used: start ${mb(before.heapUsed)}, end ${mb(after.heapUsed)})`,
    `upstream calls per request (from /metrics): ${v2Requests > 0 ? ((after.upstream - before.upstream) / v2Requests).toFixed(3) : 'n/a'} (${after.upstream - before.upstream} NerdGraph calls for ${v2Requests} requests)`,
  ];
  if (proxy) lines.push(`faults injected: ${proxy.counts.error500} 500s, ${proxy.counts.reset} resets, ${proxy.counts.delayed} delayed, ${proxy.counts.passed} passed straight`);

  if (gateway) {
    gateway.process.kill('SIGTERM');
    lines.push(`gateway exit code after SIGTERM: ${await gateway.exited}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await proxy?.close();
  sandbox?.process.kill('SIGTERM');
  await sandbox?.exited;
  gateway?.cleanup();
  sandbox?.cleanup();
}

await main();
