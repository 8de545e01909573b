import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { announce } from './announce.ts';

/**
 * Target: a canned NerdGraph that does no work. While recording it forwards each operation it
 * has not seen yet to CANNED_RECORD_FROM (the sandbox's /graphql) and keeps the answer; after
 * the parent's `freeze` it only replays those bytes verbatim, matched by operation name, and
 * answers 500 for anything else (so a gap shows up as the gateway's non-2xx).
 */
interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  /** The request that recorded it (the gateway's own body). */
  request: string;
}

const recordFrom = process.env.CANNED_RECORD_FROM;
if (!recordFrom) throw new Error('bench canned: CANNED_RECORD_FROM must be set by the parent');
const answers = new Map<string, Answer>();
let recording = true;

// Operation definitions start a line; the `m` flag keeps comments such as "# $query is" out.
const OPERATION = /^\s*query\s+([A-Za-z_]\w*)/m;

function operationOf(body: Buffer): string | undefined {
  try {
    const query: unknown = (JSON.parse(body.toString('utf8')) as { query?: unknown }).query;
    return typeof query === 'string' ? OPERATION.exec(query)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

async function record(req: IncomingMessage, body: Buffer): Promise<Answer> {
  const apiKey = req.headers['api-key'];
  const upstream = await fetch(recordFrom as string, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(typeof apiKey === 'string' ? { 'api-key': apiKey } : {}) },
    body,
  });
  return {
    status: upstream.status,
    contentType: upstream.headers.get('content-type') ?? 'application/json',
    body: Buffer.from(await upstream.arrayBuffer()),
    request: body.toString('utf8'),
  };
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': answer.contentType, 'content-length': answer.body.length });
  res.end(answer.body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const operation = operationOf(body);
  const known = operation === undefined ? undefined : answers.get(operation);
  if (known) return send(res, known);
  if (operation !== undefined && recording) {
    const answer = await record(req, body);
    if (answer.status === 200) answers.set(operation, answer);
    return send(res, answer);
  }
  const message = `canned upstream: no recorded answer for operation ${operation ?? '(unparseable body)'}`;
  send(res, { status: 500, contentType: 'application/json', body: Buffer.from(JSON.stringify({ errors: [{ message }] })), request: '' });
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: Error) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`canned upstream: ${error.message}`);
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port, {
  freeze: () => {
    recording = false;
    return [...answers].map(([operation, answer]) => ({ operation, bytes: answer.body.length, requestBody: answer.request }));
  },
});
