/**
 * The world's APM applications (data.ts): names (the first few of every account hand-picked
 * shapes, so name filters, quoting and account scoping are exercised by every seed), settings,
 * summaries, browser traffic, hosts and instances; and the fleet app, whose host and instance
 * lists fill several v2 pages (drawn from a stream of its own).
 */
import { entityGuid } from '../ids.ts';
import type { AlertSeverity, SandboxApmSummary, SandboxApp, SandboxBrowserSummary, SandboxHost } from '../model.ts';
import { PRIMARY_ACCOUNT } from './accounts.ts';
import {
  ADJECTIVES,
  APDEX_TARGETS,
  BROWSER_APDEX_TARGETS,
  COMPONENTS,
  DAY_MS,
  LANGUAGES,
  NOUNS,
  PORTS,
  TEAMS,
  createRandom,
  intBetween,
  pick,
  round,
  shuffled,
  type Random,
} from './draws.ts';
/** Mixed into the seed so the fleet app's hosts draw from their own stream (see addFleetHosts). */
const FLEET_STREAM = 0x0f1e_e7a5;
/** Extra hosts of the fleet app, one instance each: with its own hosts, more than 2 pages of 200. */
export const FLEET_EXTRA_HOSTS = 450;
/** Fleet instance ids, apart from the other instances (300,000,000+). */
const FIRST_FLEET_INSTANCE_ID = 350_000_000;
/** Fleet app: the first reporting app of the primary account from this index on (the bulk-metrics app is at 3 or later). */
const FLEET_APP_INDEX = 6;

/**
 * The app whose host and instance lists fill several v2 pages: the first reporting app of the
 * primary account from its FLEET_APP_INDEX-th app on, or undefined in a smaller world.
 */
export function fleetApp(apps: readonly SandboxApp[]): SandboxApp | undefined {
  return apps.filter((app) => app.accountId === PRIMARY_ACCOUNT.id).slice(FLEET_APP_INDEX).find((app) => app.reporting);
}

/**
 * Gives the fleet app `extraHosts` (default FLEET_EXTRA_HOSTS) more hosts, from a random stream of their own drawn
 * after every app exists, so no other app (nor any other value of this one) changes.
 */
export function addFleetHosts(seed: number, apps: readonly SandboxApp[], extraHosts: number = FLEET_EXTRA_HOSTS): void {
  const app = fleetApp(apps);
  if (!app) return;
  const random = createRandom((seed ^ FLEET_STREAM) >>> 0);
  let instanceId = FIRST_FLEET_INSTANCE_ID;
  // Made after every other host: the world's host sequence goes on from its last id.
  let hostId = Math.max(...apps.flatMap((other) => other.hosts.map((host) => host.id)));
  for (let index = 1; index <= extraHosts; index++) {
    const name = `fleet-${String(index).padStart(3, '0')}.example.internal`;
    const port = pick(random, PORTS);
    instanceId += intBetween(random, 1, 50);
    app.hosts.push({ id: ++hostId, name, instances: [{ id: instanceId, port, instanceName: port > 0 ? `${name}:${port}` : name }] });
  }
}


/**
 * The first few apps of every account get hand-picked name shapes, so that name filters,
 * quoting and account scoping are exercised by every seed; the rest are random.
 * The global sequence number keeps every name unique across the sandbox.
 */
export function appName(random: Random, indexInAccount: number, sequence: number): string {
  switch (indexInAccount) {
    case 0:
      return `Checkout Service ${sequence}`;
    case 1:
      return `${pick(random, TEAMS)}/${pick(random, COMPONENTS)} ${sequence}`;
    case 2:
      return `O'Brien's Batch\\Worker ${sequence}`;
    default:
      // One in eight random names is slash-separated, as real REST fixtures show.
      if (random() < 0.125) return `${pick(random, TEAMS)}/${pick(random, COMPONENTS)} ${sequence}`;
      return `${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} ${sequence}`;
  }
}

export function generateApp(
  random: Random,
  accountId: number,
  id: number,
  name: string,
  counters: { instanceId: number; hostId: number },
  now: number,
): SandboxApp {
  const language = pick(random, LANGUAGES);
  const reporting = random() < 0.8;
  const alertPolicyId = random() < 0.3 ? null : intBetween(random, 100_000, 100_060);
  // Coherent with REST health_status: no policy means "unknown", i.e. NOT_CONFIGURED.
  const alertSeverity: AlertSeverity =
    alertPolicyId === null ? 'NOT_CONFIGURED' : pick(random, ['CRITICAL', 'WARNING', 'NOT_ALERTING', 'NOT_ALERTING'] as const);
  const lastReportingChangeAt = now - intBetween(random, 60_000, 30 * DAY_MS);
  const apdexTarget = pick(random, APDEX_TARGETS);
  const serverSideConfig = random() < 0.5;
  const summary = reporting ? generateSummary(random) : null;
  const browser = random() < 0.4 ? generateBrowser(random) : null;
  const hosts = generateHosts(random, id, counters);
  return {
    accountId,
    id,
    guid: entityGuid(accountId, 'APM', 'APPLICATION', id),
    name,
    language,
    reporting,
    alertSeverity,
    lastReportingChangeAt,
    apdexTarget,
    serverSideConfig,
    summary,
    browser,
    hosts,
    alertPolicyId,
  };
}

function generateSummary(random: Random): SandboxApmSummary {
  const rawThroughput = random() * 5000;
  return {
    responseTimeMs: round(1 + random() * 899, 2),
    // Real summaries show both whole and fractional rpm values.
    throughput: random() < 0.5 ? Math.round(rawThroughput) : round(rawThroughput, 1),
    errorRate: round(random() * 5, 2),
    apdexScore: round(random(), 2),
  };
}

function generateBrowser(random: Random): SandboxBrowserSummary {
  return {
    pageLoadTimeSeconds: round(0.3 + random() * 7.7, 2),
    pageLoadThroughput: round(random() * 2000, 2),
    apdexTarget: pick(random, BROWSER_APDEX_TARGETS),
    apdexScore: round(random(), 2),
    ajaxRequestThroughput: round(random() * 3000, 2),
    ajaxResponseTimeSeconds: round(0.05 + random() * 2.95, 2),
    jsErrorRate: round(random() * 5, 2),
  };
}

function generateHosts(random: Random, appId: number, counters: { instanceId: number; hostId: number }): SandboxHost[] {
  const hostCount = intBetween(random, 1, 4);
  const names = new Set<string>();
  while (names.size < hostCount) names.add(hostName(random));
  return [...names].map((name) => {
    // Distinct ports per host keep "<host>:<port>" instance names unique within the app.
    const ports = shuffled(random, PORTS).slice(0, intBetween(random, 1, 3));
    return {
      id: ++counters.hostId,
      name,
      instances: ports.map((port) => {
        counters.instanceId += intBetween(random, 1, 50);
        return { id: counters.instanceId, port, instanceName: port > 0 ? `${name}:${port}` : name };
      }),
    };
  });
}

function hostName(random: Random): string {
  if (random() < 0.5) {
    return `ip-10-${intBetween(random, 0, 3)}-${intBetween(random, 0, 15)}-${intBetween(random, 2, 254)}`;
  }
  const role = pick(random, ['web', 'worker', 'api', 'batch'] as const);
  return `${role}-${String(intBetween(random, 1, 40)).padStart(2, '0')}.example.internal`;
}
