import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { prepareDocument, requestBody, type OperationDocuments } from '../../src/upstream/documents.ts';
import { UpstreamError, toV2Error } from '../../src/upstream/errors.ts';
import { json, startFakeUpstream, type FakeHandler } from '../support/fake-upstream.ts';

/** The client's contract with the inbound request's AbortSignal: deadline -> timeout, disconnect -> cancelled. */
const documents: OperationDocuments = new Map([
  ['ReadSomething', { name: 'ReadSomething', kind: 'query', text: 'query ReadSomething { actor { user { id } } }' }],
  ['WriteSomething', { name: 'WriteSomething', kind: 'mutation', text: 'mutation WriteSomething { agentApplicationDelete(guid: "x") { success } }' }],
]);
const KEY = 'NRAK-SIGNALTEST00112233445566';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function clientOn(handler: FakeHandler, retries = 2, timeoutMs = 3000) {
  const upstream = await startFakeUpstream(handler);
  closers.push(upstream.close);
  const metrics = createMetrics();
  return { upstream, metrics, client: createNerdGraphClient({ url: upstream.url, documents, metrics, timeoutMs, retries }) };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

const disconnected = (): Error => Object.assign(new Error('client went away'), { name: 'AbortError' });
const deadlinePassed = (): DOMException => new DOMException('request deadline', 'TimeoutError');

/** Resolves once the fake upstream has received `n` requests. */
function received(upstream: { received: unknown[] }, n: number): Promise<void> {
  return new Promise((resolve) => {
    const poll = (): void => void (upstream.received.length >= n ? resolve() : setTimeout(poll, 5));
    poll();
  });
}

describe('NerdGraph client and the inbound request signal', () => {
  it('sends nothing for a request that is already gone, and says so by class', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 200, { data: { ok: 1 } }));
    const gone = new AbortController();
    gone.abort(disconnected());
    const cancelled = await failure(client.call({ operation: 'WriteSomething', variables: {}, apiKey: KEY, signal: gone.signal }));
    expect(cancelled.errorClass).toBe('cancelled');
    expect(cancelled.sent).toBe(false);
    const late = new AbortController();
    late.abort(deadlinePassed());
    expect((await failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY, signal: late.signal }))).errorClass).toBe('timeout');
    expect(upstream.received).toHaveLength(0);
  });

  it('aborts the HTTP request in flight when the client disconnects', async () => {
    const { client, upstream } = await clientOn(() => undefined); // never answers
    const inbound = new AbortController();
    const call = failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY, signal: inbound.signal }));
    await received(upstream, 1);
    inbound.abort(disconnected());
    const error = await call;
    expect(error.errorClass).toBe('cancelled');
    expect(toV2Error(error).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(upstream.abortedCount()).toBe(1);
    expect(upstream.received).toHaveLength(1);
  });

  it('answers timeout when the request deadline fires mid-call, and does not retry past it', async () => {
    const { client, upstream } = await clientOn(() => undefined, 5);
    const inbound = new AbortController();
    const call = failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY, signal: inbound.signal }));
    await received(upstream, 1);
    inbound.abort(deadlinePassed());
    expect((await call).errorClass).toBe('timeout');
    expect(upstream.received).toHaveLength(1);
  });

  it('stops retrying once the signal fires during the backoff', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 503, { errors: [{ message: 'busy' }] }, { 'retry-after': '1' }), 5);
    const inbound = new AbortController();
    const call = failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY, signal: inbound.signal }));
    await received(upstream, 1);
    inbound.abort(disconnected());
    expect((await call).errorClass).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(upstream.received).toHaveLength(1);
  });

  it('without a signal, one timeoutMs deadline covers the retries', async () => {
    const { client, upstream } = await clientOn(() => undefined, 5, 300);
    expect((await failure(client.call({ operation: 'ReadSomething', variables: {}, apiKey: KEY }))).errorClass).toBe('timeout');
    expect(upstream.received).toHaveLength(1);
  });

  it('sends the prepared document, its operation name and the variables as one JSON body', async () => {
    const { client, upstream } = await clientOn((_req, res) => json(res, 200, { data: { ok: 1 } }));
    const variables = { guid: 'MTIzfEFQTXxBUFBMSUNBVElPTnw0NTY', names: ['a"b', 'c\u2028d'] };
    expect(await client.call({ operation: 'ReadSomething', variables, apiKey: KEY })).toEqual({ ok: 1 });
    const sent = upstream.received[0];
    expect(sent?.query).toBe(documents.get('ReadSomething')?.text);
    expect(sent?.operationName).toBe('ReadSomething');
    expect(sent?.variables).toEqual(variables);
    const prepared = prepareDocument(documents.get('ReadSomething') as NonNullable<ReturnType<OperationDocuments['get']>>);
    expect(JSON.parse(requestBody(prepared, variables))).toEqual({ query: prepared.text, operationName: 'ReadSomething', variables });
    expect(prepared.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
