import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startTarget, type Target } from '../../bench/children.ts';
import { capture, type Capture } from '../../bench/capture.ts';
import { createTranslator } from '../../bench/targets/translator-server.ts';
import type { Scenario } from '../../bench/scenarios.ts';
import { startNodeFlags } from '../../scripts/start-flags.ts';

/**
 * Target (t), the floor of a translation, answers what the gateway answers: the bench's own
 * processes (sandbox, canned upstream, gateway on it) on loopback, the bench's capture of a few
 * requests of every distinct scenario, then each request asked of the gateway and of (t), both
 * on the frozen canned upstream: the same status and the same parsed JSON, so the floor does the
 * gateway's work, not less.
 */
const APM_APPS = 600;
const SAMPLE = 4;

let sandbox: Target;
let canned: Target;
let gateway: Target;
let translator: Server;
let translatorBase: string;
let scenarios: Scenario[];
let captured: Capture;

/** The first SAMPLE - 1 requests of a set (consecutive ones: a host's app repeats) and its last. */
function sampleOf(scenario: Scenario): Scenario {
  const paths = scenario.paths ?? [scenario.path];
  return { ...scenario, paths: [...paths.slice(0, SAMPLE - 1), paths[paths.length - 1] as string] };
}

beforeAll(async () => {
  // The distinct sets are sized at import from BENCH_SET_SCALE: small enough for this sandbox.
  process.env.BENCH_SET_SCALE = '0.05';
  const { buildScenarios } = await import('../../bench/scenarios.ts');
  scenarios = buildScenarios(APM_APPS).distinct.map(sampleOf);
  sandbox = await startTarget('sandbox', { SANDBOX_APM_APPS: String(APM_APPS) });
  canned = await startTarget('canned', { CANNED_RECORD_FROM: `${sandbox.base}/graphql` });
  gateway = await startTarget('gateway', { NERDGRAPH_URL: `${canned.base}/graphql`, NRQL_PER_ACCOUNT_PER_MINUTE: '1000000' }, startNodeFlags());
  captured = await capture(gateway, canned, scenarios);
  await canned.ask('freeze');
  translator = createTranslator(`${canned.base}/graphql`, new Map(Object.entries(captured.calls)));
  translator.listen(0, '127.0.0.1');
  await once(translator, 'listening');
  translatorBase = `http://127.0.0.1:${(translator.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  killAll();
  if (translator) await new Promise((resolve) => translator.close(resolve));
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
    expect(operationsOf('applications list')).toEqual(Array(SAMPLE).fill(['ApplicationsSearch', 'ApplicationsPageDetails']));
    expect(operationsOf('application show')).toEqual(Array(SAMPLE).fill(['ApplicationByGuid']));
    // A host's app is looked up once in a run of its hosts, as one caller walking the set does.
    const hosts = operationsOf('host metric data');
    expect(hosts[0]).toEqual(['ApplicationHostDirectory', 'ApplicationTopologyMetricData']);
    expect(hosts.filter((ops) => ops.length === 1)).not.toEqual([]);
    for (const ops of hosts) expect(ops.at(-1)).toBe('ApplicationTopologyMetricData');
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
        let minute: number;
        do {
          minute = Math.floor(Date.now() / 60_000);
          pair = [await ask(gateway.base, path, scenario.headers), await ask(translatorBase, path, scenario.headers)];
        } while (Math.floor(Date.now() / 60_000) !== minute);
        const [fromGateway, fromTranslator] = pair;
        expect(fromGateway.status, `${scenario.name}: ${path}`).toBe(200);
        expect(fromTranslator.status, `${scenario.name}: ${path.slice(0, 100)}: ${JSON.stringify(fromTranslator.body).slice(0, 300)}`).toBe(fromGateway.status);
        expect(fromTranslator.body, `${scenario.name}: ${path}`).toEqual(fromGateway.body);
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
    const first = await ask(gateway.base, path, headers);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the micro-cache window
    const second = await ask(gateway.base, path, headers);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body).toEqual(first.body);
  });

  it('answers 404 to a URL it has no recorded calls for', async () => {
    expect((await ask(translatorBase, '/v2/applications/1.json', { 'X-Api-Key': 'NRAK-SANDBOX-DEMO' })).status).toBe(404);
  });
});
