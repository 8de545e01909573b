import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY, createTestGateway, startSandbox } from '../support/harness.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';

/**
 * GET bodies as real clients frame them, over real HTTP: chunked (Go's client for a body of
 * unknown length, or any client that sets Transfer-Encoding), sized, and unframed (Node's
 * http client writes a GET body with neither header, which HTTP cannot delimit).
 */
interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function sendGet(url: string, headers: Record<string, string>, chunks: string[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    // Each chunk in its own write, a tick apart, so the server sees several body chunks.
    const writeNext = (index: number): void => {
      if (index === chunks.length) {
        req.end();
        return;
      }
      req.write(chunks[index]);
      setTimeout(() => writeNext(index + 1), 5);
    };
    writeNext(0);
  });
}

describe('GET with a form body', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let served: Awaited<ReturnType<typeof serveOnLoopback>>;
  const form = { 'x-api-key': DEMO_KEY, 'content-type': 'application/x-www-form-urlencoded' };

  beforeAll(async () => {
    sandbox = await startSandbox({ apmApps: 60 });
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(async () => {
    await served.close();
    await sandbox.close();
  });

  for (const format of ['json', 'xml'] as const) {
    it(`reads a chunked body like a sized one (.${format})`, async () => {
      const url = `${served.url}/v2/applications.${format}`;
      const sized = await httpSend(url, { headers: form, body: 'filter[name]=Checkout' });
      const chunked = await sendGet(url, { ...form, 'transfer-encoding': 'chunked' }, ['filter[na', 'me]=Check', 'out']);
      const unfiltered = await httpSend(url, { headers: { 'x-api-key': DEMO_KEY } });
      expect(sized.status).toBe(200);
      expect(chunked.status).toBe(200);
      const sizedText = await sized.text();
      expect(chunked.body).toBe(sizedText);
      // The filter really applied: the answer differs from the unfiltered list.
      expect(sizedText).not.toBe(await unfiltered.text());
      expect(sizedText).toContain('Checkout');
    });
  }

  it('answers an unframed GET body with a v2 error that says why, never an empty 400', async () => {
    const answer = await sendGet(`${served.url}/v2/applications.json`, form, ['filter[name]=Checkout']);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const title = (JSON.parse(answer.body) as { error: { title: string } }).error.title;
    expect(title).toMatch(/Content-Length or Transfer-Encoding/);
  });
});
