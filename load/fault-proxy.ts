import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * A NerdGraph stand-in's bad days, between the gateway and NerdGraph: each request is, at
 * random, answered 500, cut (the connection reset before any answer), delayed, or passed on.
 * Counts what it did, so the load report can say how many faults the gateway absorbed.
 */
export interface FaultRates {
  /** Share of requests answered with a GraphQL-shaped 500. */
  error500: number;
  /** Share of requests whose connection is destroyed without an answer. */
  reset: number;
  /** Share of requests passed on after an added delay of delayMs[0]..delayMs[1]. */
  delay: number;
  delayMs: readonly [number, number];
}

export const DEFAULT_FAULTS: FaultRates = { error500: 0.02, reset: 0.01, delay: 0.1, delayMs: [100, 1_000] };

export interface FaultCounts {
  passed: number;
  error500: number;
  reset: number;
  delayed: number;
}

export interface FaultProxy {
  url: string;
  counts: FaultCounts;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

export async function startFaultProxy(upstreamGraphqlUrl: string, rates: FaultRates = DEFAULT_FAULTS, random: () => number = Math.random): Promise<FaultProxy> {
  const upstream = new URL(upstreamGraphqlUrl);
  const pool = new Pool(upstream.origin, { connections: 256 });
  const counts: FaultCounts = { passed: 0, error500: 0, reset: 0, delayed: 0 };

  const forward = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.has(name)) headers[name] = value;
    try {
      const answer = await pool.request({ path: upstream.pathname + upstream.search, method: (req.method ?? 'POST') as 'POST', headers, body });
      const text = Buffer.from(await answer.body.arrayBuffer());
      const contentType = answer.headers['content-type'];
      res.writeHead(answer.statusCode, { 'content-type': typeof contentType === 'string' ? contentType : 'application/json', 'content-length': text.length });
      res.end(text);
    } catch {
      res.destroy();
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const roll = random();
      if (roll < rates.error500) {
        counts.error500++;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ message: 'Internal Server Error (injected by the load fault proxy)' }] }));
        return;
      }
      if (roll < rates.error500 + rates.reset) {
        counts.reset++;
        req.socket.resetAndDestroy();
        return;
      }
      const body = Buffer.concat(chunks);
      if (roll < rates.error500 + rates.reset + rates.delay) {
        counts.delayed++;
        const [low, high] = rates.delayMs;
        setTimeout(() => void forward(req, res, body), low + random() * (high - low));
        return;
      }
      counts.passed++;
      void forward(req, res, body);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    counts,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}
