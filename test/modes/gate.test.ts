import { channel as diagnosticsChannel } from 'node:diagnostics_channel';
import { EventEmitter, once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createCallerGauge, createLoopGauge, type LoopSample } from '../../src/modes/loop-gauge.ts';
import { createShadowQueue } from '../../src/modes/shadow.ts';
import { listenOnLoopback } from '../support/http.ts';

/**
 * Caller-first shadow work: the queue drops a job instead of starting it while the event loop is
 * busier than COMPARE_MAX_LOOP_UTILISATION, and the gauge that says how busy it is. Both are
 * driven by injected numbers, never by the test machine's own load.
 */
/** A job that runs until released, recording that it started. */
function heldJobs() {
  const started: number[] = [];
  const releases: Array<() => void> = [];
  const job = (n: number) => () =>
    new Promise<void>((resolve) => {
      started.push(n);
      releases.push(resolve);
    });
  return { started, releases, job };
}

/** Turns of the loop until `done()` (bounded). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the shadow queue, gated on loop utilisation', () => {
  it('drops a job (onDropped, once) instead of starting it while the loop is busier than the bound', () => {
    let utilisation = 0.8;
    const queue = createShadowQueue({ concurrency: 2, queueMax: 4, utilisation: () => utilisation, maxUtilisation: 0.5 });
    const { started, job } = heldJobs();
    const dropped: number[] = [];
    expect(queue.hasRoom()).toBe(false);
    expect(queue.submit(job(1), () => dropped.push(1))).toBe(false);
    expect(started).toEqual([]);
    expect(dropped).toEqual([1]);
    utilisation = 0.5;
    expect(queue.hasRoom()).toBe(true);
    expect(queue.submit(job(2), () => dropped.push(2))).toBe(true);
    expect(started).toEqual([2]);
    expect(dropped).toEqual([1]);
  });

  it('drops the waiting jobs when a slot frees up while the loop is busy', async () => {
    let utilisation = 0;
    const queue = createShadowQueue({ concurrency: 1, queueMax: 2, utilisation: () => utilisation, maxUtilisation: 0.5 });
    const { started, releases, job } = heldJobs();
    const dropped: number[] = [];
    expect([1, 2, 3].map((n) => queue.submit(job(n), () => dropped.push(n)))).toEqual([true, true, true]);
    expect(started).toEqual([1]);
    utilisation = 0.9;
    releases[0]?.();
    await turnsUntil(() => dropped.length === 2);
    expect(dropped).toEqual([2, 3]);
    expect(started).toEqual([1]);
    expect(queue.pending).toBe(0);
  });

  it('starts a waiting job when a slot frees up and the loop has room', async () => {
    const queue = createShadowQueue({ concurrency: 1, queueMax: 1, utilisation: () => 0.1, maxUtilisation: 0.5 });
    const { started, releases, job } = heldJobs();
    queue.submit(job(1));
    queue.submit(job(2));
    releases[0]?.();
    await turnsUntil(() => started.length === 2);
    expect(started).toEqual([1, 2]);
  });

  it('a busy loop is not load while no other caller is in flight: the job starts; with one in flight it is dropped', () => {
    let othersInFlight = false;
    const queue = createShadowQueue({ concurrency: 2, queueMax: 4, utilisation: () => 0.95, maxUtilisation: 0.5, callersWaiting: () => othersInFlight });
    const { started, job } = heldJobs();
    const dropped: number[] = [];
    // A lone sequential caller: the loop is busy with its own requests only.
    expect(queue.hasRoom()).toBe(true);
    expect(queue.submit(job(1), () => dropped.push(1))).toBe(true);
    expect(started).toEqual([1]);
    // Another caller shares the busy loop: shadow work gives way.
    othersInFlight = true;
    expect(queue.hasRoom()).toBe(false);
    expect(queue.submit(job(2), () => dropped.push(2))).toBe(false);
    expect(started).toEqual([1]);
    expect(dropped).toEqual([2]);
  });

  it('other callers in flight on a quiet loop are not load either (they wait on NerdGraph, not on the loop)', () => {
    const queue = createShadowQueue({ concurrency: 1, queueMax: 1, utilisation: () => 0.2, maxUtilisation: 0.5, callersWaiting: () => true });
    const { started, job } = heldJobs();
    expect(queue.submit(job(1))).toBe(true);
    expect(started).toEqual([1]);
  });

  it('a waiting job starts when a slot frees up on a busy loop with no other caller, and is dropped once one is in flight', async () => {
    let othersInFlight = false;
    const queue = createShadowQueue({ concurrency: 1, queueMax: 2, utilisation: () => 0.95, maxUtilisation: 0.5, callersWaiting: () => othersInFlight });
    const { started, releases, job } = heldJobs();
    const dropped: number[] = [];
    expect([1, 2, 3].map((n) => queue.submit(job(n), () => dropped.push(n)))).toEqual([true, true, true]);
    releases[0]?.();
    await turnsUntil(() => started.length === 2);
    expect(started).toEqual([1, 2]);
    othersInFlight = true;
    releases[1]?.();
    await turnsUntil(() => dropped.length === 1);
    expect(dropped).toEqual([3]);
    expect(started).toEqual([1, 2]);
  });

  it('a bound of 1 turns the check off: the utilisation is never even read', () => {
    let reads = 0;
    const queue = createShadowQueue({ concurrency: 1, queueMax: 0, utilisation: () => (reads++, 1), maxUtilisation: 1 });
    const { started, job } = heldJobs();
    expect(queue.submit(job(1))).toBe(true);
    expect(started).toEqual([1]);
    // Full: concurrency used up and no waiting room, whatever the loop.
    expect(queue.hasRoom()).toBe(false);
    expect(queue.submit(job(2))).toBe(false);
    expect(reads).toBe(0);
  });
});

/** A scripted event loop: each step is some milliseconds active then some idle. */
function scriptedLoop() {
  let sample: LoopSample = { idle: 0, active: 0 };
  return {
    sample: () => sample,
    run(activeMs: number, idleMs: number) {
      sample = { idle: sample.idle + idleMs, active: sample.active + activeMs };
    },
  };
}

