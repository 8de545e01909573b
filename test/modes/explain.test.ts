import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { Kind, getVariableValues, parse, validate, type OperationDefinitionNode } from 'graphql';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { appGuid, callOf, explainSandbox, SENTINEL_KEY } from '../support/explain-sandbox.ts';
import { z } from 'zod';
import noteCreate from '../support/fixture-mappings/widgets/notes.create.ts';
import listMapping from '../support/fixture-mappings/widgets/list.ts';
import { MAX_REQUEST_CHARS, parseExplainQuery } from '../../src/bridge/explain-input.ts';
import { DEFAULT_GRAPHQL_URL, LOCAL_GRAPHQL_NOTE, curlFor, shownGraphqlUrl, type Explanation, type ExplainedCall } from '../../src/bridge/explanation.ts';
import { createApp } from '../../src/app.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { V2Error } from '../../src/v2/errors.ts';
import { accountsAnswer, json, startFakeUpstream } from '../support/fake-upstream.ts';
import { httpSend, serveOnLoopback } from '../support/http.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, type TestGateway } from '../support/harness.ts';
import { GADGETS, loadTestDocuments, loadTestMappings, WIDGET, WIDGETS } from '../support/fixture-routes.ts';
import { hasRealSchema, realNerdGraphSchema } from '../support/schema.ts';

/**
 * /bridge/explain, in-process against the sandbox, on the fixture routes
 * (test/support/fixture-routes.ts): the exact NerdGraph calls a v2 request becomes, runnable as
 * they are, with writes recorded and never sent, and no key in the answer. npm run explain and
 * the NRQL of a metric-data request: explain-cli.test.ts.
 */
const run = promisify(execFile);

const setup = explainSandbox('fixtures');
const { sandbox } = setup;

const ErrorBody = z.object({ error: z.object({ title: z.string().min(1) }) }).strict();

interface ExplainOptions {
  method?: string;
  body?: string;
  key?: string | null;
  headers?: Record<string, string>;
}

function explainUrl(request: string, options: ExplainOptions = {}): string {
  const query = new URLSearchParams({ request });
  if (options.method !== undefined) query.set('method', options.method);
  if (options.body !== undefined) query.set('body', options.body);
  return `/bridge/explain?${query.toString()}`;
}

async function explainRaw(request: string, options: ExplainOptions = {}, app: TestGateway['app'] = setup.gateway.app): Promise<Response> {
  const key = options.key === undefined ? DEMO_KEY : options.key;
  return app.request(explainUrl(request, options), { headers: { ...(key === null ? {} : { 'X-Api-Key': key }), ...options.headers } });
}

async function explain(request: string, options: ExplainOptions = {}): Promise<Explanation> {
  const response = await explainRaw(request, options);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  // The route's own answer, read back as the type it declares.
  return JSON.parse(text) as Explanation;
}



/** Every explanation the read tests produce, for the schema and runnability checks. */
const explained: Explanation[] = [];

