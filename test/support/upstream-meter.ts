import { createServer, type IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { listenOnLoopback } from './http.ts';
import { operationOf } from './fault-proxy.ts';

/**
 * A relay in front of a sandbox's /graphql that measures what NerdGraph would see from every
 * replica together: calls by operation, and NerdGraph calls in flight per API key (now and
 * the peak), which the budgets must keep within their limit. `delayMs` holds each call that
 * long before relaying, so concurrency builds up as it does against a real, slower NerdGraph.
 * Keys are only held as a hash here, in the test's memory.
 */
export interface UpstreamMeter {
  /** The relay's /graphql URL, for the gateways' NERDGRAPH_URL. */
  readonly url: string;
  calls(operation?: string): number;
  /** Highest number of calls in flight at once with one key. */
  peakInFlight(apiKey: string): number;
  resetCounts(): void;
  close(): Promise<void>;
}

const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex');

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startUpstreamMeter(target: string, options: { delayMs?: number } = {}): Promise<UpstreamMeter> {
  const byOperation = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const apiKey = String(req.headers['api-key'] ?? '');
      const who = keyHash(apiKey);
      const operation = operationOf(body);
      byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
      const now = (inFlight.get(who) ?? 0) + 1;
      inFlight.set(who, now);
      peak.set(who, Math.max(peak.get(who) ?? 0, now));
      try {
        if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': apiKey }, body });
        const text = await upstream.text();
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(text);
      } finally {
        inFlight.set(who, (inFlight.get(who) ?? 1) - 1);
      }
    })().catch(() => req.socket.destroy());
  });
  const relay = await listenOnLoopback(server);
  return {
    url: `${relay.origin}/graphql`,
    calls: (operation) => (operation === undefined ? [...byOperation.values()].reduce((a, b) => a + b, 0) : (byOperation.get(operation) ?? 0)),
    peakInFlight: (apiKey) => peak.get(keyHash(apiKey)) ?? 0,
    resetCounts: () => {
      byOperation.clear();
      peak.clear();
    },
    close: relay.close,
  };
}
