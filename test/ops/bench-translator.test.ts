import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startTarget, type Target } from '../../bench/children.ts';
import { capture, type Capture } from '../../bench/capture.ts';
import { createTranslator } from '../../bench/targets/translator-server.ts';
import type { Scenario } from '../../bench/scenarios.ts';
import type { SandboxApp } from '../../sandbox/model.ts';
import { startNodeFlags } from '../../scripts/start-flags.ts';
import { DEFAULT_BEHAVIOURS } from '../../sandbox/behaviours.ts';

/**
 * Target (t), the floor of a translation, answers what the gateway answers: the bench's own
 * processes (sandbox, canned upstream, gateway on it) on loopback, the bench's capture of a few
 * requests of every distinct scenario, then each request asked of the gateway and of (t), both
 * on the frozen canned upstream: the same status and the same parsed JSON, and the same NerdGraph
 * requests, in order, as the capture recorded for the gateway ((t) reaches the canned upstream
 * through a recorder here), so the floor does the gateway's work, not less. Each scenario's
 * sample includes its first request of an app with more instances than one page of the
 * sandbox's applicationInstancesV2, where the gateway reads later pages (ApplicationInstancesPage).
 */
const APM_APPS = 600;
const SAMPLE = 4;

let sandbox: Target;
let canned: Target;
let gateway: Target;
let translator: Server;
let recorder: Server;
/** The NerdGraph request bodies (t) sent, in order, since the last drainSent(). */
let sentByTranslator: string[] = [];
let translatorBase: string;
let scenarios: Scenario[];
let captured: Capture;

/** The bench sandbox's apps whose instances take more than one page of applicationInstancesV2 (only a reporting app has instances). */
function manyInstanceApps(apps: readonly SandboxApp[]): Set<number> {
  const instances = (app: SandboxApp) => (app.reporting ? app.hosts.reduce((sum, host) => sum + host.instances.length, 0) : 0);
  return new Set(apps.filter((app) => instances(app) > DEFAULT_BEHAVIOURS.instancePageSize).map((app) => app.id));
}

/**
 * The first SAMPLE - 1 requests of a set (consecutive ones: a host's app repeats), its first
 * request of an app with instances on later pages, if any, and its last.
 */
function sampleOf(scenario: Scenario, paged: ReadonlySet<number>): Scenario {
  const paths = scenario.paths ?? [scenario.path];
  const pagedPath = paths.find((path) => paged.has(Number(/^\/v2\/applications\/(\d+)[/.]/.exec(path)?.[1])));
  const sample = [...paths.slice(0, SAMPLE - 1), ...(pagedPath === undefined ? [] : [pagedPath]), paths[paths.length - 1] as string];
  return { ...scenario, paths: [...new Set(sample)] };
}

const operationOf = (body: string): string => /^\s*query\s+([A-Za-z_]\w*)/m.exec((JSON.parse(body) as { query: string }).query)?.[1] ?? '(none)';

/** What (t) sent since the last call, and forget it. */
function drainSent(): string[] {
  const sent = sentByTranslator;
  sentByTranslator = [];
  return sent;
}

