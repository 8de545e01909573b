import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../../sandbox/model.ts';
import { createSandbox } from '../../../sandbox/server.ts';
import { metricsOf } from '../../../sandbox/timeslices.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway } from '../../support/harness.ts';
import { json, startFakeUpstream, type FakeRequest } from '../../support/fake-upstream.ts';
import { createMetrics } from '../../../src/ops/metrics.ts';
import { createNerdGraphClient } from '../../../src/upstream/client.ts';
import type { OperationDocuments } from '../../../src/upstream/documents.ts';
import { UpstreamError } from '../../../src/upstream/errors.ts';
import { nrqlTimeoutFor } from '../../../src/upstream/nrql-timeout.ts';

/**
 * The gateway's side: against the sandbox's NRQL cost and TIMEOUT (on by
 * default; nrqlClockScale 1 here, so a simulated second is a real millisecond):
 * - every nrql field is given `timeout` from the request's remaining deadline, not NerdGraph's 5 s;
 * - the metric-data name look-up (a long uniques window) can never fail the data query;
 * - a query that used up its timeout is not retried past the request's deadline.
 */
const DAY_MS = 86_400_000;
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (closers.length) await closers.pop()?.();
});

/** The sandbox behind a recording front, so a test sees the variables each request carried. */
async function startFront() {
  const sandbox = createSandbox({ seed: 7, apmApps: 20, now: () => FIXED_NOW, behave: { nrqlClockScale: 1 } });
  const upstream = await startFakeUpstream(async (request: FakeRequest, res) => {
    const answer = await sandbox.app.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key'] ?? '') },
      body: JSON.stringify({ query: request.query, variables: request.variables, operationName: request.operationName }),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(await answer.text());
  });
  closers.push(upstream.close);
  // A web app with a few dozen metric names (not the bulk one): its cost is its window's.
  const app = sandbox.data.apps.find((candidate) => {
    const names = candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting ? metricsOf(candidate, sandbox.data) : [];
    return names.length > 0 && names.length < 100 && names.some((metric) => metric.name === 'HttpDispatcher');
  }) as SandboxApp;
  sandboxApps = sandbox.data.apps.filter((candidate) => candidate.accountId === PRIMARY_ACCOUNT && candidate.reporting && metricsOf(candidate, sandbox.data).some((metric) => metric.name === 'HttpDispatcher'));
  return { upstream, app };
}
let sandboxApps: SandboxApp[] = [];

/** One sandbox for the file (read only); each test looks at the requests it caused. */
let front: ReturnType<typeof startFront> | undefined;
async function sandboxFront() {
  front ??= startFront();
  const { upstream, app } = await front;
  upstream.received.length = 0;
  return { upstream, app };
}

