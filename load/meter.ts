import { createHash } from 'node:crypto';
import { operationOf } from '../test/support/fault-proxy.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { z } from 'zod';

/**
 * The NerdGraph meter of the replica load run: a relay in front of the sandbox's /graphql that
 * sees what NerdGraph would see from every replica together. It counts calls (by operation) and,
 * per API key, the calls in flight and their peak: the number NerdGraph's 25-per-user limit
 * is about, and which NERDGRAPH_CONCURRENCY_PER_KEY must keep within bounds across replicas.
 * The same idea as test/support/upstream-meter.ts, in a process of its own so the relay never
 * waits on the load generator's event loop, with its figures on GET /__meter.
 *
 * A call counts as in flight from the moment its body has arrived until its answer has been
 * relayed (or failed): strictly inside the gateway's own hold of a budget slot, so a peak above
 * the budget is a real overrun. Keys are held only as a hash, in this process's memory.
 */
export const MeterStats = z.object({
  calls: z.number().int().nonnegative(),
  byOperation: z.record(z.string(), z.number().int().nonnegative()),
  /** key hash -> peak calls in flight at once with that key, since the last reset. */
  peakInFlight: z.record(z.string(), z.number().int().nonnegative()),
  /** Calls the relay could not pass on (the gateway saw a 502 from it): the meter's failures, not the gateway's. */
  relayErrors: z.number().int().nonnegative(),
});
export type MeterStats = z.infer<typeof MeterStats>;

/** How the meter names a key in its figures (never the key itself). */
export const meterKeyHash = (apiKey: string): string => createHash('sha256').update(apiKey).digest('hex').slice(0, 16);


async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface LoadMeter {
  readonly server: Server;
  /** The relay's /graphql URL, for the gateways' NERDGRAPH_URL. */
  readonly url: string;
  stats(): MeterStats;
  reset(): void;
}

export async function startLoadMeter(targetGraphqlUrl: string, options: { delayMs?: number; port?: number } = {}): Promise<LoadMeter> {
  // Enough sockets that the relay itself never queues calls (which would hide concurrency).
  const agent = new Agent({ connections: 1_024, keepAliveTimeout: 30_000 });
  const byOperation = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  let relayErrors = 0;

  const stats = (): MeterStats => ({
    calls: [...byOperation.values()].reduce((a, b) => a + b, 0),
    byOperation: Object.fromEntries(byOperation),
    peakInFlight: Object.fromEntries(peak),
    relayErrors,
  });
  const reset = (): void => {
    byOperation.clear();
    peak.clear();
    relayErrors = 0;
  };

  const relay = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const apiKey = req.headers['api-key'];
    const who = meterKeyHash(typeof apiKey === 'string' ? apiKey : '');
    const operation = operationOf(body);
    byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
    const now = (inFlight.get(who) ?? 0) + 1;
    inFlight.set(who, now);
    if (now > (peak.get(who) ?? 0)) peak.set(who, now);
    try {
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const answer = await request(targetGraphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(typeof apiKey === 'string' ? { 'api-key': apiKey } : {}) },
        body,
        dispatcher: agent,
      });
      const text = await answer.body.text();
      const type = answer.headers['content-type'];
      res.writeHead(answer.statusCode, { 'content-type': typeof type === 'string' ? type : 'application/json' }).end(text);
    } catch {
      relayErrors++;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"errors":[{"message":"load meter: the sandbox did not answer"}]}');
    } finally {
      inFlight.set(who, (inFlight.get(who) ?? 1) - 1);
    }
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/__meter') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats()));
      return;
    }
    if (req.method === 'POST' && path === '/__meter/reset') {
      reset();
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'POST' || path !== '/graphql') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"message":"load meter: POST /graphql only"}]}');
      return;
    }
    relay(req, res).catch(() => req.socket.destroy());
  });
  // The gateways keep their sockets to "NerdGraph" open; so does the meter.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/graphql`, stats, reset };
}

/** The load script's side: the meter's figures, checked at the edge. */
export async function readMeter(meterGraphqlUrl: string): Promise<MeterStats> {
  const answer = await fetch(new URL('/__meter', meterGraphqlUrl));
  return MeterStats.parse(await answer.json());
}

export async function resetMeter(meterGraphqlUrl: string): Promise<void> {
  const answer = await fetch(new URL('/__meter/reset', meterGraphqlUrl), { method: 'POST' });
  if (answer.status !== 204) throw new Error(`load meter reset answered ${answer.status}`);
}