beforeAll(async () => {
  // The distinct sets are sized at import from BENCH_SET_SCALE: small enough for this sandbox.
  process.env.BENCH_SET_SCALE = '0.05';
  const { benchApps, buildScenarios } = await import('../../bench/scenarios.ts');
  const paged = manyInstanceApps(benchApps(APM_APPS));
  scenarios = buildScenarios(APM_APPS).distinct.map((scenario) => sampleOf(scenario, paged));
  sandbox = await startTarget('sandbox', { SANDBOX_APM_APPS: String(APM_APPS) });
  canned = await startTarget('canned', { CANNED_RECORD_FROM: `${sandbox.base}/graphql` });
  gateway = await startTarget('gateway', { NERDGRAPH_URL: `${canned.base}/graphql`, NRQL_PER_ACCOUNT_PER_MINUTE: '1000000' }, startNodeFlags());
  captured = await capture(gateway, canned, scenarios);
  await canned.ask('freeze');
  // (t)'s requests pass through this recorder on their way to the canned upstream, unchanged.
  recorder = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      sentByTranslator.push(body);
      void fetch(`${canned.base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': String(req.headers['api-key']) }, body }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
  });
  recorder.listen(0, '127.0.0.1');
  await once(recorder, 'listening');
  translator = createTranslator(`http://127.0.0.1:${(recorder.address() as AddressInfo).port}/graphql`, new Map(Object.entries(captured.calls)));
  translator.listen(0, '127.0.0.1');
  await once(translator, 'listening');
  translatorBase = `http://127.0.0.1:${(translator.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  killAll();
  if (translator) await new Promise((resolve) => translator.close(resolve));
  if (recorder) await new Promise((resolve) => recorder.close(resolve));
});

async function ask(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

describe('bench target (t), the floor of a translation', () => {
  it('the capture keeps every NerdGraph body of a request, in order, less the caller\'s account lookup', () => {
    const operationsOf = (name: string): string[][] => {
      const scenario = scenarios.find((s) => s.name === name) as Scenario;
      return (scenario.paths ?? []).map((path) => (captured.calls[path] ?? []).map((call) => call.operation));
    };
    const list = operationsOf('applications list');
    expect(list).toEqual(Array(list.length).fill(['ApplicationsSearch', 'ApplicationsPageDetails']));
    // A show reads an app's later instance pages after its entity.
    for (const ops of operationsOf('application show')) expect(ops).toEqual(['ApplicationByGuid', ...Array(ops.length - 1).fill('ApplicationInstancesPage')]);
    // A host's app is looked up once in a run of its hosts, as one caller walking the set does.
    const hosts = operationsOf('host metric data');
    expect(hosts[0]).toEqual(['ApplicationHostDirectory', 'ApplicationTopologyMetricData']);
    expect(hosts.filter((ops) => ops.length === 1)).not.toEqual([]);
    for (const ops of hosts) expect(ops.at(-1)).toBe('ApplicationTopologyMetricData');
    // The sample reaches later instance pages, in the hosts list and in a host's directory.
    for (const name of ['application show', 'hosts list', 'host metric data']) expect(operationsOf(name).flat(), name).toContain('ApplicationInstancesPage');
    // The main operation's body is still what (d) sends.
    for (const scenario of scenarios) {
      for (const path of scenario.paths ?? []) {
        expect(captured.table[path]).toBe(captured.calls[path]?.find((call) => call.operation === scenario.mainOperation)?.body);
      }
    }
  });

  it('answers each sampled request of every distinct scenario as the gateway does', async () => {
    const compared: string[] = [];
    for (const scenario of scenarios) {
      for (const path of scenario.paths ?? []) {
        // last_reported_at is the current minute on both sides: ask again if one passed in between.
        let pair: [{ status: number; body: unknown }, { status: number; body: unknown }];
        let sent: string[];
        let minute: number;
        do {
          minute = Math.floor(Date.now() / 60_000);
          const fromGateway = await ask(gateway.base, path, scenario.headers);
          drainSent();
          pair = [fromGateway, await ask(translatorBase, path, scenario.headers)];
          sent = drainSent();
        } while (Math.floor(Date.now() / 60_000) !== minute);
        const [fromGateway, fromTranslator] = pair;
        expect(fromGateway.status, `${scenario.name}: ${path}`).toBe(200);
        expect(fromTranslator.status, `${scenario.name}: ${path.slice(0, 100)}: ${JSON.stringify(fromTranslator.body).slice(0, 300)}`).toBe(fromGateway.status);
        expect(fromTranslator.body, `${scenario.name}: ${path}`).toEqual(fromGateway.body);
        const recorded = captured.calls[path] ?? [];
        expect(sent.map(operationOf), `${scenario.name}: ${path.slice(0, 100)}`).toEqual(recorded.map((call) => call.operation));
        expect(sent, `${scenario.name}: ${path.slice(0, 100)}`).toEqual(recorded.map((call) => call.body));
        compared.push(scenario.name);
      }
    }
    expect(new Set(compared)).toEqual(new Set(['applications list', 'application show', 'metric data', 'hosts list', 'host metric data']));
  }, 60_000);

  it('the canned upstream answers the show a gateway sends again while it keeps the app\'s end-user apdex score', async () => {
    const show = scenarios.find((s) => s.name === 'application show') as Scenario;
    const path = (show.paths ?? [])[1] as string;
    // Another caller than the comparison's: its first show reads the score, its second (within the minute) goes without.
    const headers = { 'X-Api-Key': 'NRAK-SANDBOX-MULTI', 'X-Account-Id': '1000001' };
    // last_reported_at is the current minute's start: both shows must fall in one minute.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_100 - intoMinute));
    const first = await ask(gateway.base, path, headers);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the micro-cache window
    const second = await ask(gateway.base, path, headers);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
  });

  it('answers 404 to a URL it has no recorded calls for', async () => {
    drainSent();
    expect((await ask(translatorBase, '/v2/applications/1.json', { 'X-Api-Key': 'NRAK-SANDBOX-DEMO' })).status).toBe(404);
    expect(drainSent()).toEqual([]);
  });
});