async function get(gateway: Awaited<ReturnType<typeof createTestGateway>>, path: string) {
  const response = await gateway.app.request(path, { headers: { 'X-Api-Key': DEMO_KEY } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('NRQL timeout: gateway against the sandbox', () => {
  it('gives every nrql field the time left before the deadline: a 600-day name listing (6 s simulated) finishes within a 20 s deadline', async () => {
    const { upstream, app } = await sandboxFront();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 20_000, config: { metricNamesLookbackMs: 600 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics.json`);
    expect(answer.status).toBe(200);
    expect((answer.body.metrics as unknown[]).length).toBeGreaterThan(0);
    const sent = upstream.received.find((r) => r.operationName === 'ApplicationMetricNames');
    // 20 s less what was spent before it and the round trip's margin: 19 s unless the machine
    // is very busy (NerdGraph's default, without it, is 5 s).
    expect(sent?.variables.timeout).toBeGreaterThanOrEqual(15);
    expect(sent?.variables.timeout).toBeLessThanOrEqual(19);
  });

  it('a slow name look-up (800-day uniques: 8 s simulated, past an 8 s deadline) no longer fails the fast data query: found = the names with data', async () => {
    const { upstream, app } = await sandboxFront();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 8_000, config: { metricNamesLookbackMs: 800 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics/data.json?names[]=HttpDispatcher&names[]=Custom/NeverReported&summarize=true`);
    expect(answer.status).toBe(200);
    const data = answer.body.metric_data as { metrics_found: string[]; metrics_not_found: string[] };
    expect(data.metrics_found).toEqual(['HttpDispatcher']);
    expect(data.metrics_not_found).toEqual(['Custom/NeverReported']);
    // Logged: the request's line says what it did without.
    const line = gateway.logs.map((text) => JSON.parse(text) as { route?: string; degraded?: string; level?: number }).find((entry) => entry.degraded !== undefined);
    expect(line?.degraded).toMatch(/metric name look-up failed \(timeout\)/);
  });

  // After review: the look-up had the data query's timeout (the whole time left), so NerdGraph's
  // answer waited for it; with 5.5 s or less left that timeout was raised to 5 s, past the deadline.
  const dataPath = (id: number) => `/v2/applications/${id}/metrics/data.json?names[]=HttpDispatcher&names[]=Custom/NeverReported&summarize=true`;
  const degradedLines = (gateway: Awaited<ReturnType<typeof createTestGateway>>) =>
    gateway.logs.map((text) => JSON.parse(text) as { degraded?: string }).flatMap((entry) => (entry.degraded === undefined ? [] : [entry.degraded]));

  it('gives the name look-up its own 5 s timeout, not the time left; once it timed out, leaves it out for that caller, account and target', async () => {
    const { upstream, app } = await sandboxFront();
    // A 1,000-day listing costs 10 s simulated: past its 5 s, while the data query is quick.
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 10_000, config: { metricNamesLookbackMs: 1_000 * DAY_MS } });
    const first = await get(gateway, dataPath(app.id));
    const second = await get(gateway, dataPath(app.id));
    for (const answer of [first, second]) {
      expect(answer.status).toBe(200);
      expect(answer.body.metric_data).toMatchObject({ metrics_found: ['HttpDispatcher'], metrics_not_found: ['Custom/NeverReported'] });
    }
    const sent = upstream.received.filter((r) => r.operationName === 'ApplicationMetricData').map((r) => r.variables);
    expect(sent).toHaveLength(2);
    // The data query keeps the time left; the look-up has NerdGraph's least, so it holds the answer 5 s at most.
    expect(sent[0]?.timeout).toBeGreaterThanOrEqual(7);
    expect(sent[0]).toMatchObject({ withKnown: true, knownTimeout: 5 });
    // It timed out: the next request (not from any cache: the first answer was degraded) does without it.
    expect(sent[1]?.withKnown).toBe(false);
    expect(degradedLines(gateway)).toEqual([
      expect.stringMatching(/^metric name look-up failed \(timeout\)/),
      expect.stringMatching(/^metric name look-up left out \(timed out within the last minute\)/),
    ]);
    // Another target is asked as before.
    const other = sandboxApps.find((candidate) => candidate.id !== app.id) as SandboxApp;
    expect((await get(gateway, dataPath(other.id))).status).toBe(200);
    expect(upstream.received.filter((r) => r.operationName === 'ApplicationMetricData').at(-1)?.variables.withKnown).toBe(true);
  });

  it('with 5.5 s or less left, leaves the look-up out (it could not finish in time): 200, found = the names with data', async () => {
    const { upstream, app } = await sandboxFront();
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 5_500, config: { metricNamesLookbackMs: 1_000 * DAY_MS } });
    const answer = await get(gateway, dataPath(app.id));
    expect(answer.status).toBe(200);
    expect(answer.body.metric_data).toMatchObject({ metrics_found: ['HttpDispatcher'], metrics_not_found: ['Custom/NeverReported'] });
    const sent = upstream.received.filter((r) => r.operationName === 'ApplicationMetricData');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.variables).toMatchObject({ withKnown: false, timeout: 5 });
    // What NerdGraph was asked: the look-up was not in it at all.
    expect(sent[0]?.query).toContain('@include(if: $withKnown)');
    expect(degradedLines(gateway)).toEqual([expect.stringMatching(/^metric name look-up left out \(too little time left\)/)]);
  });

  it('never keeps an answer without the look-up in the micro-cache: the next identical request asks NerdGraph again', async () => {
    const { upstream, app } = await sandboxFront();
    // 5 s: the look-up is left out of every request (the same variables each time).
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 5_000, microCacheMs: 30_000 });
    for (let i = 0; i < 2; i++) expect((await get(gateway, dataPath(app.id))).status).toBe(200);
    expect(upstream.received.filter((r) => r.operationName === 'ApplicationMetricData')).toHaveLength(2);
    // With the look-up (a 10 s deadline, a quick 7-day listing), the second request is the micro-cache's.
    upstream.received.length = 0;
    const full = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 10_000, microCacheMs: 30_000 });
    for (let i = 0; i < 2; i++) expect((await get(full, dataPath(app.id))).status).toBe(200);
    expect(upstream.received.filter((r) => r.operationName === 'ApplicationMetricData')).toHaveLength(1);
  });

  it('does not retry a query that used up its timeout when the deadline leaves no longer one (one request, 504)', async () => {
    const { upstream, app } = await sandboxFront();
    // A 1,000-day listing costs 10 s simulated; an 8 s deadline gives the query 7 s at most.
    const gateway = await createTestGateway({ nerdgraphUrl: upstream.url, timeoutMs: 8_000, retries: 2, config: { metricNamesLookbackMs: 1_000 * DAY_MS } });
    const answer = await get(gateway, `/v2/applications/${app.id}/metrics.json`);
    expect(answer.status).toBe(504);
    expect((answer.body.error as { title: string }).title).toBe('NerdGraph did not answer in time');
    const sent = upstream.received.filter((r) => r.operationName === 'ApplicationMetricNames');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.variables.timeout).toBeLessThanOrEqual(7);
  });
});

