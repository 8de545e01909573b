import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/server.ts';
import { createApp } from '../../src/app.ts';
import { createIdentityHasher } from '../../src/caller/identity.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { parseRouteModes } from '../../src/ops/route-modes.ts';
import { mappingTable, type MappingTable } from '../../src/routes/resolved-route.ts';
import { createNerdGraphClient } from '../../src/upstream/client.ts';
import { FIXED_NOW, PRIMARY_ACCOUNT } from '../support/harness.ts';
import { GADGETS, loadTestDocuments, loadTestMappings, startFixtureLegacy } from '../support/fixture-routes.ts';
import { memorySink, plainComparer, type MemorySink } from '../support/modes.ts';

/**
 * A request's route is matched once, whatever its mode: the routing step matches the route
 * table and puts the route on the context; the mode strategies, the translation, a comparison's
 * translation side, a write's dry run and an explained request's run all read it from there (or
 * carry it), and nobody matches again. Counted by wrapping the table the app is given.
 */
const KEY = 'matchedoncekey0123456789';
const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

let sandbox: { url: string; close: () => Promise<void> };
/** The fixture routes' legacy face, in front of the sandbox (its /graphql forwarded). */
let upstream: Awaited<ReturnType<typeof startFixtureLegacy>>;
let appId: number;

beforeAll(async () => {
  const created = createSandbox({ seed: 11, apmApps: 5, now: () => FIXED_NOW, apiKeys: new Map([[KEY, [PRIMARY_ACCOUNT]]]) });
  sandbox = await created.listen(0, '127.0.0.1');
  upstream = await startFixtureLegacy(created, sandbox.url);
  const app = [...created.data.apps.values()].find((a) => a.accountId === PRIMARY_ACCOUNT);
  appId = (app as { id: number }).id;
});
afterAll(async () => {
  await upstream.close();
  await sandbox.close();
});

/** A gateway with these modes on the fixture routes, over the sandbox and the fixture legacy face, its route table counting every match. */
async function countingGateway(routeModes: string) {
  const mappings = await loadTestMappings('fixtures');
  const real = mappingTable(mappings);
  const matched: string[] = [];
  const routeTable: MappingTable = {
    match(path) {
      matched.push(path);
      return real.match(path);
    },
  };
  const metrics = createMetrics();
  const documents = loadTestDocuments();
  const nerdgraph = createNerdGraphClient({
    url: `${upstream.origin}/graphql`,
    documents,
    metrics,
    timeoutMs: 5_000,
    retries: 0,
    microCache: { ttlMs: 0, maxBytes: 1024 * 1024, identityOf: createIdentityHasher() },
  });
  const sink: MemorySink = memorySink();
  const app = createApp({
    config: {
      defaultAccountId: undefined,
      publicBaseUrl: undefined,
      cursorCacheTtlMs: 300_000,
      accountsCacheTtlMs: 300_000,
      metricNamesLookbackMs: 7 * 86_400_000,
      requestDeadlineMs: 5_000,
    },
    nerdgraph,
    nerdgraphUrl: `${upstream.origin}/graphql`,
    mappings,
    documents,
    routeTable,
    metrics,
    logger: createLogger('silent', new Writable({ write: (_chunk, _e, done) => done() })),
    now: () => FIXED_NOW,
    modes: {
      rules: parseRouteModes(routeModes),
      legacyUrl: upstream.origin,
      comparer: plainComparer,
      sink,
      sampleRate: 1,
      concurrency: 2,
      queueMax: 64,
      maxBodyBytes: 2 * 1024 * 1024,
      documents,
    },
  });
  /** Sends one request, reads its answer, waits for its shadow work; the paths matched meanwhile. */
  async function matchesOf(path: string, init: RequestInit = {}, records = 0): Promise<{ status: number; matched: string[] }> {
    matched.length = 0;
    const before = sink.records.length;
    const response = await app.request(path, { ...init, headers });
    await response.arrayBuffer();
    if (records > 0) await sink.waitForRecords(before + records);
    return { status: response.status, matched: [...matched] };
  }
  return { matchesOf, sink };
}

const deploy = (text: string): RequestInit => ({ method: 'POST', body: JSON.stringify({ note: { text } }) });