describe('GET /bridge/explain: reads', () => {
  it('a list: the entity search with its query string variable, and the mapping notes', async () => {
    const e = await explain('/v2/fixture_widgets.json?filter[name]=a');
    explained.push(e);
    expect(e).toMatchObject({
      request: '/v2/fixture_widgets.json?filter[name]=a',
      method: 'GET',
      route: WIDGETS,
      mapping: 'fixture_widgets.list',
      kind: 'read-plan',
      fidelity: listMapping.fidelity,
      summary: listMapping.summary,
      graphqlUrl: setup.graphqlUrl,
      status: 200,
      // The sandbox listens on loopback: the answer says so.
      notes: [LOCAL_GRAPHQL_NOTE],
    });
    expect(e.reshape).toEqual(listMapping.fields);
    expect(e.knownGaps).toEqual(listMapping.knownGaps);
    expect(e.assumptions).toEqual(listMapping.assumptions);
    expect(e.parameters).toEqual(listMapping.parameters.notes());
    const search = callOf(e, listMapping.operation);
    expect(search).toMatchObject({ kind: 'query', sent: true });
    expect(search.variables.query).toContain(`accountId = ${PRIMARY_ACCOUNT}`);
    expect(search.query).toMatch(/^query FixtureWidgetsSearch\(/m);
    expect(search.graphqlRequest).toEqual({ query: search.query, operationName: 'FixtureWidgetsSearch', variables: search.variables });
    // The account lookup is shown too, and says why it is there.
    expect(callOf(e, 'AccessibleAccounts').note).toMatch(/account/);
    expect(e.calls.every((c) => c.sent)).toBe(true);
  });

  it('a show: the GUID computed from account and id is in the variables', async () => {
    const e = await explain(`/v2/fixture_widgets/${setup.live.id}.json`);
    explained.push(e);
    expect(e).toMatchObject({ route: WIDGET, mapping: 'fixture_widgets.show', status: 200 });
    const show = callOf(e, 'FixtureWidget');
    expect(show.variables.guid).toBe(appGuid(setup.live.id));
    // Its document has no nrql field: no NRQL listed.
    expect(show.nrql).toEqual([]);
  });

  it('a percent-encoded path is explained as the same request sent directly reads it', async () => {
    const encoded = `/v2/fixture_widgets/${[...String(setup.live.id)].map((digit) => `%3${digit}`).join('')}.json`;
    const e = await explain(encoded);
    explained.push(e);
    expect(e).toMatchObject({ mapping: 'fixture_widgets.show', status: 200 });
    expect(callOf(e, 'FixtureWidget').variables.guid).toBe(appGuid(setup.live.id));
  });

  it('an XML request and an answer that is an error: the status and the v2 title', async () => {
    const e = await explain('/v2/fixture_widgets/987654321.xml');
    expect(e).toMatchObject({ mapping: 'fixture_widgets.show', status: 404, error: 'Fixture widget not found' });
    expect(callOf(e, 'FixtureWidget').variables.guid).toBe(appGuid(987654321));
  });

  it('a v2 parameter the translation refuses: explained with its 422', async () => {
    const e = await explain('/v2/fixture_widgets.json?page=none');
    expect(e.status).toBe(422);
    expect(e.error).toMatch(/page/);
  });

  it('an unsupported route: its fixed answer, no NerdGraph call', async () => {
    const before = await setup.gateway.upstreamCount();
    const e = await explain(`/v2/fixture_widgets/${setup.live.id}/notes/5.json`, { method: 'DELETE' });
    expect(e).toMatchObject({ kind: 'unsupported', status: 422, calls: [] });
    expect(e.error).toMatch(/cannot be deleted/);
    expect(await setup.gateway.upstreamCount()).toBe(before);
  });

  it('a passthrough mapping (the gadgets list): passed through, no NerdGraph call', async () => {
    const metrics = createMetrics();
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1000, accountsCacheTtlMs: 1000, metricNamesLookbackMs: 86_400_000, requestDeadlineMs: 5000 },
      nerdgraph: createNerdGraphClient({ url: setup.graphqlUrl, documents: loadTestDocuments(), metrics, timeoutMs: 5000, retries: 0 }),
      documents: loadTestDocuments(),
      nerdgraphUrl: setup.graphqlUrl,
      mappings: await loadTestMappings('fixtures'),
      metrics,
      logger: pino({ level: 'silent' }),
      now: () => FIXED_NOW,
    });
    const response = await explainRaw('/v2/fixture_gadgets.json?page=1', {}, app);
    const e = JSON.parse(await response.text()) as Explanation;
    expect(response.status).toBe(200);
    expect(e).toMatchObject({ kind: 'passthrough', route: GADGETS, calls: [], status: null });
    expect(e.notes.join(' ')).toMatch(/Passed through/);
    const upstreamCalls = await metrics.upstreamRequests.get();
    expect(upstreamCalls.values.reduce((n, v) => n + v.value, 0)).toBe(0);
  });
});

