import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { announce } from './announce.ts';

/**
 * Target (d'): passthrough's floor. A minimal pass-through proxy on node:http and undici in
 * front of PROXY_UPSTREAM (the canned legacy REST API): each incoming request goes up as it came
 * (method, path and query, the caller's key), and the answer streams back with its status,
 * content type and Link header. Whatever the gateway in passthrough (f) spends above this is the
 * cost of being a gateway in that mode.
 */
const upstream = process.env.PROXY_UPSTREAM;
if (!upstream) throw new Error('bench legacy proxy: PROXY_UPSTREAM must be set by the parent');
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });

const server = createServer((req, res) => {
  const key = req.headers['x-api-key'];
  request(`${upstream}${req.url ?? '/'}`, {
    method: 'GET',
    headers: typeof key === 'string' ? { 'x-api-key': key } : {},
    dispatcher: agent,
  })
    .then(async (answer) => {
      const kept: Record<string, string> = {};
      for (const name of ['content-type', 'content-length', 'link']) {
        const value = answer.headers[name];
        if (typeof value === 'string') kept[name] = value;
      }
      res.writeHead(answer.statusCode, kept);
      // The upstream socket may close after the client left and pipeline let go of the body:
      // an 'error' with no listener then would end the proxy (seen on Node 26).
      answer.body.on('error', () => undefined);
      await pipeline(answer.body, res);
    })
    .catch((error: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bench legacy proxy: ${error.message}`);
    });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
