import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { TestGateway } from './harness.ts';
import { listenOnLoopback } from './http.ts';

/**
 * For tests of a request's life upstream (deadlines, clients that leave, writes cut short):
 * waiting for the gateway to settle, its /metrics series, a slow NerdGraph, and a request the
 * test can abandon.
 */

/** Polls until `check` holds (the gateway settles asynchronously after a client leaves). */
export async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
}

/** Sum of a /metrics series whose labels include every `labels` pair (label values may hold braces: `{id}`). */
export async function seriesSum(gateway: TestGateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await gateway.app.request('/metrics')).text();
  let sum = 0;
  for (const [, labelText, value] of text.matchAll(new RegExp(`^${name}\\{(.*)\\} (\\S+)$`, 'gm'))) {
    if (Object.entries(labels).every(([key, want]) => (labelText ?? '').includes(`${key}="${want}"`))) sum += Number(value);
  }
  return sum;
}

/** A relay to the NerdGraph at `graphqlUrl` whose every answer comes `latencyMs` late (the upstream acts at once). */
export async function startLatencyProxy(graphqlUrl: string, latencyMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const proxy = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      void fetch(graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': String(req.headers['api-key']) }, body })
        .then(async (answer) => {
          const text = await answer.text();
          setTimeout(() => {
            if (!res.destroyed && !res.socket?.destroyed) res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
          }, latencyMs);
        })
        .catch(() => req.socket.destroy());
    });
  });
  const listening = await listenOnLoopback(proxy);
  return { url: `${listening.origin}/graphql`, close: listening.close };
}

/**
 * A request over real HTTP that the test can abandon (`req.destroy()`, as a client that gives up
 * does): a GET, or a write with a JSON body.
 */
export function openRequest(
  url: string,
  headers: Record<string, string>,
  write?: { method: string; body: unknown },
): { req: ClientRequest; answer: Promise<{ status: number; body: string }> } {
  const body = write === undefined ? undefined : JSON.stringify(write.body);
  const req = httpRequest(url, {
    agent: false,
    method: write?.method ?? 'GET',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined); // abandoned on purpose
  req.end(body);
  return { req, answer };
}
