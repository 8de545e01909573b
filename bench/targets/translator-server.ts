import { createServer, type Server } from 'node:http';
import { Agent, request } from 'undici';
import { mappingOf, type Answered } from './translator-maps.ts';

/**
 * Target (t)'s server: the floor of a translation. For each request it sends, one after the
 * other as the gateway does, the NerdGraph requests the gateway sent for that very URL (their
 * recorded bodies: bench/capture.ts), with the caller's key, reads each whole answer and
 * `JSON.parse`s it, maps the answers to the v2 body with the scenario's plain function
 * (bench/targets/translator-maps.ts), `JSON.stringify`s it and writes it. No validation,
 * logging, metrics or caching. A URL with no recorded calls or no mapping is a 404; an upstream
 * answer other than 200, or a mapping that throws, a 502.
 */
export interface RecordedCall {
  operation: string;
  body: string;
}

export function createTranslator(upstream: string, calls: ReadonlyMap<string, readonly RecordedCall[]>): Server {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://translator');
    const recorded = calls.get(req.url ?? '');
    const mapping = mappingOf(url.pathname);
    const key = req.headers['x-api-key'];
    if (recorded === undefined || mapping === undefined || typeof key !== 'string') {
      res.writeHead(404).end();
      return;
    }
    (async () => {
      const answers: Answered[] = [];
      for (const call of recorded) {
        const answer = await request(upstream, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: call.body, dispatcher: agent });
        const text = await answer.body.text();
        if (answer.statusCode !== 200) throw new Error(`${call.operation} answered ${answer.statusCode}`);
        answers.push({ operation: call.operation, answer: JSON.parse(text) });
      }
      const body = JSON.stringify(mapping(answers, url, Date.now()));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    })().catch((error: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bench translator: ${error.message}`);
    });
  });
}