describe('a request is matched once, whatever its mode', () => {
  it('translate: a read, a write, and the router’s own 404 and 405 answers', async () => {
    const { matchesOf } = await countingGateway('*=translate');
    expect(await matchesOf(`/v2/fixture_widgets/${appId}.json`)).toEqual({ status: 200, matched: [`/v2/fixture_widgets/${appId}.json`] });
    expect(await matchesOf(`/v2/fixture_widgets/${appId}/notes.json`, deploy('translate-1'))).toEqual({ status: 201, matched: [`/v2/fixture_widgets/${appId}/notes.json`] });
    expect(await matchesOf(`/v2/fixture_widgets/${appId}.csv`)).toEqual({ status: 404, matched: [`/v2/fixture_widgets/${appId}.csv`] });
    expect(await matchesOf(`/v2/fixture_widgets.json`, { method: 'PATCH' })).toEqual({ status: 405, matched: ['/v2/fixture_widgets.json'] });
    expect(await matchesOf('/v2/nothing_here.json')).toEqual({ status: 404, matched: ['/v2/nothing_here.json'] });
  });

  it('passthrough: forwarded without a second match', async () => {
    const { matchesOf, sink } = await countingGateway('');
    expect((await matchesOf('/v2/fixture_gadgets.json?page=1')).matched).toEqual(['/v2/fixture_gadgets.json']);
    expect(sink.usage.at(-1)).toEqual({ route: GADGETS, method: 'GET', mode: 'passthrough' });
  });

  it('compare: a read (its translation side included), a write (its dry run included), and a HEAD served as passthrough', async () => {
    const { matchesOf, sink } = await countingGateway('*=compare');
    expect(await matchesOf('/v2/fixture_widgets.json', {}, 1)).toEqual({ status: 200, matched: ['/v2/fixture_widgets.json'] });
    expect(sink.records.at(-1)).toMatchObject({ mode: 'compare', status: { legacy: 200, translated: 200 } });
    expect(await matchesOf(`/v2/fixture_widgets/${appId}/notes.json`, deploy('compare-1'), 1)).toEqual({ status: 201, matched: [`/v2/fixture_widgets/${appId}/notes.json`] });
    expect(sink.records.at(-1)).toMatchObject({ mode: 'compare', outcome: 'dry_run' });
    expect(await matchesOf('/v2/fixture_widgets.json', { method: 'HEAD' })).toEqual({ status: 200, matched: ['/v2/fixture_widgets.json'] });
  });

  it('candidate: a read, a write (the legacy side recorded), and a 405 answered by the router', async () => {
    const { matchesOf, sink } = await countingGateway('*=candidate');
    expect(await matchesOf(`/v2/fixture_widgets/${appId}.json`, {}, 1)).toEqual({ status: 200, matched: [`/v2/fixture_widgets/${appId}.json`] });
    expect(sink.records.at(-1)).toMatchObject({ mode: 'candidate', status: { legacy: 200, translated: 200 } });
    expect(await matchesOf(`/v2/fixture_widgets/${appId}/notes.json`, deploy('candidate-1'), 1)).toEqual({ status: 201, matched: [`/v2/fixture_widgets/${appId}/notes.json`] });
    expect(sink.records.at(-1)).toMatchObject({ mode: 'candidate', outcome: 'dry_run' });
    expect(await matchesOf('/v2/fixture_widgets.json', { method: 'PATCH' })).toEqual({ status: 405, matched: ['/v2/fixture_widgets.json'] });
  });

  it('explain: the explained request is matched once, and its translation does not match it again', async () => {
    const { matchesOf } = await countingGateway('*=compare');
    // The explain request's own path goes through the routing step (it is no v2 route); the
    // explained one is matched by explain and handed, with its route, to the recorded run.
    const read = new URLSearchParams({ request: '/v2/fixture_widgets.json?filter[name]=a' });
    expect(await matchesOf(`/bridge/explain?${read.toString()}`)).toEqual({ status: 200, matched: ['/bridge/explain', '/v2/fixture_widgets.json'] });
    const write = new URLSearchParams({ request: `/v2/fixture_widgets/${appId}/notes.json`, method: 'POST', body: '{"note":{"text":"v9"}}' });
    expect(await matchesOf(`/bridge/explain?${write.toString()}`)).toEqual({ status: 200, matched: ['/bridge/explain', `/v2/fixture_widgets/${appId}/notes.json`] });
  });
});
