import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, createTestGateway, startSandbox } from '../support/harness.ts';
import { serveOnLoopback } from '../support/http.ts';

/**
 * What a hostile or broken client gets for bytes that never become a request the app sees:
 * raw bytes over loopback to the server src/index.ts builds (serveV2, via serveOnLoopback).
 * Every answer must be a v2 error body, never an empty 400 or a dropped connection.
 */
interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

function rawExchange(url: string, bytes: string | Buffer): Promise<RawAnswer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    // The server closes the connection after each of these answers: reading to the end proves it.
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split === -1 ? '' : text.slice(split + 4) });
    });
  });
}

function titleOf(answer: RawAnswer): string {
  expect(answer.head).toMatch(/\r\ncontent-type: application\/json/i);
  const parsed = JSON.parse(answer.body) as { error?: { title?: unknown } };
  expect(typeof parsed.error?.title).toBe('string');
  return parsed.error?.title as string;
}

describe('answers from below the app are v2-shaped', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 5 });
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(async () => {
    await served.close();
    await sandbox.close();
  });

  it('answers a bad request line with a v2 error body', async () => {
    const answer = await rawExchange(served.url, 'GARBAGE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(titleOf(answer)).toBe('Malformed HTTP request');
  });

  const malformed: Record<string, string | Buffer> = {
    'an HTTP version that does not exist': 'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
    'bare LF line ends': 'GET / HTTP/1.1\nHost: x\n\n',
    'a control byte in a header name': Buffer.from('GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-A\x01: b\r\n\r\n', 'latin1'),
    'a NUL in a header value': Buffer.from('GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-A: b\x00c\r\n\r\n', 'latin1'),
    'a space before a header colon': 'GET /v2/applications.json HTTP/1.1\r\nHost : x\r\n\r\n',
    'Transfer-Encoding and Content-Length together': 'POST /v2/applications.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
    // Node refuses it at the end of the headers (RFC 9112 6.3: the length cannot be known).
    'a Transfer-Encoding that does not end in chunked': 'GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n',
    'two different Content-Lengths': 'POST /v2/applications.json HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
    'a target that is not a path': `GET v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`,
    'a backslash in the path': `GET /v2\\applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`,
    'a Host that is not a host': `GET /v2/applications.json HTTP/1.1\r\nHost: [x\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`,
    'an asterisk target': 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n',
    'an absolute target that is not a URL': 'GET http://[x/ HTTP/1.1\r\nHost: x\r\n\r\n',
  };
  for (const [name, bytes] of Object.entries(malformed)) {
    it(`answers ${name} with a v2 400`, async () => {
      const answer = await rawExchange(served.url, bytes);
      expect(answer.status).toBe(400);
      expect(titleOf(answer)).toMatch(/^Malformed HTTP request/);
    });
  }

  it('answers headers over the limit with a v2 431', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(titleOf(answer)).toBe('Request headers too large');
  });

  it('answers CONNECT with a v2 405 instead of dropping the connection', async () => {
    const answer = await rawExchange(served.url, 'CONNECT api.newrelic.com:443 HTTP/1.1\r\nHost: api.newrelic.com:443\r\n\r\n');
    expect(answer.status).toBe(405);
    expect(answer.head).toMatch(/\r\nallow: GET, HEAD, POST, PUT, DELETE/i);
    expect(titleOf(answer)).toBe('Method CONNECT is not allowed');
  });

  it('answers an HTTP/1.1 request without Host with a v2 400 instead of Node\'s empty one', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.json HTTP/1.1\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(titleOf(answer)).toBe('Malformed HTTP request: HTTP/1.1 requires a Host header');
  });

  it('answers a missing Host in XML on a .xml path', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.xml HTTP/1.1\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.head).toMatch(/\r\ncontent-type: application\/xml/i);
    expect(answer.body).toContain('<title>Malformed HTTP request: HTTP/1.1 requires a Host header</title>');
  });

  it('still serves HTTP/1.0 without Host (Host is optional there)', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.json HTTP/1.0\r\nX-Api-Key: ${DEMO_KEY}\r\n\r\n`);
    expect(answer.head).toMatch(/^HTTP\/1\.1 200/);
  });

  it('answers an Expect other than 100-continue with a v2 417 instead of Node\'s empty one', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${DEMO_KEY}\r\nConnection: close\r\nExpect: 999-nope\r\n\r\n`);
    expect(answer.status).toBe(417);
    expect(titleOf(answer)).toBe('Expectation Failed: the only Expect header supported is 100-continue');
  });

  it('still answers Expect: 100-continue with 100 Continue, then serves the request with its body', async () => {
    // curl sends this for bodies over 1 KB and waits (up to a second) for the 100 before the body.
    const body = 'filter[name]=nothing-is-called-this';
    const { port } = new URL(served.url);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      let bodySent = false;
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(
          `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${DEMO_KEY}\r\nConnection: close\r\n` +
            `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (!bodySent && text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
          bodySent = true;
          socket.write(body);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    // The body was read as the request's form: the filter matched no application.
    expect(answer).toContain('{"applications":[],');
  });

  it('still serves a well-formed request on the same server', async () => {
    const answer = await rawExchange(served.url, `GET /v2/applications.json HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${DEMO_KEY}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(200);
  });
});