describe('the loop gauge', () => {
  it('reads 0 before anything ran, and never changes without time passing', () => {
    const loop = scriptedLoop();
    const gauge = createLoopGauge({ windowMs: 200, sample: loop.sample });
    expect(gauge()).toBe(0);
    expect(gauge()).toBe(0);
  });

  it('climbs to a steady load within about a window, and falls back after a quiet spell', () => {
    const loop = scriptedLoop();
    const gauge = createLoopGauge({ windowMs: 200, sample: loop.sample });
    // 80 % busy, read every millisecond (as a busy gateway would), for one window.
    for (let ms = 0; ms < 200; ms++) {
      loop.run(0.8, 0.2);
      gauge();
    }
    expect(gauge()).toBeGreaterThan(0.8 * (1 - Math.exp(-1)) - 0.01);
    // Two more windows: settled at the load.
    for (let ms = 0; ms < 400; ms++) {
      loop.run(0.8, 0.2);
      gauge();
    }
    expect(gauge()).toBeCloseTo(0.8, 1);
    // A second of idleness, read once: the busy past no longer counts.
    loop.run(0, 1000);
    expect(gauge()).toBeLessThan(0.01);
  });

  it('does not depend on how often it is read: one reading per window gives the same answer as many', () => {
    const often = scriptedLoop();
    const rarely = scriptedLoop();
    const [fast, slow] = [createLoopGauge({ windowMs: 100, sample: often.sample }), createLoopGauge({ windowMs: 100, sample: rarely.sample })];
    for (let ms = 0; ms < 1000; ms++) {
      often.run(0.6, 0.4);
      fast();
    }
    rarely.run(600, 400);
    expect(slow()).toBeCloseTo(fast(), 1);
  });

  it('always stays between 0 and 1', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 0, max: 1000, noNaN: true })), { maxLength: 50 }), (steps) => {
        const loop = scriptedLoop();
        const gauge = createLoopGauge({ windowMs: 150, sample: loop.sample });
        for (const [active, idle] of steps) {
          loop.run(active, idle);
          const value = gauge();
          if (!(value >= 0 && value <= 1)) return false;
        }
        return true;
      }),
    );
  });
});

