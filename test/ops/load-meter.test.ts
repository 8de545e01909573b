import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { meterKeyHash, readMeter, resetMeter, startLoadMeter, type LoadMeter } from '../../load/meter.ts';
import { listenOnLoopback } from '../support/http.ts';

/**
 * The load run's NerdGraph meter is the instrument behind two acceptance figures of the
 * scale-out run: upstream calls per request, and the peak of concurrent NerdGraph calls per key
 * held against the budget. These check that it counts what NerdGraph would see.
 */
const KEY_ONE = 'NRAK-METER-TEST-ONE';
const KEY_TWO = 'NRAK-METER-TEST-TWO';

interface HeldUpstream {
  url: string;
  received: () => number;
  /** Answers every call held so far, and every later one at once. */
  release: () => void;
  close: () => Promise<void>;
}

/** A /graphql stand-in that holds each call until released, then echoes what it got. */
async function heldUpstream(): Promise<HeldUpstream> {
  let received = 0;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const server = createServer((req, res) => {
    received++;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void gate.then(() => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { query: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { key: req.headers['api-key'], query: body.query } }));
      });
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { url: `${origin}/graphql`, received: () => received, release: () => open(), close };
}

const call = (meter: LoadMeter, key: string, operation: string): Promise<Response> =>
  fetch(meter.url, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify({ query: `query ${operation} { actor { user { id } } }` }) });

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('load meter (npm run load, LOAD_REPLICAS)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setUp(): Promise<{ upstream: HeldUpstream; meter: LoadMeter }> {
    const upstream = await heldUpstream();
    const meter = await startLoadMeter(upstream.url);
    cleanups.push(upstream.close, async () => {
      meter.server.closeAllConnections();
      await new Promise<void>((resolve) => meter.server.close(() => resolve()));
    });
    return { upstream, meter };
  }

  it('counts the calls in flight at once per key, relays them as they are, and names no key in its figures', async () => {
    const { upstream, meter } = await setUp();
    const answers = [
      ...Array.from({ length: 5 }, () => call(meter, KEY_ONE, 'ApplicationByGuid')),
      ...Array.from({ length: 2 }, () => call(meter, KEY_TWO, 'ApplicationsSearch')),
    ];
    await until(() => upstream.received() === 7);
    upstream.release();
    const bodies = await Promise.all(
      answers.map(async (pending) => {
        const answer = await pending;
        return { status: answer.status, body: (await answer.json()) as { data: { key: string; query: string } } };
      }),
    );

    expect(bodies.map((b) => b.status)).toEqual(Array(7).fill(200));
    expect(bodies.filter((b) => b.body.data.key === KEY_ONE)).toHaveLength(5);
    expect(bodies[0]?.body.data.query).toContain('query ApplicationByGuid');

    const stats = await readMeter(meter.url);
    expect(stats.calls).toBe(7);
    expect(stats.byOperation).toEqual({ ApplicationByGuid: 5, ApplicationsSearch: 2 });
    expect(stats.peakInFlight[meterKeyHash(KEY_ONE)]).toBe(5);
    expect(stats.peakInFlight[meterKeyHash(KEY_TWO)]).toBe(2);
    expect(JSON.stringify(stats)).not.toContain('NRAK');
  });

  it('does not count calls one after the other as concurrent, and starts afresh after a reset', async () => {
    const { upstream, meter } = await setUp();
    upstream.release();
    await (await call(meter, KEY_ONE, 'First')).text();
    for (let i = 0; i < 3; i++) await (await call(meter, KEY_ONE, 'Sequential')).text();
    expect((await readMeter(meter.url)).peakInFlight[meterKeyHash(KEY_ONE)]).toBe(1);

    await resetMeter(meter.url);
    const stats = await readMeter(meter.url);
    expect(stats.calls).toBe(0);
    expect(stats.peakInFlight).toEqual({});
  });

  it('answers 502 and counts it as its own failure when the upstream is gone, and the call leaves the in-flight count', async () => {
    const { upstream, meter } = await setUp();
    await upstream.close();
    const answer = await call(meter, KEY_ONE, 'Lost');
    expect(answer.status).toBe(502);
    await answer.text();
    const again = await call(meter, KEY_ONE, 'LostAgain');
    await again.text();
    const stats = await readMeter(meter.url);
    expect(stats.relayErrors).toBe(2);
    expect(stats.peakInFlight[meterKeyHash(KEY_ONE)]).toBe(1);
  });
});
