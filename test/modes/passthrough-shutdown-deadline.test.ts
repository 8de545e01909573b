import { createServer, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLegacyApi } from '../../src/modes/passthrough.ts';
import { bringDeadlinesForward } from '../../src/routes/request-signal.ts';
import { listenOnLoopback } from '../support/http.ts';

/**
 * A shutdown brings every request's deadline forward so the drain ends with v2 answers, not the
 * drain bound's cut. That covers a legacy answer still streaming once its handler has returned:
 * its body is cut at the new deadline, and the legacy request is aborted. (Its own file:
 * bringDeadlinesForward holds for the rest of the process.)
 */
const held: ServerResponse[] = [];
let legacy: { origin: string; close: () => Promise<void> };
let abandoned!: Promise<void>;

beforeAll(async () => {
  let noteAbandoned!: () => void;
  abandoned = new Promise((resolve) => (noteAbandoned = resolve));
  // Headers and half a body, then nothing: only a deadline ends this answer.
  legacy = await listenOnLoopback(
    createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"applications":[');
      held.push(res);
      res.once('close', () => {
        if (!res.writableFinished) noteAbandoned();
      });
    }),
  );
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await legacy.close();
});

it('cuts a legacy body still streaming when a shutdown brings the deadline forward', async () => {
  const api = createLegacyApi({ baseUrl: legacy.origin });
  try {
    // A deadline far past the test's timeout: only the shutdown can end this answer in time.
    const answer = await api.exchange({
      method: 'GET',
      target: '/v2/fixture_widgets.json',
      headers: new Headers(),
      body: null,
      dueAt: performance.now() + 600_000,
      publicOrigin: 'http://gateway.test',
      requestId: 'shutdown-test',
    });
    expect(answer.status).toBe(200);
    const body = answer.body;
    if (body === null) throw new Error('expected a streaming body');
    const failed = new Promise<Error>((resolve) => body.once('error', resolve));
    body.resume();
    bringDeadlinesForward(50);
    const error = await failed;
    expect(error.message).toBe('The legacy REST API did not answer in time');
    await abandoned;
  } finally {
    await api.close();
  }
});
