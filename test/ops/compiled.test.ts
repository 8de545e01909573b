import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Production runs what `npm run build` emits on plain node (no TypeScript loader): the same
 * gateway and embedded sandbox `npm start` runs, with every mapping and query found.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BRIDGE_TOKEN = 'compiled-test-bridge-token';

function build(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('npm', ['run', 'build'], { cwd: ROOT }, (error, _stdout, stderr) => (error ? reject(new Error(`npm run build failed:\n${stderr}`)) : resolve()));
  });
}

describe('node dist/src/index.js (npm run build)', () => {
  let child: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  let base = '';
  let key = '';

  beforeAll(async () => {
    await build();
    // Plain node, and no .ts beside the compiled code it loads.
    child = spawn(process.execPath, ['dist/src/index.js'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        PORT: '0',
        LOG_LEVEL: 'warn',
        SANDBOX_APM_APPS: '120',
        // One compared route: its judgement runs on the diff thread, whose compiled entry must resolve.
        ROUTE_MODES: 'GET /v2/applications/{id}/hosts=compare;*=translate',
        COMPARE_MAX_LOOP_UTILISATION: '1',
        BRIDGE_TOKEN: BRIDGE_TOKEN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 20_000;
    for (;;) {
      const curl = /curl -H 'X-Api-Key: ([^']+)' (http:\/\/[^\s]+)\/v2\/applications\.json/.exec(output);
      if (curl) {
        key = curl[1] ?? '';
        base = curl[2] ?? '';
        break;
      }
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`compiled gateway did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it('compiles every mapping module to .js, copies every document beside it, and ships no test', () => {
    const files = (dir: string, ending: string): string[] =>
      readdirSync(new URL(dir, import.meta.url), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith(ending))
        .sort();
    const sources = files('../../mappings/', '.ts').filter((f) => !f.endsWith('.test.ts'));
    const compiled = files('../../dist/mappings/', '.js');
    expect(sources.length).toBeGreaterThan(90);
    expect(compiled.map((f) => f.replace(/\.js$/, ''))).toEqual(sources.map((f) => f.replace(/\.ts$/, '')));
    expect(files('../../dist/mappings/', '.graphql')).toEqual(files('../../mappings/', '.graphql'));
    expect(files('../../dist/queries/', '.graphql')).toEqual(files('../../queries/', '.graphql'));
    expect(existsSync(new URL('../../dist/sandbox/schema.graphql', import.meta.url))).toBe(true);
  });

  it('serves the routes on the embedded sandbox as npm start does', async () => {
    expect(key).toBe('NRAK-SANDBOX-DEMO');
    const headers = { 'X-Api-Key': key };
    const list = await fetch(`${base}/v2/applications.json`, { headers });
    expect(list.status).toBe(200);
    const apps = ((await list.json()) as { applications: Array<{ id: number; name: string; reporting: boolean }> }).applications;
    expect(apps.length).toBeGreaterThan(0);
    const live = apps.find((a) => a.reporting) as { id: number; name: string };
    const show = await fetch(`${base}/v2/applications/${live.id}.xml`, { headers });
    expect(await show.text()).toContain(`<name>${live.name}</name>`);
    const data = await fetch(`${base}/v2/applications/${live.id}/metrics/data.json?names[]=HttpDispatcher&summarize=true`, { headers });
    expect(((await data.json()) as { metric_data: { metrics_found: string[] } }).metric_data.metrics_found).toEqual(['HttpDispatcher']);
    const hosts = await fetch(`${base}/v2/applications/${live.id}/hosts.json`, { headers });
    expect(hosts.status).toBe(200);
    const deployment = await fetch(`${base}/v2/applications/${live.id}/deployments.json`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'compiled-1' } }),
    });
    expect(deployment.status).toBe(201);
    expect((await fetch(`${base}/v2/applications/1.json`, { headers })).status).toBe(404);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('judges a compared request on the compiled diff thread', async () => {
    const apps = (await (await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } })).json()) as { applications: Array<{ id: number }> };
    const id = apps.applications[0]?.id;
    expect((await fetch(`${base}/v2/applications/${id}/hosts.json`, { headers: { 'X-Api-Key': key } })).status).toBe(200);
    let report: { totals: { outcomes: Record<string, number> } } | undefined;
    for (let attempt = 0; attempt < 200; attempt++) {
      const response = await fetch(`${base}/bridge/parity.json`, { headers: { Authorization: `Bearer ${BRIDGE_TOKEN}` } });
      report = (await response.json()) as typeof report;
      const { outcomes } = report?.totals ?? { outcomes: {} };
      if ((outcomes.match ?? 0) + (outcomes.mismatch ?? 0) + (outcomes.noise ?? 0) + (outcomes.error ?? 0) > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Judged on the thread: a match or mismatch, never an error (a thread that cannot start is "comparer failed").
    const { outcomes } = report?.totals ?? { outcomes: {} };
    expect((outcomes.match ?? 0) + (outcomes.mismatch ?? 0) + (outcomes.noise ?? 0)).toBeGreaterThan(0);
    expect(outcomes.error).toBe(0);
  });

  it('exits 0 on SIGTERM', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
