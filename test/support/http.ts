import { request as httpRequest, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { serveV2, type FetchHandler } from '../../src/v2/client-error.ts';

/**
 * Real HTTP for tests: serving an app on 127.0.0.1:0, and a client that can send a body
 * with a GET (as curl -X GET -d does, and as v2 clients do), which fetch cannot.
 */
export async function serveOnLoopback(fetchHandler: FetchHandler) {
  // The same server src/index.ts runs, with its socket-level v2 answers.
  const server = serveV2({ fetch: fetchHandler, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { origin, close } = loopbackHandle(server);
  return { url: origin, close };
}

/** A plain node:http server (a fake upstream, a relay) listening on 127.0.0.1:0. */
export async function listenOnLoopback(server: Server): Promise<{ origin: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return loopbackHandle(server);
}

/** The origin of a server listening on loopback, and a close that does not wait for keep-alive clients. */
function loopbackHandle(server: Server): { origin: string; close: () => Promise<void> } {
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function httpSend(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = httpRequest(url, { method: options.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of [value ?? []].flat()) responseHeaders.append(name, v);
        }
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: responseHeaders }));
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A loopback origin nothing listens on (a port just freed): an unreachable upstream, such as a legacy API that is gone. */
export async function deadOrigin(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
