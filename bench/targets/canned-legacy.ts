import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { announce } from './announce.ts';

/**
 * Target: a canned legacy REST v2 API that does no work, for the passthrough and compare rows.
 * While recording it forwards each request it has not seen (by method, path and query) to
 * CANNED_LEGACY_FROM (the sandbox's legacy face) and keeps the answer; after the parent's
 * `freeze` it only replays those bytes and headers verbatim, and answers 500 to anything else.
 */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const recordFrom = process.env.CANNED_LEGACY_FROM;
if (!recordFrom) throw new Error('bench canned-legacy: CANNED_LEGACY_FROM must be set by the parent');
const answers = new Map<string, Answer>();
let recording = true;

// The headers a v2 answer carries that passthrough must keep.
const KEPT = /^(content-type|link|etag|x-ratelimit-.*|retry-after|cache-control|last-modified)$/;

async function record(req: IncomingMessage, body: Buffer): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const name of ['x-api-key', 'api-key', 'content-type', 'accept']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const upstream = await fetch(`${recordFrom}${req.url ?? '/'}`, {
    method: req.method,
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  const kept: Record<string, string> = {};
  upstream.headers.forEach((value, name) => {
    if (KEPT.test(name)) kept[name] = value;
  });
  return { status: upstream.status, headers: kept, body: Buffer.from(await upstream.arrayBuffer()) };
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { ...answer.headers, 'content-length': answer.body.length });
  res.end(answer.body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const key = `${req.method ?? 'GET'} ${req.url ?? '/'}`;
  const known = answers.get(key);
  if (known) return send(res, known);
  if (recording) {
    const answer = await record(req, body);
    if (answer.status < 500) answers.set(key, answer);
    return send(res, answer);
  }
  send(res, { status: 500, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ error: { title: `canned legacy: nothing recorded for ${key}` } })) });
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: Error) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`canned legacy: ${error.message}`);
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port, {
  freeze: () => {
    recording = false;
    return [...answers].map(([operation, answer]) => ({ operation, answers: 1, bytes: answer.body.length }));
  },
});
