import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { createLogger } from '../src/ops/logger.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from './support/fake-upstream.ts';

/**
 * Graceful shutdown of the real gateway process (the one `npm start` runs), on a NerdGraph
 * stand-in that answers the application show only when the test lets it: SIGTERM arrives
 * while that request is in flight.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ACCOUNT = 1000001;
const APP_ID = 42;
const KEY = 'NRAK-SHUTDOWN-TEST';

interface Gateway {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  base: string;
}

async function waitFor<T>(probe: () => T | undefined, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await waitFor(() => /"port":(\d+)[^\n]*v2-bridge listening/.exec(output)?.[1], 'the gateway to listen');
  return { child, output: () => output, exited, base: `http://127.0.0.1:${port}` };
}

/** One request on its own connection; resolves with what the client saw, or the socket error. */
function send(url: string): Promise<{ status: number; connection: string | undefined; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { headers: { 'X-Api-Key': KEY }, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      res.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    });
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end();
  });
}

/** A NerdGraph whose application reads wait until the test releases them. */
async function slowUpstream() {
  const held: ServerResponse[] = [];
  const upstream = await startFakeUpstream((request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
    held.push(res);
  });
  return {
    ...upstream,
    held,
    release: () => {
      for (const res of held.splice(0)) json(res, 200, { data: { actor: { entity: apmEntity(ACCOUNT, APP_ID) } } });
    },
  };
}

describe('SIGTERM', () => {
  it('stops accepting connections, lets the slow request in flight finish, then exits 0', async () => {
    const upstream = await slowUpstream();
    try {
      const gateway = await startGateway({ NERDGRAPH_URL: upstream.url, SHUTDOWN_DRAIN_MS: '20000' });
      const slow = send(`${gateway.base}/v2/applications/${APP_ID}.json`);
      await waitFor(() => (upstream.held.length > 0 ? true : undefined), 'the show to reach NerdGraph');

      gateway.child.kill('SIGTERM');
      await waitFor(() => (gateway.output().includes('shutting down') ? true : undefined), 'the drain to start');
      expect(await send(`${gateway.base}/healthz`)).toEqual({ error: 'ECONNREFUSED' });
      expect(gateway.child.exitCode).toBeNull();

      upstream.release();
      const answer = await slow;
      expect(answer).toMatchObject({ status: 200, connection: 'close' });
      expect((JSON.parse((answer as { body: string }).body) as { application: { id: number } }).application.id).toBe(APP_ID);
      expect(await gateway.exited).toBe(0);
      expect(gateway.output()).toContain('drained: exiting');
    } finally {
      upstream.release();
      await upstream.close();
    }
  });

  it('cuts what is still in flight after SHUTDOWN_DRAIN_MS and exits 1', async () => {
    const upstream = await slowUpstream();
    try {
      const gateway = await startGateway({ NERDGRAPH_URL: upstream.url, SHUTDOWN_DRAIN_MS: '300' });
      const stuck = send(`${gateway.base}/v2/applications/${APP_ID}.json`);
      await waitFor(() => (upstream.held.length > 0 ? true : undefined), 'the show to reach NerdGraph');
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(1);
      expect(await stuck).toEqual({ error: 'ECONNRESET' });
      expect(gateway.output()).toContain('drain bound reached');
    } finally {
      upstream.release();
      await upstream.close();
    }
  });
});

describe('/readyz while draining', () => {
  it('answers 503 "draining" without asking NerdGraph, and closes the connection after each answer', async () => {
    let draining = false;
    let readinessChecks = 0;
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1, accountsCacheTtlMs: 1, metricNamesLookbackMs: 86_400_000, requestDeadlineMs: 10_000 },
      nerdgraph: { call: () => Promise.reject(new Error('unused')) },
      mappings: [],
      metrics: createMetrics(),
      logger: createLogger('silent'),
      readiness: () => Promise.resolve(++readinessChecks > 0),
      draining: () => draining,
    });
    const before = await app.request('/readyz');
    expect(before.status).toBe(200);
    expect(before.headers.get('connection')).toBeNull();

    draining = true;
    const during = await app.request('/readyz');
    expect(during.status).toBe(503);
    expect(await during.json()).toEqual({ status: 'draining' });
    expect(during.headers.get('connection')).toBe('close');
    expect(readinessChecks).toBe(1);
    expect((await app.request('/v2/nothing.json')).headers.get('connection')).toBe('close');
  });
});
