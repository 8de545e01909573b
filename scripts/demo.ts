/**
 * `npm run demo`: the gateway in compare mode on the embedded sandbox, whose NerdGraph face is
 * made to diverge from its legacy face in known ways (SANDBOX_DIVERGE, default all) and whose
 * legacy metric data moves in its open minute (SANDBOX_LEGACY_JITTER). It sends a sample of
 * real v2 traffic as a demo key's integrations would (each with its User-Agent), waits for the comparisons, prints the
 * parity report (the same table as `npm run report`) and keeps serving /bridge/ until Ctrl-C
 * (`--once`: print and exit). The report shows the injected divergences and nothing else: the
 * documented gaps as gaps, the moving metric values as noise.
 */
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { buildGateway, type BuiltGateway } from '../src/gateway.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import type { ParityReport } from '../src/compare/parity-store.ts';
import { deploymentsOf } from '../sandbox/writes.ts';
import type { SandboxData } from '../sandbox/model.ts';
import { serveV2 } from '../src/v2/client-error.ts';
import { formatReport } from './report.ts';

export interface DemoOptions {
  port?: number;
  /** Comma-separated sandbox divergences (`all`, or none with ''). */
  diverge?: string;
  env?: Record<string, string | undefined>;
}

export interface RunningDemo {
  url: string;
  gateway: BuiltGateway;
  /** The v2 requests sent (path and query), in order. */
  sent: string[];
  report(): ParityReport;
  close(): Promise<void>;
}

const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

/** The demo traffic: the routes a demo account's dashboards, scripts and exporters call. */
function demoRequests(data: SandboxData, accountId: number): string[] {
  const apps = data.apps.filter((app) => app.accountId === accountId);
  const reporting = apps.filter((app) => app.reporting && app.hosts.length > 0).slice(0, 3);
  const withDeployments = apps.filter((app) => deploymentsOf(data, app).length > 0).slice(0, 3);
  const names = ['HttpDispatcher', 'Apdex', 'Errors/all'].map((name) => `names[]=${encodeURIComponent(name)}`).join('&');
  const paths = [
    '/v2/applications.json',
    '/v2/applications.json?page=2',
    '/v2/applications.json?page=3',
    '/v2/applications.xml',
    ...apps.slice(0, 6).map((app) => `/v2/applications/${app.id}.json`),
    ...reporting.flatMap((app) => [
      `/v2/applications/${app.id}/hosts.json`,
      `/v2/applications/${app.id}/instances.json`,
      `/v2/applications/${app.id}/metrics.json?name=HttpDispatcher`,
      `/v2/applications/${app.id}/metrics/data.json?${names}&summarize=true`,
      `/v2/applications/${app.id}/metrics/data.json?${names}`,
    ]),
    ...withDeployments.map((app) => `/v2/applications/${app.id}/deployments.json`),
    '/v2/mobile_applications.json',
    '/v2/browser_applications.json',
    '/v2/key_transactions.json',
    // Alert policies are compared because a rule names them (below); a condition family NerdGraph
    // cannot serve stays on the legacy API whatever the rules.
    '/v2/alerts_policies.json',
    '/v2/alerts_policies.json?page=2',
    `/v2/alerts_external_service_conditions.json?policy_id=${data.alerts.policies.find((policy) => policy.accountId === accountId)?.id ?? 0}`,
  ];
  return paths;
}

/**
 * Who sends each demo request: the integrations a demo account has (dashboards, an SLA script, a
 * deploy hook, an alerts sync), told apart by User-Agent on the /bridge/ page. One key for all,
 * as is common: the User-Agent is what separates them.
 */
export const DEMO_AGENTS = {
  dashboards: 'Grafana/10.4 newrelic-datasource/4.2',
  slaReport: 'python-requests/2.31 sla-report.py',
  deployHook: 'deploy-notify.sh curl/8.5.0',
  alertsSync: 'terraform-provider-newrelic/3.27',
} as const;

export function demoAgentOf(path: string): string {
  if (path.startsWith('/v2/alerts_')) return DEMO_AGENTS.alertsSync;
  if (path.includes('/deployments')) return DEMO_AGENTS.deployHook;
  if (/\/(hosts|instances|metrics)/.test(path)) return DEMO_AGENTS.slaReport;
  return DEMO_AGENTS.dashboards;
}

/** Waits until every comparison the traffic started has been recorded; says so when some never were. */
async function settled(gateway: BuiltGateway, expected: number, boundMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { outcomes } = gateway.store.report({ recent: 0 }).totals;
    const done = Object.values(outcomes).reduce((sum, n) => sum + n, 0);
    if (done >= expected) return;
    if (Date.now() - started > boundMs) {
      process.stderr.write(`demo: only ${done} of ${expected} comparisons finished within ${boundMs / 1000} s; the report is partial\n`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const env = {
    ...process.env,
    ...options.env,
    // The alert namespaces are passed through unless a rule names them: this one compares the policies too.
    ROUTE_MODES: '*=compare;/v2/alerts_policies*=compare',
    SANDBOX_DIVERGE: options.diverge ?? process.env.SANDBOX_DIVERGE ?? 'all',
    SANDBOX_LEGACY_JITTER: 'true',
    // The demo's own traffic is all there is: compare every request, keep every record.
    COMPARE_SAMPLE_RATE: '1',
    // Nothing else shares the loop with the demo's one-at-a-time traffic: never shed its comparisons.
    COMPARE_MAX_LOOP_UTILISATION: '1',
    NERDGRAPH_URL: '',
    NEW_RELIC_REGION: '',
    LEGACY_REST_URL: '',
    LOG_LEVEL: options.env?.LOG_LEVEL ?? 'silent',
  };
  const config = loadConfig(env);
  // One frozen clock for the gateway and both sandbox faces: a minute turning between the legacy
  // call and the translation would move every metric window and read as a difference.
  const frozen = Date.now();
  const gateway = await buildGateway(config, { logger: createLogger(config.logLevel), now: () => frozen });
  const server = serveV2({ fetch: gateway.app.fetch, port: options.port ?? config.port, hostname: '127.0.0.1' });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const data = gateway.sandbox?.sandbox.data as SandboxData;
  const accountId = data.keys.get(DEMO_KEY)?.[0] as number;
  const sent = demoRequests(data, accountId);
  let compared = 0;
  for (const path of sent) {
    const response = await fetch(`${url}${path}`, { headers: { 'X-Api-Key': DEMO_KEY, 'User-Agent': demoAgentOf(path) } });
    await response.arrayBuffer();
    if (!path.startsWith('/v2/alerts_') || path.startsWith('/v2/alerts_policies')) compared++;
  }
  await settled(gateway, compared);
  return {
    url,
    gateway,
    sent,
    report: () => gateway.store.report(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const once = process.argv.includes('--once');
  const demo = await startDemo({});
  process.stdout.write(`${formatReport(demo.report())}\n`);
  process.stdout.write(`\nsent ${demo.sent.length} v2 requests as ${DEMO_KEY}; divergences: ${process.env.SANDBOX_DIVERGE || 'all'}\n`);
  if (once) {
    await demo.close();
    process.exit(0);
  }
  process.stdout.write(`parity page: ${demo.url}/bridge/   (JSON: ${demo.url}/bridge/parity.json; Ctrl-C to stop)\n`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void demo.close().then(() => process.exit(0)));
}
