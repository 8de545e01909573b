import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox, type SandboxBehaviours } from '../../sandbox/server.ts';
import { probeMain } from '../../scripts/probe.ts';
import { buildGateway } from '../../src/gateway.ts';
import { loadConfig } from '../../src/ops/config.ts';
import { createLogger } from '../../src/ops/logger.ts';
import { LEGACY_PROBES, judgeLegacyProbe } from '../../src/probe/legacy-probes.ts';
import { PROBES } from '../../src/probe/probes.ts';
import { ProbeReport, type Verdict } from '../../src/probe/report.ts';
import { readRoutes } from '../../src/probe/routes.ts';
import { probeDocuments, runProbe } from '../../src/probe/run.ts';
import { V2_PROBES } from '../../src/probe/v2-probes.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway } from '../support/harness.ts';

/**
 * `npm run probe` against the embedded sandbox both ways: with the sandbox's facts as they are
 * (every probe confirms) and with each fact switched off (sandbox/behaviours.ts: every probe
 * refutes). Small worlds (20 apps) on a fixed clock.
 */
const now = (): number => FIXED_NOW;
const NERDGRAPH_NAMES = PROBES.map((probe) => probe.name);
const ALL_NAMES = [...NERDGRAPH_NAMES, ...V2_PROBES.map((probe) => probe.name), ...LEGACY_PROBES.map((probe) => probe.name)];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function probeSandbox(
  behave: Partial<SandboxBehaviours>,
  options: { apmApps?: number; legacy?: boolean; diverge?: ['app-names']; only?: (template: string) => boolean } = {},
) {
  const sandbox = createSandbox({ apmApps: options.apmApps ?? 20, now, behave, ...(options.diverge && { diverge: options.diverge }) });
  const server = await sandbox.listen(0, '127.0.0.1');
  cleanups.push(() => server.close());
  const nerdgraphUrl = `${server.url}/graphql`;
  let legacy;
  if (options.legacy) {
    const gateway = await createTestGateway({ nerdgraphUrl, now });
    legacy = {
      url: server.url,
      mappings: await loadMappings(),
      translate: async (path: string, headers: Record<string, string>) => gateway.app.request(path, { headers }),
      ...(options.only && { only: options.only }),
    };
  }
  const report = await runProbe({ nerdgraphUrl, apiKey: DEMO_KEY, accountId: PRIMARY_ACCOUNT, now, ...(legacy && { legacy }) });
  return { report, sandbox };
}

const verdicts = (report: ProbeReport): Record<string, Verdict> => Object.fromEntries(report.probes.map((probe) => [probe.name, probe.verdict]));

