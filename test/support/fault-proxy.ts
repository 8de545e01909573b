import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './http.ts';

/**
 * A loopback relay between a gateway and a sandbox's /graphql that breaks exchanges the way a
 * network can, for the write fault tests. A per-request hook reads the request (its body and
 * operation name) and decides what happens to it:
 *
 * - `refuse-500`: a 500 before the sandbox saw the request (nothing applied);
 * - `reset-before`: the connection reset before relaying (nothing applied);
 * - `silence-before`: never answered, never relayed (nothing applied; the gateway's timeout fires);
 * - `applied-then-500`, `applied-then-reset`, `applied-then-silence`: relayed (the sandbox applied
 *   it), then the answer lost as a 500, a reset, or silence;
 * - `{ answer }`: answered with that body (status 200 unless said) without relaying, e.g. a
 *   payload refusal or a frozen read;
 * - `{ body, rewrite }`: relayed (with `body` instead of the request's, if given), the sandbox's
 *   answer text passed through `rewrite` (to change or keep it) before it goes back.
 *
 * `none` or `undefined` relays unchanged. Silenced exchanges are ended when the proxy closes.
 */
export type Fault = 'none' | 'refuse-500' | 'reset-before' | 'silence-before' | 'applied-then-500' | 'applied-then-reset' | 'applied-then-silence';

export interface Exchange {
  /** The request body as received (JSON text). */
  readonly body: string;
  /** The GraphQL operation name (the body's operationName, else the document's first operation). */
  readonly operation: string;
}

export type Decision =
  | Fault
  | undefined
  | { readonly answer: string; readonly status?: number }
  | { readonly body?: string; readonly rewrite?: (text: string) => string };

export type FaultHook = (exchange: Exchange) => Decision;

export interface FaultProxy {
  /** The proxy's /graphql URL, to give the gateway as its NerdGraph URL. */
  readonly url: string;
  close(): Promise<void>;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const REFUSED = '{"errors":[{"message":"proxy refused"}]}';
const LOST = '{"errors":[{"message":"lost after apply"}]}';

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The operation a NerdGraph request body names. */
export function operationOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { operationName?: unknown; query?: unknown };
    if (typeof parsed.operationName === 'string' && parsed.operationName !== '') return parsed.operationName;
    if (typeof parsed.query === 'string') return /\b(?:mutation|query)\s+(\w+)/.exec(parsed.query)?.[1] ?? '';
  } catch {
    // Not JSON: no operation.
  }
  return '';
}

/** Starts a relay to `target` (a sandbox's graphqlUrl) on 127.0.0.1, breaking what `hook` says. */
export async function startFaultProxy(target: string, hook: FaultHook): Promise<FaultProxy> {
  const silenced: ServerResponse[] = [];

  async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const received = await readBody(req);
    const decision = hook({ body: received, operation: operationOf(received) });
    const fault: Fault = typeof decision === 'string' ? decision : 'none';
    if (typeof decision === 'object' && 'answer' in decision) return void res.writeHead(decision.status ?? 200, JSON_TYPE).end(decision.answer);
    if (fault === 'refuse-500') return void res.writeHead(500, JSON_TYPE).end(REFUSED);
    if (fault === 'reset-before') return void req.socket.destroy();
    if (fault === 'silence-before') return void silenced.push(res);
    const change = typeof decision === 'object' && !('answer' in decision) ? decision : {};
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': String(req.headers['api-key'] ?? '') },
      body: change.body ?? received,
    });
    const text = await upstream.text();
    if (fault === 'applied-then-500') return void res.writeHead(500, JSON_TYPE).end(LOST);
    if (fault === 'applied-then-reset') return void req.socket.destroy();
    if (fault === 'applied-then-silence') return void silenced.push(res);
    res.writeHead(upstream.status, JSON_TYPE).end(change.rewrite ? change.rewrite(text) : text);
  }

  const proxy = await listenOnLoopback(createServer((req, res) => void relay(req, res).catch(() => req.socket.destroy())));
  return {
    url: `${proxy.origin}/graphql`,
    close: async () => {
      for (const res of silenced.splice(0)) res.destroy();
      await proxy.close();
    },
  };
}
