import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../support/harness.ts';
import { startNodeFlags } from '../../scripts/start-flags.ts';

/**
 * /bridge/explain under load, in a child gateway with the heap bound `npm start` ships
 * (package.json's `start`, read by scripts/start-flags.ts): it used to build a whole gateway app per request (about 7 MB that
 * a purge timer kept alive), so a few dozen explains, valid key or not, ended the process.
 * 1,000 explains, 20 at once, half with keys NerdGraph refuses (each verified: no per-address
 * limit here), must leave it up and its heap after a full GC within a few MB of where it began.
 */
const CHILD = fileURLToPath(new URL('../support/gateway-child.ts', import.meta.url));
const REQUESTS = 1_000;
const AT_ONCE = 20;
/** What 1,000 requests may leave behind: bounded caches filling (refused keys, cursors), not a leak per request. */
const ALLOWED_GROWTH_BYTES = 6 * 1024 * 1024;

let child: ChildProcess;
let origin: string;

function reply<T>(predicate: (message: Record<string, unknown>) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (message !== null && typeof message === 'object' && predicate(message as Record<string, unknown>)) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message as T);
      }
    };
    const onExit = (code: number | null, signal: string | null): void => reject(new Error(`the gateway exited (code ${code}, signal ${signal})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function heapAfterGc(): Promise<number> {
  const answer = reply<{ heapUsed: number; collected: boolean }>((m) => 'heapUsed' in m);
  child.send('heap');
  const { heapUsed, collected } = await answer;
  expect(collected, 'the child runs with --expose-gc').toBe(true);
  return heapUsed;
}

const targets = ['/v2/applications.json', '/v2/applications.json?filter[name]=a', '/v2/applications.json?page=2'];

/** Request `i`: an explain with the demo key, or with a key nobody issued (a new one each time). */
async function explainOnce(i: number): Promise<number> {
  const key = i % 2 === 0 ? DEMO_KEY : `NRAK-NOBODYSKEY${String(i).padStart(20, '0')}`;
  const request = targets[i % targets.length] as string;
  const response = await fetch(`${origin}/bridge/explain?request=${encodeURIComponent(request)}`, { headers: { 'X-Api-Key': key } });
  await response.arrayBuffer();
  return response.status;
}

async function explainMany(count: number, offset: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = offset + next++;
      const status = await explainOnce(i);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return statuses;
}

beforeAll(async () => {
  child = fork(CHILD, [], {
    execArgv: [...startNodeFlags(), '--expose-gc', '--import', 'tsx'],
    // Only what the gateway reads, set here: nothing of the test runner's environment changes it.
    env: {
      PATH: process.env.PATH ?? '',
      // A small sandbox keeps each explain cheap; the app built per request was the same size whatever the data.
      SANDBOX_APM_APPS: '30',
      // Every unknown key is verified with NerdGraph (the worst case for memory), none refused for the rate.
      KEY_VERIFICATIONS_PER_ADDRESS: '0',
      // The shipped default, so the wait below outlasts its window.
      MICRO_CACHE_MS: '1000',
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { port } = await reply<{ port: number }>((m) => 'port' in m);
  origin = `http://127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill();
  await exited;
});

describe('/bridge/explain holds no memory per request', () => {
  it(`${REQUESTS} explains, ${AT_ONCE} at once, valid and refused keys: the gateway stays up and its heap flat`, async () => {
    // Warm: modules, documents, the sandbox's answers and every bounded cache at its working size.
    await explainMany(100, 0);
    const before = await heapAfterGc();
    const statuses = await explainMany(REQUESTS, 100);
    expect(Object.fromEntries(statuses)).toEqual({ 200: REQUESTS / 2, 401: REQUESTS / 2 });
    // Let the read micro-cache's window (MICRO_CACHE_MS, 1 s) pass twice: its expired answers are dropped every window.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const after = await heapAfterGc();
    expect(child.exitCode).toBeNull();
    expect(after - before, `heap grew from ${before} to ${after} bytes`).toBeLessThan(ALLOWED_GROWTH_BYTES);
  }, 180_000);
});
