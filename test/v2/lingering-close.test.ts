import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveV2 } from '../../src/v2/client-error.ts';
import { LINGER_BOUNDS, type LingerBounds } from '../../src/v2/lingering-close.ts';
import { DEMO_KEY, createTestGateway, startSandbox } from '../support/harness.ts';

/**
 * Clients that write a whole request body before they read (Python's http.client, most scripts)
 * must read the answer the gateway gives before reading that body, e.g. the 413 for a body over
 * 1 MiB, and not a connection reset. The client here does what they do: it writes everything,
 * reads nothing until its last byte is written, then reads the answer.
 */

/** Well over what the kernel's socket buffers hold on loopback (a reset shows), under the discard bound. */
const OVERSIZED = 10 * 1024 * 1024;

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Writes head and body in full, then reads one answer (framed by its Content-Length). */
function writeAllThenRead(port: number, head: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    // Nothing is read while writing: an answer waits in the kernel, as it does for those clients.
    socket.pause();
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const split = received.indexOf('\r\n\r\n');
      if (split === -1) return;
      const headText = received.subarray(0, split).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headText)?.[1] ?? NaN);
      if (received.length < split + 4 + length) return;
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1] ?? 0);
      resolve({ status, head: headText, body: received.subarray(split + 4, split + 4 + length).toString('utf8') });
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('connection closed before a whole answer was read')));
    socket.write(head);
    socket.write(body, () => socket.resume());
  });
}

/** Writes every part on one connection, reading as it goes; resolves with all it read once the server closed it. */
function exchangeUntilClosed(port: number, parts: ReadonlyArray<string | Buffer>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    for (const part of parts) socket.write(part);
  });
}

function chunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    const piece = body.subarray(offset, offset + 64 * 1024);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function titleOf(answer: Answer): string {
  expect(answer.head).toMatch(/\r\ncontent-type: application\/json/i);
  return (JSON.parse(answer.body) as { error: { title: string } }).error.title;
}

async function listen(server: Server): Promise<number> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as AddressInfo).port;
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

