import { request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutcomeCounts } from '../../src/compare/parity-store.ts';
import { buildGateway, type BuiltGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { serveV2 } from '../../src/v2/client-error.ts';
import { httpSend } from '../support/http.ts';

/**
 * The load guard on shadow work, end to end: the gateway as `npm start` builds it (embedded
 * sandbox, default COMPARE_MAX_LOOP_UTILISATION), a candidate route, real HTTP on loopback.
 * A caller alone is compared even though serving it keeps the loop busy; shadow work is
 * dropped only while the loop is busy and another caller's request is in flight.
 */
const KEY = 'NRAK-SANDBOX-DEMO';
const APPS = '/v2/applications.json';

let gateway: BuiltGateway;
let server: Server;
let url: string;

beforeAll(async () => {
  // Only what the test needs: everything else, COMPARE_MAX_LOOP_UTILISATION included, at its default.
  const config = loadConfig({ ROUTE_MODES: `GET ${APPS}=candidate`, SANDBOX_APM_APPS: '5', LOG_LEVEL: 'silent' });
  expect(config.compare.maxLoopUtilisation).toBe(0.5);
  gateway = await buildGateway(config, { logger: createLogger('silent', new Writable({ write: (_chunk, _e, done) => done() })) });
  server = serveV2({ fetch: gateway.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await gateway?.close();
});

/** One request, its whole answer read before the next one is sent. */
async function listApps(): Promise<number> {
  const response = await httpSend(`${url}${APPS}`, { headers: { 'x-api-key': KEY } });
  await response.arrayBuffer();
  return response.status;
}

function outcomes(): OutcomeCounts {
  return gateway.store.report({ recent: 0 }).totals.outcomes;
}

const total = (counts: OutcomeCounts): number => Object.values(counts).reduce((sum, n) => sum + n, 0);

/** The outcomes once `count` more requests than in `before` have one (compared, failed or dropped); bounded by the test timeout. */
async function settled(before: OutcomeCounts, count: number): Promise<OutcomeCounts> {
  for (;;) {
    const counts = outcomes();
    if (total(counts) - total(before) >= count) return Object.fromEntries(Object.entries(counts).map(([outcome, n]) => [outcome, n - before[outcome as keyof OutcomeCounts]])) as OutcomeCounts;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Keeps the event loop busy for `ms`, as callers' work would (the utilisation reads high after). */
function busyLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Another caller, in flight until cut: a write whose body is still on its way. */
async function callerInFlight(): Promise<{ cut: () => void }> {
  const arrived = new Promise<void>((resolve) => server.once('request', () => resolve()));
  const client = httpRequest(`${url}/v2/alerts_policies.json`, { method: 'POST', agent: false, headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'content-length': '1000' } });
  client.on('error', () => undefined);
  client.write('{"policy":');
  await arrived;
  return { cut: () => client.destroy() };
}

/** A caller on its own connection, opened now; `send` writes its one request at once and resolves with the answer's status. */
async function connectedCaller(): Promise<{ send: () => Promise<number> }> {
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  return {
    send() {
      const answered = new Promise<number>((resolve, reject) => {
        let head = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (head += chunk));
        socket.once('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])));
        socket.once('error', reject);
      });
      socket.write(`GET ${APPS} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY}\r\nConnection: close\r\n\r\n`);
      return answered;
    },
  };
}

describe('candidate mode: the load guard sheds shadow work only while other callers wait', () => {
  it('one client sending 30 requests one after another gets (nearly) every one compared', async () => {
    const before = outcomes();
    for (let i = 0; i < 30; i++) expect(await listApps()).toBe(200);
    const counts = await settled(before, 30);
    // Before the guard looked for other callers, all 30 were dropped: the client's own requests kept the loop busy.
    expect(counts.dropped).toBeLessThanOrEqual(3);
    expect(counts.match + counts.mismatch + counts.noise).toBeGreaterThanOrEqual(27);
  });

  it('on a busy loop: compared while the caller is alone, dropped while another caller is in flight', async () => {
    // Alone: a request (the guard reads the loop on it), the loop kept busy, then the request under test.
    let before = outcomes();
    expect(await listApps()).toBe(200);
    busyLoop(300);
    expect(await listApps()).toBe(200);
    expect((await settled(before, 2)).dropped).toBe(0);

    // The same, with another caller's request in flight.
    const other = await callerInFlight();
    try {
      before = outcomes();
      expect(await listApps()).toBe(200);
      busyLoop(300);
      // Served all the same (translated), its shadow work counted dropped.
      expect(await listApps()).toBe(200);
      expect((await settled(before, 2)).dropped).toBeGreaterThanOrEqual(1);
    } finally {
      other.cut();
    }
  });

  it('callers whose requests wait together while the loop is busy have their shadow work dropped, though none is seen in flight with another', async () => {
    // Connected first, so their requests reach the gateway's socket buffers while the loop is busy.
    const callers = await Promise.all(Array.from({ length: 4 }, () => connectedCaller()));
    // A quiet spell first (one caller after another, as many as the guard remembers overlaps for); the guard reads the loop on each.
    const quiet = outcomes();
    for (let i = 0; i < 10; i++) expect(await listApps()).toBe(200);
    // The quiet spell's shadow work all settled (its judgements come from the diff thread), so none of it is counted below.
    await settled(quiet, 10);
    const before = outcomes();
    const statuses = callers.map((caller) => caller.send());
    busyLoop(300);
    // Each may be answered before the next is even read (an answer from the micro-cache): they overlapped only in waiting.
    expect(await Promise.all(statuses)).toEqual([200, 200, 200, 200]);
    expect((await settled(before, 4)).dropped).toBe(4);
  });
});