describe('npm run probe against the sandbox', () => {
  it('confirms every probe where the sandbox holds the facts (its default: mobile rows by entityGuid only), compares every read route (but alerts_events), and writes nothing', async () => {
    // alerts_events reads 30 days of events on the legacy face (seconds): left out to keep this fast.
    const slow = '/v2/alerts_events.{format}';
    const { report, sandbox } = await probeSandbox({}, { legacy: true, only: (template) => template !== slow });
    // The sandbox's mobile rows carry entityGuid only (behaviours.ts, the evidence), so the
    // entity.guid spelling's probe refutes; the gateway asks for both spellings either way.
    // The sandbox serves a POST to a list route as its GET, as the gateway does (behaviours.ts
    // legacyPostServesRead; test/ops/probe-v2.test.ts refutes it with the switch off).
    // The generated world holds no CUSTOM policy (only NerdGraph writes one, and this run writes
    // nothing), so policy-custom-preference-on-v2 has nothing to compare (probe-v2.test.ts makes one).
    expect(verdicts(report)).toEqual({
      ...Object.fromEntries(ALL_NAMES.map((name) => [name, 'confirmed'])),
      'mobile-rows-carry-entity-guid': 'refuted',
      'policy-custom-preference-on-v2': 'unknown',
    });
    for (const probe of report.probes) expect(probe.evidence).toMatch(/\d/);
    // Every read route sampled against the legacy face; the applications are alike.
    const routes = report.legacy?.routes ?? [];
    const expected = readRoutes(await loadMappings()).map((mapping) => mapping.route).filter((route) => route !== slow);
    expect(routes.map((route) => route.route).sort()).toEqual(expected.sort());
    expect(expected.length).toBeGreaterThan(20);
    expect(routes.filter((route) => route.result === 'skipped')).toEqual([]);
    // v2's host ids were New Relic's own, the gateway's are derived from app and host name: the
    // independent sandbox's ids differ there, a documented gap (by path) the comparison discounts.
    expect(routes.find((route) => route.route === '/v2/applications.{format}')?.result).toBe('agree');
    // The NRQL condition list needs a policy: sampled with one that has conditions, it is compared.
    expect(routes.find((route) => route.route === '/v2/alerts_nrql_conditions.{format}')).toMatchObject({ result: 'agree', status: { legacy: 200, translated: 200 } });
    expect(routes.filter((route) => route.result === 'unknown')).toEqual([]);
    // A host is asked of each side by its own id (matched by name): alike but for the id, a gap.
    expect(routes.find((route) => route.route === '/v2/applications/{id}/hosts/{host_id}.{format}')?.result).toBe('agree');
    expect(routes.find((route) => route.route === '/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}')?.result).toBe('agree');
    expect(routes.find((route) => route.route === '/v2/applications/{id}/metrics/data.{format}')?.result).toBe('agree');
    // Read-only: neither face executed a write; the key is nowhere in the report.
    expect(sandbox.writes().total).toBe(0);
    expect(JSON.stringify(report)).not.toContain(DEMO_KEY);
    expect(ProbeReport.parse(report)).toEqual(report);
  });

  it('refutes every probe where the sandbox is told the fact does not hold', async () => {
    const off = await probeSandbox({
      errorRateScale: 'fraction',
      keyTransactionRowsCarryEntityGuid: false,
      instanceIdIsRealAgentId: false,
      metricHostIsInstanceHost: false,
      browserAppCarriesApmAppId: false,
      mobileGuidAttribute: 'entity.guid',
    });
    expect(verdicts(off.report)).toMatchObject({
      'apm-error-rate-is-percent': 'refuted',
      'key-transaction-rows-carry-entity-guid': 'refuted',
      'instance-id-is-real-agent-id': 'refuted',
      'metric-host-is-instance-host': 'refuted',
      'browser-app-carries-apm-app-id': 'refuted',
      'mobile-rows-carry-entityGuid': 'refuted',
      'mobile-rows-carry-entity-guid': 'confirmed',
    });
    const byEntityGuidOnly = await probeSandbox({ mobileGuidAttribute: 'entityGuid' });
    expect(verdicts(byEntityGuidOnly.report)).toMatchObject({ 'mobile-rows-carry-entityGuid': 'confirmed', 'mobile-rows-carry-entity-guid': 'refuted' });
    const evidence = Object.fromEntries(off.report.probes.map((probe) => [probe.name, probe.evidence]));
    expect(evidence['browser-app-carries-apm-app-id']).toMatch(/applicationId \d+ serves APM app \d+/);
    expect(evidence['instance-id-is-real-agent-id']).toMatch(/details\.id \d+.*realAgentId \d+/);
  });

  it('refutes what only v2 can settle where the translation then differs from the legacy face', async () => {
    const { report } = await probeSandbox(
      { errorRateScale: 'fraction', instanceIdIsRealAgentId: false },
      { legacy: true, only: (template) => template === '/v2/applications.{format}' || template === '/v2/applications/{id}/instances.{format}' },
    );
    expect(verdicts(report)).toMatchObject({ 'v2-error-rate-is-apm-summary-error-rate': 'refuted', 'v2-instance-ids-are-agent-ids': 'refuted' });
    expect(report.probes.find((probe) => probe.name === 'v2-error-rate-is-apm-summary-error-rate')?.evidence).toContain('applications[].application_summary.error_rate');
  });

  it('judges each legacy-settled probe from its route: refuted at its fields, confirmed elsewhere, unknown without a legacy API', () => {
    for (const probe of LEGACY_PROBES) {
      const field = (probe.patterns[0] as string).replace(/\*$/, '');
      const route = { route: probe.route, request: probe.route.replace('{format}', 'json'), status: { legacy: 200, translated: 200 } };
      const refuted = { url: 'http://legacy', unavailable: null, routes: [{ ...route, result: 'disagree' as const, outcome: 'mismatch', differing: ['(link).last', field] }] };
      const elsewhere = { url: 'http://legacy', unavailable: null, routes: [{ ...route, result: 'disagree' as const, outcome: 'mismatch', differing: ['(link).last'] }] };
      expect(judgeLegacyProbe(probe, refuted).verdict, probe.name).toBe('refuted');
      expect(judgeLegacyProbe(probe, elsewhere).verdict, probe.name).toBe('confirmed');
      expect(judgeLegacyProbe(probe, null).verdict, probe.name).toBe('unknown');
      expect(judgeLegacyProbe(probe, { url: 'http://legacy', unavailable: 'GET /v2/applications.json answered 410', routes: [] }).verdict, probe.name).toBe('unknown');
    }
  });

  it('answers unknown, not a failure, when the account has nothing to tell by', async () => {
    const { report } = await probeSandbox({}, { apmApps: 0 });
    expect(verdicts(report)).toMatchObject({
      'apm-error-rate-is-percent': 'unknown',
      'key-transaction-rows-carry-entity-guid': 'unknown',
      'instance-id-is-real-agent-id': 'unknown',
      'metric-host-is-instance-host': 'unknown',
      'browser-app-carries-apm-app-id': 'unknown',
    });
  });

  it('reports a route the translation answers differently as a disagreement, naming the field', async () => {
    const { report } = await probeSandbox({}, { legacy: true, diverge: ['app-names'], only: (template) => template === '/v2/applications.{format}' });
    const list = report.legacy?.routes.find((route) => route.route === '/v2/applications.{format}');
    expect(list?.result).toBe('disagree');
    expect(list?.differing).toContain('applications[].name');
  });

  it('answers unknown with a key-free reason when NerdGraph cannot be reached', async () => {
    const key = 'NRAK-PROBE-UNREACHABLE-0123456789';
    const report = await runProbe({ nerdgraphUrl: 'http://127.0.0.1:1/graphql', apiKey: key, accountId: PRIMARY_ACCOUNT, now, timeoutMs: 2_000 });
    expect(new Set(report.probes.map((probe) => probe.verdict))).toEqual(new Set(['unknown']));
    expect(report.probes[0]?.evidence).toMatch(/could not read/);
    expect(JSON.stringify(report)).not.toContain(key);
  });

  it('is read-only by construction: it knows only its own documents, all queries', () => {
    const documents = probeDocuments();
    expect([...documents.keys()].sort()).toEqual([
      'ProbeAlertPolicies',
      'ProbeApplicationInstances',
      'ProbeBrowserLoaders',
      'ProbeConditionEntity',
      'ProbeEntities',
      'ProbeKeyTransactions',
      'ProbeNrql',
      'ProbeNrqlCondition',
    ]);
    for (const document of documents.values()) expect(document.kind).toBe('query');
  });
});