/** A plain HTTP server on loopback that holds every request until the test answers it. */
async function holdingServer() {
  const held: Array<{ req: IncomingMessage; res: ServerResponse }> = [];
  let arrived: () => void = () => undefined;
  const server = createServer((req, res) => {
    held.push({ req, res });
    arrived();
  });
  const listening = await listenOnLoopback(server);
  return {
    held,
    /** Sends a GET and resolves, with the server's side of it, once the server holds it. */
    async send() {
      const reached = new Promise<void>((resolve) => (arrived = resolve));
      const client = httpRequest(`${listening.origin}/v2/fixture_widgets.json`, { agent: false }, (res) => res.resume());
      client.on('error', () => undefined);
      client.end();
      await reached;
      return held[held.length - 1] as (typeof held)[number];
    },
    close: listening.close,
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Node's report of a request reaching a server (the `http.server.request.start` message), for one scripted server. */
function scriptedServer() {
  const server = {};
  const channel = diagnosticsChannel('http.server.request.start');
  return {
    /** A request starts; the returned function ends it (its response closes). */
    start(): { request: IncomingMessage; end: () => void } {
      // Only the fields the gauge reads: a request to key on, a response that closes.
      const request = {} as IncomingMessage;
      const response = new EventEmitter();
      channel.publish({ request, response, socket: {}, server });
      return { request, end: () => response.emit('close') };
    },
  };
}

describe('the caller gauge: do callers overlap on the gateway server?', () => {
  it('over HTTP: a lone caller is no overlap, a second caller in flight is, and the server\'s own upstream calls are not callers', async () => {
    const gateway = await holdingServer();
    const upstream = await holdingServer();
    try {
      const callers = createCallerGauge();
      // Nothing observed yet: it cannot tell, so the utilisation decides alone.
      expect(callers.callersOverlap()).toBe(true);
      const first = await gateway.send();
      callers.observe(first.req);
      expect(callers.callersOverlap()).toBe(false);
      // Another server in the process (as the embedded sandbox is) has callers of its own.
      await upstream.send();
      await upstream.send();
      expect(callers.callersOverlap()).toBe(false);
      await gateway.send();
      expect(callers.callersOverlap()).toBe(true);
    } finally {
      for (const { res } of [...gateway.held, ...upstream.held]) res.destroy();
      await gateway.close();
      await upstream.close();
    }
  });

  it('one caller after another never overlaps, however many', async () => {
    const callers = createCallerGauge();
    const server = scriptedServer();
    for (let i = 0; i < 50; i++) {
      const request = server.start();
      callers.observe(request.request);
      expect(callers.callersOverlap()).toBe(false);
      request.end();
      await nextTurn();
    }
  });

  it('callers that started in one turn of the loop had waited together: an overlap, even if each was answered at once', async () => {
    const callers = createCallerGauge();
    const server = scriptedServer();
    const first = server.start();
    callers.observe(first.request);
    first.end();
    expect(callers.callersOverlap()).toBe(false);
    server.start().end();
    expect(callers.callersOverlap()).toBe(true);
  });

  it('an overlap is remembered for the next 8 requests (the first caller after a blocked loop starts alone), then forgotten', async () => {
    const callers = createCallerGauge();
    const server = scriptedServer();
    const first = server.start();
    callers.observe(first.request);
    const second = server.start();
    first.end();
    second.end();
    await nextTurn();
    for (let i = 1; i <= 8; i++) {
      // Each alone, on its own turn: still within memory of the overlap until the 8th.
      expect(callers.callersOverlap()).toBe(true);
      server.start().end();
      await nextTurn();
    }
    expect(callers.callersOverlap()).toBe(false);
  });

  it('a caller whose connection is cut no longer counts as in flight', async () => {
    const callers = createCallerGauge();
    const server = scriptedServer();
    const cut = server.start();
    callers.observe(cut.request);
    // The connection closes unanswered; the following callers, each alone, are no overlap.
    cut.end();
    await nextTurn();
    server.start().end();
    expect(callers.callersOverlap()).toBe(false);
  });
  it('a pipelined request whose client hangs up before its answer began is no longer in flight', async () => {
    const callers = createCallerGauge();
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      callers.observe(req);
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    });
    const { origin, close } = await listenOnLoopback(server);
    const { port } = new URL(origin);
    const send = (path: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const request = httpRequest(`${origin}${path}`, (res) => res.resume().on('end', resolve));
        request.on('error', reject).end();
      });
    try {
      await send('/alone');
      // Two requests on one connection: the second waits behind the first, with no socket of its own.
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /queued HTTP/1.1\r\nHost: x\r\n\r\n');
      while (held.length === 0) await nextTurn();
      socket.destroy();
      await once(socket, 'close');
      // One caller after another again: once the recent overlap has passed, none is seen.
      for (let i = 0; i < 10; i++) await send('/alone');
      expect(callers.callersOverlap()).toBe(false);
    } finally {
      await close();
    }
  });
});
