import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, apmEntity, json, startFakeUpstream } from '../support/fake-upstream.ts';

/**
 * Graceful shutdown of the real gateway process (the one `npm start` runs), on a NerdGraph
 * stand-in that answers the application show only when the test lets it (or never): SIGTERM
 * arrives while that request is in flight.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
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
  const child = spawn(process.execPath, ['src/index.ts'], {
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
function send(url: string, post?: string): Promise<{ status: number; connection: string | undefined; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const headers = { 'X-Api-Key': KEY, ...(post === undefined ? {} : { 'Content-Type': 'application/json' }) };
    const req = httpRequest(url, { method: post === undefined ? 'GET' : 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      res.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    });
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(post);
  });
}

/**
 * A NerdGraph whose application reads and deployment creates wait until the test releases them
 * (the mutation's answer only: a release counts as "NerdGraph recorded it, then went silent").
 */
async function slowUpstream() {
  const held: ServerResponse[] = [];
  const upstream = await startFakeUpstream((request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
    if (request.operationName === 'ApplicationDeployments') {
      const entity = { guid: entityGuid(ACCOUNT, 'APM', 'APPLICATION', APP_ID), accountId: ACCOUNT };
      return json(res, 200, { data: { actor: { entity, account: { nrql: { results: [] } } } } });
    }
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

  // The drain (2 s) is shorter than the request deadline (10 s by default): deadlines are
  // brought forward so the client gets its v2 answer instead of a cut connection.
  it.each([
    ['a read', undefined, 'NerdGraph did not answer in time'],
    [
      'a write already sent',
      JSON.stringify({ deployment: { revision: 'v-drain' } }),
      'The deployment may have been recorded, but New Relic did not confirm it: list the deployments before retrying',
    ],
  ])('answers %s NerdGraph never answers with a v2 504 before the drain bound, then exits 0', async (_what, post, title) => {
    const upstream = await slowUpstream();
    try {
      const gateway = await startGateway({ NERDGRAPH_URL: upstream.url, SHUTDOWN_DRAIN_MS: '2000' });
      const path = post === undefined ? `/v2/applications/${APP_ID}.json` : `/v2/applications/${APP_ID}/deployments.json`;
      const stuck = send(`${gateway.base}${path}`, post);
      await waitFor(() => (upstream.held.length > 0 ? true : undefined), 'the call to reach NerdGraph');
      gateway.child.kill('SIGTERM');
      const answer = await stuck;
      expect(answer).toMatchObject({ status: 504, connection: 'close' });
      expect(JSON.parse((answer as { body: string }).body)).toEqual({ error: { title } });
      expect(await gateway.exited).toBe(0);
      expect(gateway.output()).not.toContain('drain bound reached');
    } finally {
      upstream.release();
      await upstream.close();
    }
  });

  it('closes a connection that never sent a request and exits 0 without waiting for the bound', async () => {
    const upstream = await slowUpstream();
    try {
      // Reaching the bound (exit 1 after 20 s) fails the test.
      const gateway = await startGateway({ NERDGRAPH_URL: upstream.url, SHUTDOWN_DRAIN_MS: '20000' });
      const opened = connect({ host: '127.0.0.1', port: Number(new URL(gateway.base).port) });
      const closedByServer = new Promise<boolean>((resolve) => opened.on('close', () => resolve(true)));
      opened.on('error', () => undefined);
      await new Promise((resolve) => opened.once('connect', resolve));
      // An answer on another connection: the gateway has accepted the silent one by then.
      expect(await send(`${gateway.base}/healthz`)).toMatchObject({ status: 200 });

      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(0);
      expect(gateway.output()).toContain('drained: exiting');
      expect(await closedByServer).toBe(true);
    } finally {
      await upstream.close();
    }
  });

  it('cuts a request still arriving after SHUTDOWN_DRAIN_MS and exits 1', async () => {
    // A body announced but never sent: the handler waits on it, which no deadline ends.
    const upstream = await slowUpstream();
    try {
      const gateway = await startGateway({ NERDGRAPH_URL: upstream.url, SHUTDOWN_DRAIN_MS: '300' });
      const uploading = connect({ host: '127.0.0.1', port: Number(new URL(gateway.base).port) });
      const seen = new Promise<string>((resolve) => {
        let data = '';
        uploading.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
        uploading.on('close', () => resolve(data));
        uploading.on('error', () => undefined);
      });
      uploading.write(
        `PUT /v2/applications/${APP_ID}.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"application":',
      );
      // The key is checked while the body is still awaited: the request is in flight.
      await waitFor(() => (upstream.received.length > 0 ? true : undefined), 'the PUT to reach the gateway');
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(1);
      expect(await seen).toBe('');
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
