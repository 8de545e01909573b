/**
 * `npm run load`: a bounded load and soak run. LOAD_CLIENTS concurrent clients (default 500)
 * send a mix of legacy requests for LOAD_DURATION_S seconds (default 60) to a gateway this
 * script starts as `npm start` does (embedded sandbox, info logs), or to LOAD_URL. With
 * LOAD_FAULTS=1 the gateway talks to a separate sandbox through load/fault-proxy.ts (500s,
 * connection resets, added latency). Prints throughput, latency, non-2xx, the gateway's own
 * 5xx and upstream calls per request (from its /metrics), and its RSS at start and end.
 * Not part of CI: it takes a minute and both cores.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { startNodeFlags } from '../scripts/start-flags.ts';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { z } from 'zod';
import { DEFAULT_FAULTS, startFaultProxy, type FaultProxy } from './fault-proxy.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

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
  return parsed.data;
}

// ---------------------------------------------------------------- processes

interface Child {
  process: ChildProcess;
  /** Everything it printed so far (stdout and stderr go to one file, not through this process). */
  output(): string;
  exited: Promise<number | null>;
  cleanup(): void;
}

const NODE_FLAGS = startNodeFlags();

const children: ChildProcess[] = [];
const killChildren = (): void => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};
process.on('exit', killChildren);

/**
 * A TypeScript entry on tsx, as the npm scripts run it (or its compiled .js under dist/ on
 * plain node); output to a temp file so a busy log never backs up a pipe.
 */
function startChild(entry: string, env: Record<string, string>, compiled = false): Child {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-load-'));
  const file = join(dir, 'output.log');
  const fd = openSync(file, 'w');
  const args = [...NODE_FLAGS, ...(compiled ? [join('dist', entry.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', entry])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { process: child, output: () => readFileSync(file, 'utf8'), exited, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function waitForOutput(child: Child, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    // Only the head of the file: the start-up lines, before the request logs.
    const match = pattern.exec(child.output().slice(0, 64 * 1024));
    if (match) return match;
    if (child.process.exitCode !== null) throw new Error(`${what} exited (${child.process.exitCode}):\n${child.output().slice(0, 2000)}`);
    if (Date.now() > deadline) throw new Error(`${what} did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resident set size in bytes, from /proc (Linux), or undefined. */
function procRss(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- /metrics

interface Scrape {
  /** v2 requests (not /metrics, /healthz, /readyz) by status. */
  byStatus: Map<number, number>;
  upstream: number;
  rss: number | undefined;
  heapUsed: number | undefined;
}

async function scrape(base: string): Promise<Scrape> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const byStatus = new Map<number, number>();
  for (const m of text.matchAll(/^v2bridge_http_requests_total\{route="([^"]*)",method="[^"]*",status="(\d+)"\}\s+(\S+)$/gm)) {
    if (['/metrics', '/healthz', '/readyz'].includes(m[1] ?? '')) continue;
    const status = Number(m[2]);
    byStatus.set(status, (byStatus.get(status) ?? 0) + Number(m[3]));
  }
  let upstream = 0;
  for (const m of text.matchAll(/^v2bridge_upstream_requests_total(?:\{[^}]*\})?\s+(\S+)$/gm)) upstream += Number(m[1]);
  const gauge = (name: string): number | undefined => {
    const value = new RegExp(`^${name}\\s+(\\S+)$`, 'm').exec(text)?.[1];
    return value === undefined ? undefined : Number(value);
  };
  return { byStatus, upstream, rss: gauge('v2bridge_process_resident_memory_bytes'), heapUsed: gauge('v2bridge_nodejs_heap_size_used_bytes') };
}

const total = (m: Map<number, number>, keep: (status: number) => boolean = () => true): number =>
  [...m].reduce((n, [status, count]) => (keep(status) ? n + count : n), 0);

function delta(before: Map<number, number>, after: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [status, count] of after) {
    const d = count - (before.get(status) ?? 0);
    if (d > 0) out.set(status, d);
  }
  return out;
}

// ---------------------------------------------------------------- the mix

interface MixEntry {
  name: string;
  weight: number;
  request: () => { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

async function buildMix(base: string, key: string): Promise<MixEntry[]> {
  const list = await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } });
  if (!list.ok) throw new Error(`GET /v2/applications.json answered ${list.status}: is ${key.slice(0, 5)}... a key of this gateway?`);
  const apps = ((await list.json()) as { applications: Array<{ id: number; reporting: boolean }> }).applications;
  const ids = apps.map((a) => a.id);
  // Dashboards and SLA scripts poll the same few applications and metric sets over and over;
  // page views and scripts look up any application.
  const polled = apps.filter((a) => a.reporting).slice(0, 8).map((a) => a.id);
  if (ids.length === 0 || polled.length === 0) throw new Error('the account needs applications, some of them reporting');
  const metricSets = ['names[]=HttpDispatcher&names[]=Apdex&summarize=true', 'names[]=HttpDispatcher&names[]=Apdex&names[]=Errors%2Fall&names[]=WebTransaction%2FUri%2Fapi%2Fitems%5Bid%5D'];
  let revision = 0;
  return [
    { name: 'applications list', weight: 12, request: () => ({ method: 'GET', path: pick(['/v2/applications.json', '/v2/applications.json', '/v2/applications.json', '/v2/applications.xml']) }) },
    { name: 'application show', weight: 25, request: () => ({ method: 'GET', path: `/v2/applications/${pick(ids)}.${pick(['json', 'json', 'xml'])}` }) },
    { name: 'metric data', weight: 18, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics/data.json?${pick(metricSets)}` }) },
    { name: 'hosts list', weight: 15, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/hosts.json` }) },
    { name: 'metric names', weight: 10, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics.json?name=HttpDispatcher` }) },
    { name: 'error: unknown application (404)', weight: 8, request: () => ({ method: 'GET', path: `/v2/applications/${1 + Math.floor(Math.random() * 1_000)}.json` }) },
    { name: 'error: bad parameter (422)', weight: 6, request: () => ({ method: 'GET', path: `/v2/applications/${pick(polled)}/metrics/data.json?names[]=HttpDispatcher&period=7` }) },
    { name: 'error: bad key (401/403)', weight: 3, request: () => ({ method: 'GET', path: '/v2/applications.json', headers: { 'X-Api-Key': 'NRAK-LOAD-NOT-A-KEY' } }) },
    { name: 'error: no key (401)', weight: 2, request: () => ({ method: 'GET', path: '/v2/applications.json', headers: {} }) },
    {
      name: 'deployment write',
      weight: 0.2,
      request: () => ({
        method: 'POST',
        path: `/v2/applications/${pick(polled)}/deployments.json`,
        body: JSON.stringify({ deployment: { revision: `load-${process.pid}-${++revision}`, user: 'load' } }),
        headers: { 'Content-Type': 'application/json' },
      }),
    },
  ];
}