describe('npm run probe (the command) and /bridge/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-probe-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one line per probe, writes the JSON report, and /bridge/ shows it', async () => {
    const path = join(dir, 'report.json');
    const env = { SANDBOX_APM_APPS: '20', PROBE_REPORT_PATH: path };
    let out = '';
    let err = '';
    const { code } = await probeMain({ env, argv: ['--no-legacy'], out: (text) => void (out += text), err: (text) => void (err += text) });
    expect(err).toBe('');
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    for (const name of ALL_NAMES) expect(lines.filter((line) => new RegExp(`^(confirmed|refuted|unknown) +${name}: `).test(line))).toHaveLength(1);
    expect(out).not.toContain(DEMO_KEY);
    const written = ProbeReport.parse(JSON.parse(readFileSync(path, 'utf8')));
    expect(written.probes.map((probe) => probe.name)).toEqual(ALL_NAMES);
    // Without a legacy API, what only v2 can settle stays unknown.
    for (const probe of LEGACY_PROBES) expect(written.probes.find((p) => p.name === probe.name)?.verdict).toBe('unknown');
    expect(written.legacy).toBeNull();

    const gateway = await buildGateway(loadConfig(env), { logger: createLogger('silent') });
    try {
      const page = await (await gateway.app.request('/bridge/')).text();
      for (const probe of written.probes) expect(page).toContain(`data-probe="${probe.name}" data-verdict="${probe.verdict}"`);
    } finally {
      await gateway.close();
    }
  });

  it('refuses to probe a real NerdGraph without a key and an account, naming what is missing', async () => {
    let err = '';
    const { code } = await probeMain({ env: { NEW_RELIC_REGION: 'us' }, argv: [], out: () => undefined, err: (text) => void (err += text) });
    expect(code).toBe(2);
    expect(err).toContain('NEW_RELIC_API_KEY');
  });
});