describe('a body the answer left unread is discarded before the connection closes', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  const servers: Server[] = [];

  /** The gateway served as src/index.ts serves it; `linger` only where a test narrows a bound. */
  async function serveGateway(linger?: LingerBounds): Promise<{ server: Server; port: number }> {
    const server = serveV2({ fetch: gateway.app.fetch, port: 0, hostname: '127.0.0.1', ...(linger ? { linger } : {}) });
    servers.push(server);
    return { server, port: await listen(server) };
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 2 });
    gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  });
  afterAll(async () => {
    await Promise.all(servers.map(stop));
    await sandbox.close();
  });

  const body = Buffer.alloc(OVERSIZED, 'a');
  const key = `X-Api-Key: ${DEMO_KEY}\r\n`;
  const cases: Record<string, { head: string; body: Buffer; status: number; title: string }> = {
    'a POST body over the limit, refused by its Content-Length before it is read': {
      head: `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nContent-Length: ${OVERSIZED}\r\n\r\n`,
      body,
      status: 413,
      title: 'Request body larger than 1048576 bytes',
    },
    'a chunked POST body over the limit, refused once 1 MiB was read': {
      head: `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      body: chunked(body),
      status: 413,
      title: 'Request body larger than 1048576 bytes',
    },
    'a GET form body over the limit (answered with Connection: close)': {
      head: `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${OVERSIZED}\r\n\r\n`,
      body,
      status: 413,
      title: 'Request body larger than 1048576 bytes',
    },
    'headers over the limit (answered by the server for a parser error)': {
      head: `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}X-Big: ${'a'.repeat(20_000)}\r\nContent-Length: ${OVERSIZED}\r\n\r\n`,
      body,
      status: 431,
      title: 'Request headers too large',
    },
    'a request the server refuses before the app (no Host)': {
      head: `POST /v2/applications/1/deployments.json HTTP/1.1\r\n${key}Content-Type: application/json\r\nContent-Length: ${OVERSIZED}\r\n\r\n`,
      body,
      status: 400,
      title: 'Malformed HTTP request: HTTP/1.1 requires a Host header',
    },
  };
  for (const [name, sent] of Object.entries(cases)) {
    it(`a client that writes first reads the v2 answer to ${name}`, async () => {
      const { port } = await serveGateway();
      const answer = await writeAllThenRead(port, sent.head, sent.body);
      expect(answer.status).toBe(sent.status);
      expect(titleOf(answer)).toBe(sent.title);
    });
  }

  it('keeps a kept-alive connection usable once the refused body is discarded', async () => {
    const { port } = await serveGateway();
    const text = await exchangeUntilClosed(port, [
      `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nContent-Length: ${OVERSIZED}\r\n\r\n`,
      body,
      `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\n${key}Connection: close\r\n\r\n`,
    ]);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    // The next request on the same connection is answered (the 413 was not the end of it).
    expect(text).toMatch(/"title":"Request body larger than 1048576 bytes"\}\}HTTP\/1\.1 200 [^]*"applications":\[/);
  });

  it('never serves a request pipelined behind a body it discards on a connection its answer closes', async () => {
    // The gateway's handler, counting what reaches it.
    const served: string[] = [];
    const server = serveV2({
      fetch: (request: Request, env: unknown) => {
        served.push(`${request.method} ${new URL(request.url).pathname}`);
        return gateway.app.fetch(request, env as Parameters<typeof gateway.app.fetch>[1]);
      },
      port: 0,
      hostname: '127.0.0.1',
    });
    servers.push(server);
    const port = await listen(server);
    // No Host: a 400 that closes the connection, given before the body; then a write behind it.
    const refused = 2 * 1024 * 1024;
    const write = '{"deployment":{"revision":"pipelined"}}';
    const text = await exchangeUntilClosed(port, [
      `POST /v2/applications/1/deployments.json HTTP/1.1\r\n${key}Content-Type: application/json\r\nContent-Length: ${refused}\r\n\r\n`,
      body.subarray(0, refused),
      `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nContent-Length: ${write.length}\r\n\r\n${write}`,
    ]);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    expect(served).toEqual([]);
  });

  /** Resolves with the bytes the server read on its next connection, once it has closed it. */
  function serverSideClose(server: Server): Promise<number> {
    return new Promise((resolve) => server.once('connection', (socket: Socket) => socket.on('close', () => resolve(socket.bytesRead))));
  }

  // Answers given before the body: by the app (413, kept alive), by the server ahead of the app
  // (no Host: Connection: close), and for a parser error (431: where the body ends is unknown).
  const refusedHeads: Record<'a 413' | 'a 400 for a missing Host' | 'a 431', (length: number) => string> = {
    'a 413': (length) => `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
    'a 400 for a missing Host': (length) => `POST /v2/applications/1/deployments.json HTTP/1.1\r\n${key}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
    'a 431': (length) => `POST /v2/applications/1/deployments.json HTTP/1.1\r\nHost: x\r\n${key}X-Big: ${'a'.repeat(20_000)}\r\nContent-Length: ${length}\r\n\r\n`,
  };

  for (const [answer, headFor] of Object.entries(refusedHeads)) {
    it(`after ${answer}, closes the connection once the discarded body passes its bound, however much is still coming`, async () => {
      // No time bound within the test: only the size bound can end this connection.
      const bounds = { maxBytes: LINGER_BOUNDS.maxBytes, maxMs: 600_000 };
      const { server, port } = await serveGateway(bounds);
      const serverRead = serverSideClose(server);
      // Far more than the bound and the kernel's buffers: an unbounded discard would take it all.
      const ceiling = 256 * 1024 * 1024;
      const written = await new Promise<number>((resolve) => {
        // Half-open: the client keeps writing after the server's FIN, as a hostile one would.
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        let total = 0;
        const chunk = Buffer.alloc(1024 * 1024, 'a');
        const pump = (): void => {
          while (!socket.destroyed) {
            if (total >= ceiling) {
              resolve(total);
              socket.destroy();
              return;
            }
            total += chunk.length;
            if (!socket.write(chunk)) return void socket.once('drain', pump);
          }
        };
        // The server ends it with a reset (EPIPE or ECONNRESET here); what counts is that it ends.
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(total));
        socket.resume();
        socket.write(headFor(1024 * 1024 * 1024), pump);
      });
      // The server read past the bound (it did discard), then stopped reading and closed.
      const read = await serverRead;
      expect(read).toBeGreaterThan(bounds.maxBytes);
      expect(read).toBeLessThan(2 * bounds.maxBytes);
      expect(written).toBeLessThan(ceiling);
    });
  }

  // The 413 is kept alive, and Node's keep-alive timeout would end it too: the two closed ones.
  for (const answer of ['a 400 for a missing Host', 'a 431'] as const) {
    it(`after ${answer}, closes the connection when the rest of the body does not come within the time bound`, async () => {
      const { server, port } = await serveGateway({ maxBytes: LINGER_BOUNDS.maxBytes, maxMs: 100 });
      const closed = serverSideClose(server);
      // Half-open, never ending nor sending the rest: only the server's time bound can end this.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.write(refusedHeads[answer](OVERSIZED));
      socket.write(Buffer.alloc(64 * 1024, 'a'));
      await closed;
      socket.destroy();
      expect(received).toMatch(/^HTTP\/1\.1 4\d\d [^]*"error":\{"title":/);
    });
  }
});