function chooser(mix: readonly MixEntry[]): () => MixEntry {
  const sum = mix.reduce((n, e) => n + e.weight, 0);
  return () => {
    let roll = Math.random() * sum;
    for (const entry of mix) if ((roll -= entry.weight) < 0) return entry;
    return mix[mix.length - 1] as MixEntry;
  };
}

// ---------------------------------------------------------------- main

const mb = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);
const breakdown = (m: Map<number, number>): string => ([...m].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ') || 'none');

async function main(): Promise<void> {
  const settings = readSettings();
  const faults = settings.LOAD_FAULTS === '1';
  let gateway: Child | undefined;
  let sandbox: Child | undefined;
  let proxy: FaultProxy | undefined;
  let base = settings.LOAD_URL?.replace(/\/+$/, '') ?? '';
  let key = settings.LOAD_KEY;

  if (!settings.LOAD_URL) {
    const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', SANDBOX_APM_APPS: String(settings.SANDBOX_APM_APPS) };
    if (faults) {
      sandbox = startChild('src/sandbox/main.ts', { SANDBOX_PORT: '0', SANDBOX_APM_APPS: String(settings.SANDBOX_APM_APPS) });
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
  const how = settings.LOAD_COMPILED === '1' ? 'compiled, node dist/src/index.js' : 'as npm start does, on tsx';
  const target = settings.LOAD_URL ? settings.LOAD_URL : `gateway (${how}; ${faults ? 'separate sandbox behind the fault proxy' : 'embedded sandbox'}, ${settings.SANDBOX_APM_APPS} APM apps, info logs)`;
  process.stdout.write(
    `load: ${settings.LOAD_CLIENTS} clients for ${settings.LOAD_DURATION_S} s against ${target}\n` +
      `machine: node ${process.version}, ${cpus()[0]?.model.trim() ?? 'cpu'}, ${cpus().length} cores (the load generator shares them)\n` +
      `mix: ${mix.map((e) => `${e.name} ${e.weight}`).join(', ')}\n` +
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
