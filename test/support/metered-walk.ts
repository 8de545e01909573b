import { afterAll, beforeAll } from 'vitest';
import { DEMO_KEY, createTestGateway, startSandbox, type TestGateway } from './harness.ts';
import { startUpstreamMeter, type UpstreamMeter } from './upstream-meter.ts';

/**
 * What the NerdGraph-cost tests of the paged alerts lists share: one v2
 * answer with its Link rels as paths, the NerdGraph calls a step makes (counted by a relay in
 * front of the sandbox, test/support/upstream-meter.ts), and a client's walk over rel="next".
 */
export interface Got {
  status: number;
  body: Record<string, unknown>;
  link: string | null;
  /** rel -> path and query of the Link target. */
  rels: Record<string, string>;
}

export async function getWithRels(gateway: TestGateway, path: string, method = 'GET'): Promise<Got> {
  const response = await gateway.app.request(path, { method, headers: { 'X-Api-Key': DEMO_KEY } });
  const link = response.headers.get('link');
  const rels: Record<string, string> = {};
  for (const entry of (link ?? '').split(', ').filter(Boolean)) {
    const match = /^<([^>]*)>; rel="(\w+)"$/.exec(entry);
    if (match) rels[match[2]!] = new URL(match[1]!).pathname + new URL(match[1]!).search;
  }
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, link, rels };
}

/** The NerdGraph calls `run` makes. */
export async function callsOf(meter: UpstreamMeter, run: () => Promise<unknown>): Promise<number> {
  meter.resetCounts();
  await run();
  return meter.calls();
}

/** Every page from `path` on, following rel="next" (at most 100). */
export async function walkNext(gateway: TestGateway, path: string): Promise<Got[]> {
  const pages = [await getWithRels(gateway, path)];
  for (let next = pages[0]!.rels.next; next !== undefined && pages.length < 100; next = pages.at(-1)!.rels.next) pages.push(await getWithRels(gateway, next));
  return pages;
}

/** A test file's sandbox behind a meter, started before its tests and stopped after them. */
export interface MeteredSandbox {
  /** The meter (set once the file's tests run). */
  readonly meter: UpstreamMeter;
  /** A gateway that has seen nothing yet, sending through the meter. */
  freshGateway(options?: Omit<Parameters<typeof createTestGateway>[0] & object, 'nerdgraphUrl'>): Promise<TestGateway>;
  /** The NerdGraph calls `run` makes (every operation, the account look-up too). */
  callsOf(run: () => Promise<unknown>): Promise<number>;
}

export function meteredSandbox(sandboxOptions?: Parameters<typeof startSandbox>[0]): MeteredSandbox {
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  let meter: UpstreamMeter | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox(sandboxOptions);
    meter = await startUpstreamMeter(sandbox.graphqlUrl);
  });
  afterAll(async () => {
    await meter?.close();
    await sandbox?.close();
  });
  const started = (): UpstreamMeter => {
    if (meter === undefined) throw new Error('meteredSandbox: used before its beforeAll ran');
    return meter;
  };
  return {
    get meter() {
      return started();
    },
    freshGateway: (options = {}) => createTestGateway({ ...options, nerdgraphUrl: started().url }),
    callsOf: (run) => callsOf(started(), run),
  };
}
