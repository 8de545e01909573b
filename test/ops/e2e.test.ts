import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/ops/config.ts';

/**
 * End to end over real loopback HTTP: the process `npm start` runs, on the embedded sandbox,
 * exactly as a new user starts it (no configuration), driven with the curl line it prints.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function startGateway(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['src/index.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(predicate: () => RegExpExecArray | null, ms: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const match = predicate();
    if (match) return match;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A GET with a form body, as curl -X GET -d sends it (fetch cannot). */
function getWithBody(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends raw bytes and returns what came back before the server closed or `ms` passed. */
function rawExchange(base: string, bytes: string, options: { closeAfterWrite?: boolean; ms?: number } = {}): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(Number(port), hostname, () => {
      socket.write(bytes);
      if (options.closeAfterWrite) socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => resolve(text));
    socket.on('close', () => resolve(text));
    setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, options.ms ?? 1000);
  });
}

describe('npm start on a fresh machine', () => {
  let gateway: ReturnType<typeof startGateway>;
  let key = '';
  let base = '';

  beforeAll(async () => {
    gateway = startGateway({ PORT: '0', LOG_LEVEL: 'warn', SANDBOX_APM_APPS: '250' });
    const curl = await waitFor(() => /curl -H 'X-Api-Key: ([^']+)' (http:\/\/[^\s]+)\/v2\/applications\.json/.exec(gateway.output()), 20_000);
    key = curl[1] ?? '';
    base = curl[2] ?? '';
  });
  afterAll(async () => {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  });

  it('prints a demo key and a curl line that works', async () => {
    expect(key).toBe('NRAK-SANDBOX-DEMO');
    const response = await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { applications: Array<{ id: number; name: string }> };
    expect(body.applications).toHaveLength(200);
    expect(response.headers.get('link')).toBe(`<${base}/v2/applications.json?page=2>; rel="next", <${base}/v2/applications.json?page=2>; rel="last"`);
    const show = await fetch(`${base}/v2/applications/${body.applications[0]?.id}.xml`, { headers: { 'Api-Key': key } });
    expect(show.status).toBe(200);
    expect(await show.text()).toContain(`<name>${body.applications[0]?.name}</name>`);
  });

  it('serves metric data and records a deployment the way CI scripts do (v2 JSON and v0 form)', async () => {
    const list = (await (await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } })).json()) as { applications: Array<{ id: number; name: string; reporting: boolean }> };
    const app = list.applications.find((a) => a.reporting) as { id: number; name: string };
    const data = await fetch(`${base}/v2/applications/${app.id}/metrics/data.json?names[]=HttpDispatcher&values[]=call_count&summarize=true`, { headers: { 'X-Api-Key': key } });
    expect(data.status).toBe(200);
    expect(((await data.json()) as { metric_data: { metrics_found: string[] } }).metric_data.metrics_found).toEqual(['HttpDispatcher']);

    const v2 = await fetch(`${base}/v2/applications/${app.id}/deployments.json`, {
      method: 'POST',
      headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ deployment: { revision: 'e2e-1', user: 'ci' } }),
    });
    expect(v2.status).toBe(201);
    const created = ((await v2.json()) as { deployment: { id: number } }).deployment;
    const v0 = await fetch(`${base}/deployments.xml`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
      body: `deployment[app_name]=${encodeURIComponent(app.name)}&deployment[revision]=e2e-2`,
    });
    expect(v0.status).toBe(201);
    expect(await v0.text()).toContain('<revision>e2e-2</revision>');
    const listed = (await (await fetch(`${base}/v2/applications/${app.id}/deployments.json`, { headers: { 'X-Api-Key': key } })).json()) as { deployments: Array<{ id: number; revision: string }> };
    expect(listed.deployments.filter((d) => d.revision.startsWith('e2e-')).map((d) => d.revision).sort()).toEqual(['e2e-1', 'e2e-2']);
    expect(listed.deployments.find((d) => d.revision === 'e2e-1')?.id).toBe(created.id);
  });

  it('reads parameters from a form body on GET', async () => {
    const list = (await (await fetch(`${base}/v2/applications.json`, { headers: { 'X-Api-Key': key } })).json()) as { applications: Array<{ id: number }> };
    const ids = list.applications.slice(0, 3).map((a) => a.id);
    const answer = await getWithBody(`${base}/v2/applications.json`, { 'X-Api-Key': key }, `filter[ids]=${ids.join('%2C')}`);
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { applications: Array<{ id: number }> }).applications.map((a) => a.id).sort()).toEqual([...ids].sort());
    const bad = await getWithBody(`${base}/v2/applications.json`, { 'X-Api-Key': key }, 'filter[ids]=abc');
    expect(bad.status).toBe(422);
  });

  it('keeps form-body parameters in Link URLs, so the next page is of the same list', async () => {
    const answer = await new Promise<{ link: string | undefined; body: string }>((resolve, reject) => {
      const body = 'filter[name]=%20';
      const req = httpRequest(`${base}/v2/applications.json`, { method: 'GET', headers: { 'X-Api-Key': key, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ link: [res.headers.link ?? []].flat().join(', ') || undefined, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
    const next = /<([^>]+)>; rel="next"/.exec(answer.link ?? '')?.[1];
    expect(next).toBe(`${base}/v2/applications.json?filter[name]=%20&page=2`);
    const page2 = (await (await fetch(next ?? '', { headers: { 'X-Api-Key': key } })).json()) as { applications: Array<{ name: string }> };
    expect(page2.applications.length).toBeGreaterThan(0);
    expect(page2.applications.every((a) => a.name.includes(' '))).toBe(true);
  });

  it('answers HEAD like GET, without a body', async () => {
    const response = await fetch(`${base}/v2/applications.json`, { method: 'HEAD', headers: { 'X-Api-Key': key } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('a client that drops its GET body half-way, or names credentials in the target, gets no 5xx', async () => {
    const counted = async (): Promise<string> => (await (await fetch(`${base}/metrics`)).text());
    const requestsSoFar = (metrics: string): number =>
      [...metrics.matchAll(/^v2bridge_http_requests_total\{route="\/v2\/applications\.\{format\}"[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    const before = requestsSoFar(await counted());
    await rawExchange(base, `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nfilter`, { closeAfterWrite: true });
    const withCredentials = await rawExchange(base, `GET http://user:secret@gw.example/v2/applications.json HTTP/1.1\r\nHost: gw.example\r\nX-Api-Key: ${key}\r\nConnection: close\r\n\r\n`);
    expect(withCredentials).toMatch(/^HTTP\/1\.1 [234]\d\d /);
    // Wait until both requests are counted, whatever the machine's speed.
    let metrics = await counted();
    for (let i = 0; i < 100 && requestsSoFar(metrics) < before + 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      metrics = await counted();
    }
    expect(requestsSoFar(metrics)).toBe(before + 2);
    expect(metrics).toMatch(/v2bridge_http_requests_total\{route="\/v2\/applications\.\{format\}",method="GET",status="400"\} 1/);
    expect(metrics).not.toMatch(/v2bridge_http_requests_total\{[^}]*status="5\d\d"\}/);
    expect(gateway.output()).not.toContain('secret');
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('v2bridge_http_requests_total');
  });
});

describe('bad configuration', () => {
  it('stops the process with a message naming the variable and a non-zero exit', async () => {
    const run = startGateway({ PORT: 'eighty', REQUEST_DEADLINE_MS: '-5' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/Invalid configuration:[\s\S]*PORT[\s\S]*REQUEST_DEADLINE_MS/);
  });

  it('loadConfig validates every value and derives the NerdGraph URL from the region', () => {
    expect(loadConfig({}).nerdgraphUrl).toBeUndefined();
    expect(loadConfig({ NEW_RELIC_REGION: 'eu' }).nerdgraphUrl).toBe('https://api.eu.newrelic.com/graphql');
    expect(loadConfig({ NEW_RELIC_REGION: 'eu', NERDGRAPH_URL: 'http://127.0.0.1:1/graphql' }).nerdgraphUrl).toBe('http://127.0.0.1:1/graphql');
    expect(() => loadConfig({ NEW_RELIC_REGION: 'mars' })).toThrow(ConfigError);
    expect(() => loadConfig({ NERDGRAPH_URL: 'ftp://x' })).toThrow(ConfigError);
    expect(() => loadConfig({ NEW_RELIC_ACCOUNT_ID: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ V2BRIDGE_CONFIG_FILE: '/nonexistent/v2bridge.json' })).toThrow(/V2BRIDGE_CONFIG_FILE/);
  });
});
