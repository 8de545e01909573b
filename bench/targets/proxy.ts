import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { announce } from './announce.ts';

/**
 * Target (d): the floor. A minimal pass-through proxy on node:http and undici, with no
 * reshaping: for each incoming request it sends the one NerdGraph request the scenario's main
 * operation needs (the gateway's own recorded body, so the same bytes go up) to PROXY_UPSTREAM
 * with the caller's key, and streams the answer back as it comes. Whatever the gateway spends
 * above this is the cost of being a gateway. PROXY_TABLE names a JSON file (written by
 * bench/capture.ts) mapping each request URL (path and query string, as sent) to the body the
 * gateway sent upstream for that very request: a distinct request gets its own body.
 */
const upstream = process.env.PROXY_UPSTREAM;
if (!upstream) throw new Error('bench proxy: PROXY_UPSTREAM must be set by the parent');
const table = process.env.PROXY_TABLE;
if (!table) throw new Error('bench proxy: PROXY_TABLE must be set by the parent');
// URL -> request body; a file, as thousands of bodies do not fit in the environment.
const bodies = new Map(Object.entries(JSON.parse(readFileSync(table, 'utf8')) as Record<string, string>));
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });

const server = createServer((req, res) => {
  const body = bodies.get(req.url ?? '');
  const key = req.headers['x-api-key'];
  if (body === undefined || typeof key !== 'string') {
    res.writeHead(404).end();
    return;
  }
  request(upstream, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': key },
    body,
    dispatcher: agent,
  })
    .then(async (answer) => {
      const length = answer.headers['content-length'];
      res.writeHead(answer.statusCode, {
        'content-type': 'application/json; charset=utf-8',
        ...(typeof length === 'string' ? { 'content-length': length } : {}),
      });
      // The upstream socket may close after the client left and pipeline let go of the body:
      // an 'error' with no listener then would end the proxy (seen on Node 26).
      answer.body.on('error', () => undefined);
      await pipeline(answer.body, res);
    })
    .catch((error: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bench proxy: ${error.message}`);
    });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
