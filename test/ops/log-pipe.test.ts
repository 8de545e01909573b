import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { accountsAnswer, json, startFakeUpstream } from '../support/fake-upstream.ts';

/**
 * The real gateway process (`npm start`'s entry) with its stdout on a FIFO that a process holds
 * open without ever reading: a log collector that stalls (a blocked container log driver, a stuck
 * sidecar). The gateway must keep serving while the pipe is full, and SIGTERM must still end it
 * within SHUTDOWN_DRAIN_MS plus the final log flush's bound.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DRAIN_MS = 3000;
/** The documented margin past the drain bound: the final log flush gives up after 500 ms. */
const EXIT_MARGIN_MS = 1500;

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function fetchText(agent: Agent, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent, headers: { 'X-Api-Key': 'NRAK-SANDBOX-DEMO' } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

const get = async (agent: Agent, url: string): Promise<number> => (await fetchText(agent, url)).status;

async function until(probe: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface StalledGateway {
  gateway: ChildProcess;
  reader: ChildProcess;
  base: string;
  exited: Promise<{ code: number | null; at: number }>;
  stderr: () => string;
}

/** A gateway whose stdout is a FIFO that a process holds open and never reads. */
async function gatewayOnStalledPipe(env: Record<string, string>): Promise<StalledGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-fifo-'));
  dirs.push(dir);
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // The reader opens the pipe and then never reads from it.
  const reader = spawn('sh', ['-c', 'exec sleep 300 < "$0"', fifo], { stdio: 'ignore' });
  children.push(reader);

  const port = await freePort();
  // The shell opens the FIFO for the gateway as a container runtime would: a plain, blocking fd.
  const gateway = spawn('sh', ['-c', 'exec "$0" src/index.ts > "$1"', process.execPath, fifo], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      LOG_LEVEL: 'debug',
      // The smallest bound, so the requests below also fill the buffer behind the full pipe.
      LOG_BUFFER_MAX_BYTES: '65536',
      SANDBOX_APM_APPS: '20',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(gateway);
  let stderr = '';
  gateway.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => gateway.on('exit', (code) => resolve({ code, at: Date.now() })));
  return { gateway, reader, base: `http://127.0.0.1:${port}`, exited, stderr: () => stderr };
}

/** Over a thousand requests, each a log line: far more than the pipe's 64 KB and the 64 KB buffer hold. */
async function fillThePipe(agent: Agent, base: string): Promise<void> {
  await until(async () => (await get(agent, `${base}/healthz`)) === 200, 'the gateway to listen');
  const statuses: number[] = [];
  for (let round = 0; round < 12; round++) {
    statuses.push(...(await Promise.all(Array.from({ length: 120 }, (_, i) => get(agent, `${base}/v2/no-such-route-${round}-${i}.json`)))));
  }
  // Every one answered (404: an unknown route) while the pipe was full.
  expect(statuses.filter((status) => status !== 404)).toEqual([]);
  expect(await get(agent, `${base}/healthz`)).toBe(200);
  // The lines past the buffer's bound were dropped and counted, not held.
  const metrics = await fetchText(agent, `${base}/metrics`);
  const dropped = Number(/^v2bridge_log_lines_dropped_total (\d+)$/m.exec(metrics.body)?.[1] ?? 'NaN');
  expect(dropped).toBeGreaterThan(0);
}

async function exitWithin(running: StalledGateway, ms: number): Promise<{ code: number | null; after: number }> {
  const from = Date.now();
  const timeout = new Promise<'still alive'>((resolve) => setTimeout(() => resolve('still alive'), ms + 2000).unref());
  const outcome = await Promise.race([running.exited, timeout]);
  expect(outcome, `gateway stderr: ${running.stderr()}`).not.toBe('still alive');
  const { code, at } = outcome as { code: number | null; at: number };
  return { code, after: at - from };
}

describe('a stalled log pipe', () => {
  it('never holds the gateway: it serves while the pipe is full, and SIGTERM ends it within its drain bound', async () => {
    const running = await gatewayOnStalledPipe({ SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      await fillThePipe(agent, running.base);
    } finally {
      agent.destroy();
    }
    running.gateway.kill('SIGTERM');
    const { code, after } = await exitWithin(running, DRAIN_MS + EXIT_MARGIN_MS);
    expect(after).toBeLessThan(DRAIN_MS + EXIT_MARGIN_MS);
    expect(code).toBe(0);
  }, 60_000);

  it('exits at once when the reader of its stdout is gone, lines still buffered', async () => {
    const running = await gatewayOnStalledPipe({ SHUTDOWN_DRAIN_MS: String(DRAIN_MS), LOG_LEVEL: 'info' });
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      await until(async () => (await get(agent, `${running.base}/healthz`)) === 200, 'the gateway to listen');
      // A few lines, under the 4 KB a write waits for: they are still in the buffer at exit.
      for (let i = 0; i < 3; i++) expect(await get(agent, `${running.base}/v2/no-such-route-${i}.json`)).toBe(404);
    } finally {
      agent.destroy();
    }
    // The reader exits (a log shipper that died, `npm start | pino-pretty` after Ctrl-C): every write is EPIPE.
    const readerGone = new Promise((resolve) => running.reader.once('exit', resolve));
    running.reader.kill('SIGKILL');
    await readerGone;
    running.gateway.kill('SIGTERM');
    const { code, after } = await exitWithin(running, DRAIN_MS + EXIT_MARGIN_MS);
    expect(after).toBeLessThan(DRAIN_MS + EXIT_MARGIN_MS);
    expect(code).toBe(0);
  }, 60_000);

  it('a second signal during the drain exits at once, long before the drain bound', async () => {
    // A NerdGraph that never answers the application read: that request holds the drain open.
    const upstream = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') json(res, 200, accountsAnswer([1000001]));
    });
    const drainMs = 30_000;
    try {
      const running = await gatewayOnStalledPipe({ SHUTDOWN_DRAIN_MS: String(drainMs), NERDGRAPH_URL: upstream.url });
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      try {
        await fillThePipe(agent, running.base);
        void get(agent, `${running.base}/v2/applications/42.json`);
        await new Promise((r) => setTimeout(r, 300));
        running.gateway.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
        expect(running.gateway.exitCode).toBeNull();
        running.gateway.kill('SIGTERM');
        const { code, after } = await exitWithin(running, EXIT_MARGIN_MS);
        expect(after).toBeLessThan(EXIT_MARGIN_MS);
        expect(code).toBe(1);
      } finally {
        agent.destroy();
      }
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
