import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import type { OperationDocuments } from '../../src/upstream/documents.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import { json, startFakeUpstream, type FakeHandler } from '../support/fake-upstream.ts';

/** The NerdGraph client's retry, redaction and classification rules, against a scripted upstream. */
const documents: OperationDocuments = new Map([
  ['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }],
  ['WriteSomething', { name: 'WriteSomething', kind: 'mutation', text: 'mutation WriteSomething { agentApplicationDelete(guid: "x") { success } }' }],
]);

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function clientOn(handler: FakeHandler, retries = 2, timeoutMs = 3000) {
  const upstream = await startFakeUpstream(handler);
  closers.push(upstream.close);
  return { upstream, client: createNerdGraphClient({ url: upstream.url, documents, metrics: createMetrics(), timeoutMs, retries }) };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

const KEY = 'NRAK-CLIENTTEST00112233445566';

describe('NerdGraph client', () => {
  it('never resends a mutation, whatever the failure', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 503, { errors: [{ message: 'unavailable' }] }));
    expect((await failure(client.call({ operation: 'WriteSomething', variables: {}, apiKey: KEY }))).errorClass).toBe('unavailable');
    expect(upstream.received).toHaveLength(1);
  });

  it('retries a read on 5xx within its budget', async () => {
    let n = 0;
    const { client, upstream } = await clientOn((_req, res) => (++n < 3 ? json(res, 502, {}) : json(res, 200, { data: { actor: { user: { id: 1 } } } })));
    expect(await client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY })).toEqual({ actor: { user: { id: 1 } } });
    expect(upstream.received).toHaveLength(3);
  });

  it('does not retry a refused request (4xx) or an unknown GraphQL error', async () => {
    const refused = await clientOn((_req, res) => json(res, 400, { errors: [{ message: 'bad' }] }));
    expect((await failure(refused.client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY }))).errorClass).toBe('invalid_input');
    expect(refused.upstream.received).toHaveLength(1);
    const unknown = await clientOn((_req, res) => json(res, 200, { data: null, errors: [{ message: 'something odd' }] }));
    await failure(unknown.client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY }));
    expect(unknown.upstream.received).toHaveLength(1);
  });

  it('passes a Retry-After longer than its backoff cap on, instead of retrying early', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 429, { errors: [{ message: 'slow down' }] }, { 'retry-after': '7' }));
    const error = await failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY }));
    expect(error.errorClass).toBe('rate_limited');
    expect(error.retryAfterSeconds).toBe(7);
    expect(upstream.received).toHaveLength(1);
  });

  it('honours a short Retry-After', async () => {
    let n = 0;
    const { client, upstream } = await clientOn((_req, res) =>
      ++n === 1 ? json(res, 429, { errors: [{ message: 'slow down' }] }, { 'retry-after': '1' }) : json(res, 200, { data: { ok: true } }),
    );
    const started = Date.now();
    await client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(upstream.received).toHaveLength(2);
  });

  it('accepts data that comes with deprecation warnings only', async () => {
    const { client } = await clientOn((_req, res) => json(res, 200, { data: { ok: 1 }, errors: [{ message: 'This field is deprecated! Use x.' }] }));
    expect(await client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY })).toEqual({ ok: 1 });
  });

  it('redacts an echoed key before cutting long messages, so no part of it survives', async () => {
    for (const pad of [0, 280, 290, 295, 299]) {
      const { client } = await clientOn((req, res) => json(res, 200, { errors: [{ message: `${'x'.repeat(pad)}${String(req.headers['api-key'])} and NRAK-OTHERKEY99` }] }));
      const error = await failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY }));
      expect(error.detail).not.toMatch(/NRAK-|CLIENTTEST|OTHERKEY/);
    }
  });

  it('sends the key only in the Api-Key header, never in the body', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 200, { data: { ok: 1 } }));
    await client.call({ operation: 'ReadSomething', variables: { a: 1 }, apiKey: KEY });
    expect(upstream.received[0]?.headers['api-key']).toBe(KEY);
    expect(JSON.stringify({ q: upstream.received[0]?.query, v: upstream.received[0]?.variables })).not.toContain(KEY);
  });
});
