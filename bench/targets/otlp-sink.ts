import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { announce } from './announce.ts';

/**
 * Target: a local OTLP/HTTP receiver for the tracing row (i): every POST /v1/traces is read
 * whole, its spans counted, and answered 200, as a collector that keeps up would answer. The
 * parent reads the counts at GET /stats, so the row shows the gateway really exported.
 */
let posts = 0;
let spans = 0;
let bytes = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') {
      const body = Buffer.concat(chunks).toString('utf8');
      posts++;
      bytes += body.length;
      spans += body.split('"spanId"').length - 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ posts, spans, bytes }));
      return;
    }
    res.writeHead(404).end();
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