describe('GET /bridge/explain: a write is a dry run', () => {
  it('a note: the mutation is recorded with its variables, sent: false, and nothing is written', async () => {
    const version = sandbox.data.writes.version;
    const writes = sandbox.writes().total;
    const mutationsBefore = await setup.gateway.upstreamCount(noteCreate.operation);
    const e = await explain(`/v2/fixture_widgets/${setup.live.id}/notes.json`, {
      method: 'POST',
      body: JSON.stringify({ note: { text: 'v9.9.9-explain' } }),
    });
    expect(e).toMatchObject({ method: 'POST', mapping: 'fixture_widgets.notes.create', kind: 'write' });
    const create = callOf(e, noteCreate.operation);
    expect(create).toMatchObject({ kind: 'mutation', sent: false });
    expect(JSON.stringify(create.variables)).toContain('v9.9.9-explain');
    expect(create.query).toMatch(/^mutation FixtureWidgetNote\(/m);
    // The reads its rules need did run.
    expect(callOf(e, 'FixtureWidget').sent).toBe(true);
    expect(e.notes.join(' ')).toMatch(/Dry run: FixtureWidgetNote was recorded, not sent/);
    expect(e.notes.join(' ')).toContain(`answers ${noteCreate.successStatus}`);
    // Nothing reached NerdGraph's mutation, nothing changed in the sandbox.
    expect(await setup.gateway.upstreamCount(noteCreate.operation)).toBe(mutationsBefore);
    expect(sandbox.data.writes.version).toBe(version);
    expect(sandbox.writes().total).toBe(writes);
  });

  it('a write the translation refuses before its mutation: the same status as the route itself, no mutation recorded', async () => {
    const path = `/v2/fixture_widgets/${setup.live.id}/notes.json`;
    const body = '{"note":{"author":"ci"}}';
    const e = await explain(path, { method: 'POST', body });
    // Without a text nothing is written, so the route itself can be asked for comparison.
    const direct = await setup.gateway.app.request(path, { method: 'POST', headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/json' }, body });
    expect(direct.status).toBeGreaterThanOrEqual(400);
    expect(e.status).toBe(direct.status);
    expect(e.error).toBe(ErrorBody.parse(await direct.json()).error.title);
    expect(e.calls.some((c) => c.kind === 'mutation')).toBe(false);
    expect(e.notes).toEqual([LOCAL_GRAPHQL_NOTE]);
  });
});

describe('GET /bridge/explain: a recorded run through the gateway itself', () => {
  const operations = (e: Explanation): string[] => e.calls.map((c) => c.operation);
  it.each([
    ['page 2 of the list', () => '/v2/fixture_widgets.json?page=2'],
    ['page 2 of a filtered list', () => '/v2/fixture_widgets.json?filter[name]=e&page=2'],
  ])('is cold (%s): the calls a fresh gateway makes, even after the route itself warmed its caches', async (_name, target) => {
    const request = target();
    const first = await explain(request);
    // The route itself now remembers what it read (the list kept for its later pages).
    expect((await setup.gateway.app.request(request, { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(200);
    const second = await explain(request);
    expect(second.status).toBe(200);
    expect(operations(second)).toEqual(operations(first));
  });

  it('is cold for paging too: a page past the end still shows the read of page 1 that tells it', async () => {
    // The route keeps what it read, and then answers a page past the end again without a call.
    const searches = await setup.gateway.upstreamCount(listMapping.operation);
    expect((await setup.gateway.app.request('/v2/fixture_widgets.json?filter[name]=o&page=5', { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(200);
    expect((await setup.gateway.app.request('/v2/fixture_widgets.json?filter[name]=o&page=5', { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(200);
    expect(await setup.gateway.upstreamCount(listMapping.operation)).toBe(searches + 1);
    const e = await explain('/v2/fixture_widgets.json?filter[name]=o&page=5');
    expect(operations(e)).toContain(listMapping.operation);
  });

  it('the key is checked first: explain of a key NerdGraph refuses makes no other call', async () => {
    const fresh = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: setup.graphqlUrl });
    const response = await explainRaw(`/v2/fixture_widgets/${setup.live.id}.json`, { key: 'NRAK-EXPLAINCHECKEDFIRST000000' }, fresh.app);
    expect(response.status).toBe(401);
    expect(await fresh.upstreamCount()).toBe(1);
    expect(await fresh.upstreamCount('AccessibleAccounts')).toBe(1);
  });

  it('is cold with the read micro-cache on too: a page the cache answers still shows the reads it leads to', async () => {
    const explainFresh = async (): Promise<string[]> => {
      const fresh = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: setup.graphqlUrl, microCacheMs: 60_000 });
      return operations(JSON.parse(await (await explainRaw('/v2/fixture_widgets.json', {}, fresh.app)).text()) as Explanation);
    };
    const cold = await explainFresh();
    const warm = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: setup.graphqlUrl, microCacheMs: 60_000 });
    expect((await warm.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': DEMO_KEY } })).status).toBe(200);
    const e = JSON.parse(await (await explainRaw('/v2/fixture_widgets.json', {}, warm.app)).text()) as Explanation;
    expect(operations(e)).toEqual(cold);
    expect(cold).toEqual(expect.arrayContaining(['AccessibleAccounts', listMapping.operation]));
  });

  it('an account the key cannot read, or a malformed X-Account-Id: explain answers as /v2 does, before any run', async () => {
    const fresh = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: setup.graphqlUrl });
    const malformed = await explainRaw('/v2/fixture_widgets.json', { headers: { 'X-Account-Id': 'abc' } }, fresh.app);
    expect(malformed.status).toBe(400);
    expect(await fresh.upstreamCount()).toBe(0);
    const other = await explainRaw('/v2/fixture_widgets.json', { headers: { 'X-Account-Id': '1000002' } }, fresh.app);
    expect(other.status).toBe(403);
    expect(ErrorBody.parse(await other.json()).error.title).toBe('The API key cannot access account 1000002');
    expect(await fresh.upstreamCount()).toBe(1);
  });

  it('a run cut by the explain request\'s deadline is counted once, as that request', async () => {
    const stalled = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
    });
    try {
      const slow = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: stalled.url, timeoutMs: 5_000, deadlineMs: 300 });
      const e = JSON.parse(await (await explainRaw('/v2/fixture_widgets.json', {}, slow.app)).text()) as Explanation;
      expect(e.status).toBe(504);
      const cancelled = (await slow.metrics.registry.getSingleMetric('v2bridge_requests_cancelled_total')?.get())?.values ?? [];
      expect(cancelled.map((v) => [v.labels.reason, v.value])).toEqual([['deadline', 1]]);
    } finally {
      await stalled.close();
    }
  });

  it('ends with the explain request: its client leaving stops the run\'s NerdGraph call', async () => {
    let searching: (() => void) | undefined;
    const searchStarted = new Promise<void>((resolve) => (searching = resolve));
    const stalled = await startFakeUpstream((request, res) => {
      if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([PRIMARY_ACCOUNT]));
      // The search never answers: only the explain request's end can stop it.
      searching?.();
    });
    // A deadline far past the test's timeout: only the client leaving can end the run in time.
    const slow = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: stalled.url, timeoutMs: 120_000 });
    const server = await serveOnLoopback(slow.app.fetch);
    try {
      const controller = new AbortController();
      const sent = fetch(`${server.url}${explainUrl('/v2/fixture_widgets.json')}`, { headers: { 'X-Api-Key': DEMO_KEY }, signal: controller.signal }).catch(() => undefined);
      await searchStarted;
      controller.abort();
      await sent;
      // Event-driven: resolves once the fake NerdGraph saw its search request cut (the test's timeout bounds it).
      while (stalled.abortedCount() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(stalled.received.map((r) => r.operationName)).toEqual(['AccessibleAccounts', listMapping.operation]);
    } finally {
      await server.close();
      await stalled.close();
    }
  });
});

describe('GET /bridge/explain: what it sends is runnable as it is', () => {
  const queryCalls = (): ExplainedCall[] => explained.flatMap((e) => e.calls.filter((c) => c.sent));

  it('each graphqlRequest body, POSTed to the sandbox /graphql with the key added back, gets data', async () => {
    expect(queryCalls().length).toBeGreaterThanOrEqual(5);
    for (const call of queryCalls()) {
      const response = await fetch(setup.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': DEMO_KEY },
        body: JSON.stringify(call.graphqlRequest),
      });
      const answer = z.object({ data: z.record(z.string(), z.unknown()), errors: z.array(z.unknown()).optional() }).parse(await response.json());
      expect(response.status, call.operation).toBe(200);
      expect(answer.errors, call.operation).toBeUndefined();
      expect(answer.data.actor, call.operation).toBeTruthy();
    }
  });

  it('the curl command runs in a shell with NEW_RELIC_API_KEY set, and the key is in no command', async () => {
    const show = callOf(explained.find((e) => e.mapping === 'fixture_widgets.show') as Explanation, 'FixtureWidget');
    expect(show.curl).not.toContain(DEMO_KEY);
    expect(show.curl).toContain('$NEW_RELIC_API_KEY');
    const { stdout } = await run('sh', ['-c', show.curl], { env: { PATH: process.env.PATH, NEW_RELIC_API_KEY: DEMO_KEY } });
    const answer = z.object({ data: z.object({ actor: z.object({ entity: z.object({ guid: z.string() }) }) }) }).parse(JSON.parse(stdout));
    expect(answer.data.actor.entity.guid).toBe(appGuid(setup.live.id));
  });

  it('curlFor quotes anything a shell would read: quotes, $, backslashes, newlines', async () => {
    const body = JSON.stringify({ query: "query Q { a }\n# it's $HOME `x` \\ done", variables: { s: "O'Brien" } });
    const command = curlFor('http://127.0.0.1:1/graphql', body).replace(/^curl .*--data-binary /, 'printf %s ');
    const { stdout } = await run('sh', ['-c', command], { env: { PATH: process.env.PATH } });
    expect(stdout).toBe(body);
  });

  it.skipIf(!hasRealSchema)('every document validates against the real NerdGraph schema, and its variables coerce', () => {
    const schema = realNerdGraphSchema();
    // The reads; the write's mutation is checked below.
    expect(explained.length).toBeGreaterThanOrEqual(3);
    for (const call of explained.flatMap((e) => e.calls)) {
      const document = parse(call.query);
      expect(validate(schema, document).map((e) => e.message), call.operation).toEqual([]);
      const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      const coerced = getVariableValues(schema, operation?.variableDefinitions ?? [], call.variables);
      expect(coerced.errors?.map((e) => e.message) ?? [], call.operation).toEqual([]);
    }
  });

  it.skipIf(!hasRealSchema)('the recorded mutation validates against the real schema, its variables included', async () => {
    const e = await explain(`/v2/fixture_widgets/${setup.live.id}/notes.json`, { method: 'POST', body: '{"note":{"text":"r1"}}' });
    const create = callOf(e, noteCreate.operation);
    const schema = realNerdGraphSchema();
    const document = parse(create.query);
    expect(validate(schema, document).map((x) => x.message)).toEqual([]);
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    expect(getVariableValues(schema, operation?.variableDefinitions ?? [], create.variables).errors ?? []).toEqual([]);
  });
});

describe('GET /bridge/explain: bad input is a v2 error', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['no request', '/bridge/explain', 422, /request/],
    ['empty request', explainUrl(''), 422, /request/],
    ['not a v2 path', explainUrl('/healthz'), 422, /must start with \/v2\//],
    ['an absolute URL', explainUrl('http://evil.example/v2/fixture_widgets.json'), 422, /must start with \/v2\//],
    ['climbing out of /v2/', explainUrl('/v2/../metrics'), 422, /must start with \/v2\//],
    ['a fragment', explainUrl('/v2/fixture_widgets.json#x'), 422, /control characters and #/],
    ['a control character', explainUrl('/v2/fixture_widgets.json?filter[name]=a\nb'), 422, /control characters/],
    ['too long', explainUrl(`/v2/fixture_widgets.json?filter[name]=${'a'.repeat(MAX_REQUEST_CHARS)}`), 422, /at most/],
    ['request twice', `${explainUrl('/v2/fixture_widgets.json')}&request=%2Fv2%2Ffixture_widgets.xml`, 422, /give it once/],
    ['an unknown method', explainUrl('/v2/fixture_widgets.json', { method: 'PATCH' }), 422, /method/],
    ['a method the route does not serve', explainUrl('/v2/fixture_widgets.json', { method: 'DELETE' }), 422, /served for GET/],
    ['a body on a GET', explainUrl('/v2/fixture_widgets.json', { body: '{}' }), 422, /only a POST or PUT/],
    ['a body that is not JSON', explainUrl('/v2/fixture_widgets/1/notes.json', { method: 'POST', body: '{nope' }), 400, /expected JSON/],
    ['a body that is not an object', explainUrl('/v2/fixture_widgets/1/notes.json', { method: 'POST', body: '[1]' }), 422, /JSON object/],
    ['an unknown v2 route', explainUrl('/v2/nothing_here.json'), 404, /Unknown v2 resource/],
    ['an unknown format', explainUrl('/v2/fixture_widgets.csv'), 404, /Unknown format/],
  ];
  it.each(cases)('%s', async (_name, url, status, title) => {
    const response = await setup.gateway.app.request(url, { headers: { 'X-Api-Key': DEMO_KEY } });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/json/);
    const body = ErrorBody.parse(await response.json());
    expect(body.error.title).toMatch(title);
  });

  it('no key: 401, as any v2 call', async () => {
    const response = await explainRaw('/v2/fixture_widgets.json', { key: null });
    expect(response.status).toBe(401);
    expect(ErrorBody.parse(await response.json()).error.title).toBe('Invalid request, API key required');
  });

  it('a key NerdGraph refuses: its 401, then remembered (no second lookup)', async () => {
    const badKey = 'NRAK-EXPLAINUNKNOWN0000000000000';
    const first = await explainRaw('/v2/fixture_widgets.json', { key: badKey });
    expect(first.status).toBe(401);
    const body = await first.text();
    expect(ErrorBody.parse(JSON.parse(body)).error.title).toBeTruthy();
    expect(body).not.toContain(badKey);
    const lookups = await setup.gateway.upstreamCount('AccessibleAccounts');
    const second = await explainRaw('/v2/fixture_widgets.json', { key: badKey });
    expect(second.status).toBe(401);
    expect(await setup.gateway.upstreamCount('AccessibleAccounts')).toBe(lookups);
  });

  it('over real HTTP, the per-address limit on unknown keys applies to explain too', async () => {
    const limited = await createTestGateway({
      routes: 'fixtures',
      nerdgraphUrl: setup.graphqlUrl,
      config: { keyGuard: { refusedTtlMs: 60_000, refusedMax: 100, verificationsPerAddressPerMinute: 2 } },
    });
    const server = await serveOnLoopback(limited.app.fetch);
    try {
      const url = `${server.url}${explainUrl('/v2/fixture_widgets.json')}`;
      const good = await httpSend(url, { headers: { 'X-Api-Key': DEMO_KEY } });
      expect(good.status).toBe(200);
      const first = await httpSend(url, { headers: { 'X-Api-Key': 'NRAK-EXPLAINPROBE1' } });
      expect(first.status).toBe(401);
      const second = await httpSend(url, { headers: { 'X-Api-Key': 'NRAK-EXPLAINPROBE2' } });
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
      // A key already verified is still explained from the same address.
      const again = await httpSend(url, { headers: { 'X-Api-Key': DEMO_KEY } });
      expect(again.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('shares the key guard with /v2: one per-address budget, one refused-key memory', async () => {
    const limited = await createTestGateway({
      routes: 'fixtures',
      nerdgraphUrl: setup.graphqlUrl,
      config: { keyGuard: { refusedTtlMs: 60_000, refusedMax: 100, verificationsPerAddressPerMinute: 2 } },
    });
    const server = await serveOnLoopback(limited.app.fetch);
    try {
      // Two unknown keys verified through /v2 spend this address's budget...
      for (const key of ['NRAK-SHAREDPROBE1', 'NRAK-SHAREDPROBE2']) {
        expect((await httpSend(`${server.url}/v2/fixture_widgets.json`, { headers: { 'X-Api-Key': key } })).status, key).toBe(401);
      }
      const lookups = await limited.upstreamCount('AccessibleAccounts');
      expect(lookups).toBe(2);
      // ...so a third one on explain is not verified either.
      const third = await httpSend(`${server.url}${explainUrl('/v2/fixture_widgets.json')}`, { headers: { 'X-Api-Key': 'NRAK-SHAREDPROBE3' } });
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      // A key /v2 saw refused is answered by explain from the refused-key memory: no lookup.
      const refused = await httpSend(`${server.url}${explainUrl('/v2/fixture_widgets.json')}`, { headers: { 'X-Api-Key': 'NRAK-SHAREDPROBE1' } });
      expect(refused.status).toBe(401);
      expect(await limited.upstreamCount('AccessibleAccounts')).toBe(lookups);
    } finally {
      await server.close();
    }
  });

  it('and the other way: a key explain saw refused is answered by /v2 without a lookup', async () => {
    const fresh = await createTestGateway({ routes: 'fixtures', nerdgraphUrl: setup.graphqlUrl });
    const key = 'NRAK-EXPLAINFIRST0000000000000';
    expect((await explainRaw('/v2/fixture_widgets.json', { key }, fresh.app)).status).toBe(401);
    const lookups = await fresh.upstreamCount('AccessibleAccounts');
    const direct = await fresh.app.request('/v2/fixture_widgets.json', { headers: { 'X-Api-Key': key } });
    expect(direct.status).toBe(401);
    expect(await fresh.upstreamCount('AccessibleAccounts')).toBe(lookups);
  });

  it('parseExplainQuery: any text is accepted only as a v2 target, else refused with a V2Error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string().map((s) => `/v2/${s}`), fc.string().map((s) => `/deployments.xml${s}`)), fc.option(fc.string(), { nil: undefined }), (request, method) => {
        try {
          const input = parseExplainQuery({ request: [request], ...(method === undefined ? {} : { method: [method] }) });
          expect(input.request).toBe(request);
          expect(request.startsWith('/v2/') || /^\/deployments\.(json|xml)(\?|$)/.test(request)).toBe(true);
          expect(['GET', 'POST', 'PUT', 'DELETE']).toContain(input.method);
        } catch (error) {
          expect(error).toBeInstanceOf(V2Error);
          expect([400, 422]).toContain((error as V2Error).status);
        }
      }),
    );
  });
});

describe('GET /bridge/explain: the key never appears', () => {
  it('not in the answer, not in the logs: even when pasted into the request itself', async () => {
    const request = `/v2/fixture_widgets.json?filter[name]=${SENTINEL_KEY}`;
    const response = await explainRaw(request, { key: SENTINEL_KEY });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain(SENTINEL_KEY);
    expect(text).toContain('[redacted]');
    expect(setup.gateway.logs.join('')).not.toContain(SENTINEL_KEY);
    const e = JSON.parse(text) as Explanation;
    expect(e.calls.length).toBeGreaterThan(0);
  });

  it('nor in a write dry run sent with the Api-Key header spelling', async () => {
    const response = await explainRaw(
      `/v2/fixture_widgets/${setup.live.id}/notes.json`,
      { method: 'post', body: '{"note":{"text":"k1"}}', key: null, headers: { 'Api-Key': SENTINEL_KEY } },
    );
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain(SENTINEL_KEY);
    expect((JSON.parse(text) as Explanation).calls.map((c) => c.operation)).toContain(noteCreate.operation);
  });
});

describe('GET /bridge/explain: the NerdGraph URL it shows', () => {
  /** A gateway whose client calls the test sandbox, but which is told its NerdGraph is `shownAs`. */
  async function explainShownAs(shownAs: string): Promise<Explanation> {
    const metrics = createMetrics();
    const app = createApp({
      config: { defaultAccountId: undefined, publicBaseUrl: undefined, cursorCacheTtlMs: 1000, accountsCacheTtlMs: 1000, metricNamesLookbackMs: 86_400_000, requestDeadlineMs: 5000 },
      nerdgraph: createNerdGraphClient({ url: setup.graphqlUrl, documents: loadTestDocuments(), metrics, timeoutMs: 5000, retries: 0 }),
      documents: loadTestDocuments(),
      nerdgraphUrl: shownAs,
      mappings: await loadTestMappings('fixtures'),
      metrics,
      logger: pino({ level: 'silent' }),
      now: () => FIXED_NOW,
    });
    const response = await explainRaw(`/v2/fixture_widgets/${setup.live.id}.json`, {}, app);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    for (const secret of ['s3cret', 'proxy-user', 't0ken']) expect(text, secret).not.toContain(secret);
    return JSON.parse(text) as Explanation;
  }

  it('never the user:password or query string of NERDGRAPH_URL, not in graphqlUrl nor in a curl command', async () => {
    const e = await explainShownAs('https://proxy-user:s3cret@nerdgraph-proxy.example:8443/graphql?token=t0ken#frag');
    expect(e.graphqlUrl).toBe('https://nerdgraph-proxy.example:8443/graphql');
    expect(e.calls.length).toBeGreaterThan(0);
    for (const call of e.calls) expect(call.curl).toContain(`curl -sS -X POST 'https://nerdgraph-proxy.example:8443/graphql' `);
    expect(e.notes).toEqual([]);
  });

  it('a loopback one (the sandbox) is kept, as the only runnable one, with a note saying it is local', async () => {
    const port = new URL(setup.graphqlUrl).port;
    const e = await explainShownAs(`http://proxy-user:s3cret@127.0.0.1:${port}/graphql?token=t0ken`);
    expect(e.graphqlUrl).toBe(setup.graphqlUrl);
    expect(e.notes).toEqual([LOCAL_GRAPHQL_NOTE]);
    expect(LOCAL_GRAPHQL_NOTE).toMatch(/local sandbox/);
  });

  it('shownGraphqlUrl: credentials, query and fragment dropped; loopback flagged; nonsense never echoed', () => {
    expect(shownGraphqlUrl(undefined)).toEqual({ url: DEFAULT_GRAPHQL_URL, local: false });
    expect(shownGraphqlUrl('https://api.eu.newrelic.com/graphql')).toEqual({ url: 'https://api.eu.newrelic.com/graphql', local: false });
    expect(shownGraphqlUrl('http://u:p@localhost:8081/graphql?x=1')).toEqual({ url: 'http://localhost:8081/graphql', local: true });
    expect(shownGraphqlUrl('http://[::1]:8081/graphql')).toEqual({ url: 'http://[::1]:8081/graphql', local: true });
    expect(shownGraphqlUrl('not a url s3cret')).toEqual({ url: DEFAULT_GRAPHQL_URL, local: false });
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.webSegment(), fc.webSegment(), (url, user, password) => {
        const withCredentials = new URL(url);
        withCredentials.username = user;
        withCredentials.password = password;
        const shown = new URL(shownGraphqlUrl(withCredentials.href).url);
        expect([shown.username, shown.password, shown.search, shown.hash]).toEqual(['', '', '', '']);
        expect(shown.host).toBe(withCredentials.host);
        expect(shown.pathname).toBe(withCredentials.pathname);
      }),
    );
  });
});