describe('NRQL timeout: the client against a scripted NerdGraph', () => {
  const documents: OperationDocuments = new Map([
    [
      'TwoQueries',
      {
        name: 'TwoQueries',
        kind: 'query',
        text: 'query TwoQueries($a: Nrql!, $b: Nrql!, $timeout: Seconds) { actor { account(id: 1) { data: nrql(query: $a, timeout: $timeout) { results } known: nrql(query: $b, timeout: $timeout) { results } } } }',
      },
    ],
  ]);
  const timedOut = (path: string[]) => ({ message: 'NRDB query duration exceeded the set timeout', path, extensions: { errorClass: 'TIMEOUT' } });

  async function clientOn(answer: () => unknown, status = 200) {
    const upstream = await startFakeUpstream((_request, res) => json(res, status, answer()));
    closers.push(upstream.close);
    return { upstream, client: createNerdGraphClient({ url: upstream.url, documents, metrics: createMetrics(), timeoutMs: 3_000, retries: 2 }) };
  }

  it('an error in an optional field leaves it null and is handed over, classified; an error elsewhere still fails the call', async () => {
    const partial = { data: { actor: { account: { data: { results: [{ count: 1 }] }, known: null } } }, errors: [timedOut(['actor', 'account', 'known'])] };
    const { client, upstream } = await clientOn(() => partial);
    const seen: string[] = [];
    const data = await client.call({ operation: 'TwoQueries', variables: { a: 'x', b: 'y' }, apiKey: 'NRAK-TEST', optionalFields: ['actor.account.known'], onOptionalFieldError: (field, error) => seen.push(`${field} ${error.errorClass}`) });
    expect(data).toEqual(partial.data);
    expect(seen).toEqual(['actor.account.known timeout']);
    expect(upstream.received).toHaveLength(1);
    // Not optional: the same answer fails the call as before (and a query timeout is not retried).
    const failure = await client.call({ operation: 'TwoQueries', variables: { a: 'x', b: 'y' }, apiKey: 'NRAK-TEST', optionalFields: ['actor.account.data'] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).errorClass).toBe('timeout');
    expect(upstream.received).toHaveLength(2);
  });

  it('never keeps an answer whose optional field failed in the micro-cache, and tells every caller of a reused identical answer why', async () => {
    const partial = { data: { actor: { account: { data: { results: [{ count: 1 }] }, known: null } } }, errors: [timedOut(['actor', 'account', 'known'])] };
    const whole = { data: { actor: { account: { data: { results: [{ count: 1 }] }, known: { results: [] } } } } };
    let answer: unknown = partial;
    const upstream = await startFakeUpstream((_request, res) => json(res, 200, answer));
    closers.push(upstream.close);
    const microCache = { ttlMs: 30_000, maxBytes: 1_000_000, identityOf: (key: string) => key };
    const cachedClient = createNerdGraphClient({ url: upstream.url, documents, metrics: createMetrics(), timeoutMs: 3_000, retries: 0, microCache });
    const seen: string[] = [];
    const call = { operation: 'TwoQueries', variables: { a: 'x', b: 'y' }, apiKey: 'NRAK-TEST', optionalFields: ['actor.account.known'], onOptionalFieldError: (field: string, error: UpstreamError) => seen.push(`${field} ${error.errorClass}`) };
    await cachedClient.call(call);
    await cachedClient.call(call);
    expect(upstream.received).toHaveLength(2);
    expect(seen).toEqual(['actor.account.known timeout', 'actor.account.known timeout']);
    // Whole: the second read is the micro-cache's.
    answer = whole;
    await cachedClient.call({ ...call, variables: { a: 'x', b: 'z' } });
    await cachedClient.call({ ...call, variables: { a: 'x', b: 'z' } });
    expect(upstream.received).toHaveLength(3);
    // Without the micro-cache, a byte-identical answer is reused unparsed: its optional error is still told.
    answer = partial;
    const plainClient = createNerdGraphClient({ url: upstream.url, documents, metrics: createMetrics(), timeoutMs: 3_000, retries: 0 });
    seen.length = 0;
    await plainClient.call({ ...call, reuseIdenticalAnswer: true });
    await plainClient.call({ ...call, reuseIdenticalAnswer: true });
    expect(seen).toEqual(['actor.account.known timeout', 'actor.account.known timeout']);
  });

  it('without a request deadline, the call gets its own bound as timeout; an HTTP 504 with time left is still retried', async () => {
    const { client, upstream } = await clientOn(() => ({ errors: [{ message: 'gateway timeout' }] }), 504);
    const failure = await client.call({ operation: 'TwoQueries', variables: { a: 'x', b: 'y' }, apiKey: 'NRAK-TEST' }).catch((e: unknown) => e);
    expect((failure as UpstreamError).errorClass).toBe('timeout');
    expect(upstream.received).toHaveLength(3);
    // 3 s bound, less the margin: NerdGraph's least, 5 s.
    expect(upstream.received.map((r) => r.variables.timeout)).toEqual([5, 5, 5]);
  });

  it('nrqlTimeoutFor keeps within NerdGraph bounds', () => {
    expect(nrqlTimeoutFor(2_000)).toBe(5);
    expect(nrqlTimeoutFor(10_000)).toBe(9);
    expect(nrqlTimeoutFor(60_000)).toBe(59);
    expect(nrqlTimeoutFor(600_000)).toBe(120);
    expect(nrqlTimeoutFor(Number.POSITIVE_INFINITY)).toBe(120);
  });
});
