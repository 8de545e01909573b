import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { z } from 'zod';
import { announce } from './announce.ts';
import type { SeenRequest } from '../protocol.ts';

/**
 * Target: a canned NerdGraph that does no work. While recording it forwards each request whose
 * replay key it has not seen to CANNED_RECORD_FROM (the sandbox's /graphql) and keeps the
 * answer; after the parent's `freeze` it only replays those bytes verbatim and answers 500 to
 * anything else (so a gap shows up as the gateway's non-2xx).
 *
 * The replay key is the operation and its variables, so another app, host, name set or window
 * gets its own answer. Left out of the key: the variables that follow the request's remaining
 * deadline (VOLATILE), and epoch-millisecond numbers inside NRQL text, which follow the clock
 * (a "current 10 minutes" window moves every minute; the bench's metric windows are fixed, so
 * nothing the bench varies on purpose is folded).
 *
 * A read the gateway sends with `withEndUserApdex: true` (an application's end-user apdex NRQL,
 * asked once per app and caller a minute) is recorded twice: as sent, and with the flag false,
 * the read the gateway sends for the same app while it keeps the score; otherwise a measured
 * gateway, which asks again within that minute, would find no answer for it.
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
/** Every request seen while recording, by API key (a capture lane's), until the parent drains them (bench/capture.ts). */
let seen = new Map<string, SeenRequest[]>();

// Operation definitions start a line; the `m` flag keeps comments such as "# $query is" out.
const OPERATION = /^\s*query\s+([A-Za-z_]\w*)/m;
/** Variables that depend on the time left to the request's deadline (the GraphQL documents). */
const VOLATILE = new Set(['timeout', 'knownTimeout', 'withKnown']);
const EPOCH_MS = /\b1\d{12}\b/g;
const GraphqlBody = z.object({ query: z.string(), variables: z.record(z.string(), z.unknown()).optional() });

function replayKey(body: Buffer): { operation: string; key: string } | undefined {
  let parsed: z.infer<typeof GraphqlBody>;
  try {
    parsed = GraphqlBody.parse(JSON.parse(body.toString('utf8')));
  } catch {
    return undefined;
  }
  const operation = OPERATION.exec(parsed.query)?.[1];
  if (operation === undefined) return undefined;
  const kept = Object.entries(parsed.variables ?? {})
    .filter(([name]) => !VOLATILE.has(name))
    .sort(([x], [y]) => (x < y ? -1 : 1));
  return { operation, key: `${operation} ${JSON.stringify(kept).replace(EPOCH_MS, '#')}` };
}

/** The same request with `withEndUserApdex: false`, when it was sent with true. */
function withoutEndUserApdex(body: Buffer): Buffer | undefined {
  let parsed: z.infer<typeof GraphqlBody>;
  try {
    parsed = GraphqlBody.parse(JSON.parse(body.toString('utf8')));
  } catch {
    return undefined;
  }
  if (parsed.variables?.withEndUserApdex !== true) return undefined;
  return Buffer.from(JSON.stringify({ ...parsed, variables: { ...parsed.variables, withEndUserApdex: false } }));
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
  const named = replayKey(body);
  if (named && recording) {
    const apiKey = String(req.headers['api-key']);
    seen.set(apiKey, [...(seen.get(apiKey) ?? []), { ...named, requestBody: body.toString('utf8') }]);
  }
  const known = named === undefined ? undefined : answers.get(named.key);
  if (known) return send(res, known);
  if (named !== undefined && recording) {
    const answer = await record(req, body);
    if (answer.status === 200) answers.set(named.key, answer);
    const variant = withoutEndUserApdex(body);
    const variantKey = variant === undefined ? undefined : replayKey(variant);
    if (variant !== undefined && variantKey !== undefined && !answers.has(variantKey.key)) {
      const other = await record(req, variant);
      if (other.status === 200) answers.set(variantKey.key, other);
    }
    return send(res, answer);
  }
  const message = `canned upstream: no recorded answer for ${named?.key.slice(0, 300) ?? '(unparseable body)'}`;
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
  drain: (apiKey) => {
    const drained = seen.get(apiKey ?? '') ?? [];
    seen.delete(apiKey ?? '');
    return drained;
  },
  freeze: () => {
    recording = false;
    seen = new Map();
    // One row per operation, not per key: thousands of keys would flood the IPC.
    const byOperation = new Map<string, { operation: string; answers: number; bytes: number }>();
    for (const [key, answer] of answers) {
      const operation = key.split(' ', 1)[0] as string;
      const row = byOperation.get(operation) ?? { operation, answers: 0, bytes: 0 };
      row.answers++;
      row.bytes += answer.body.length;
      byOperation.set(operation, row);
    }
    return [...byOperation.values()];
  },
});
