/**
 * What `npm run bench` measures: one entry per legacy request, each run against every target.
 * Add a scenario here and the table, the canned capture and the hello-world sizes follow.
 */
export interface Scenario {
  name: string;
  /** Path and query string of the legacy REST v2 request. */
  path: string;
  headers: Record<string, string>;
  /**
   * The NerdGraph operation that does the scenario's work: the (d) pass-through proxy sends
   * one request of it (the gateway's own recorded body) per incoming request.
   */
  mainOperation: string;
  /**
   * The same request in the legacy REST API's own ids, where they differ from the gateway's
   * (a host: v2's own host id, not the gateway's syntheticHostId): what the legacy-facing
   * targets (e), (f) and (g) are asked, as their callers are legacy clients. Unset: `path`.
   */
  legacyPath?: string;
}

import { generateSandboxData } from '../sandbox/data.ts';
import { syntheticHostId } from '../mappings/shared/app-instances.ts';

const DEMO_KEY = 'NRAK-SANDBOX-DEMO';

// The bench sandbox is deterministic (seed 42), so its apps are stable: the first primary-account
// app to show, and the first reporting one (whose metrics have recent data) for metric data.
const benchApps = generateSandboxData({ seed: 42, apmApps: 500, now: 0 }).apps.filter((a) => a.accountId === 1000001);
const showId = benchApps[0]?.id;
const metricsApp = benchApps.find((a) => a.reporting);
const metricsAppId = metricsApp?.id;
// A reporting app's first host: it has current instances, so its host id resolves. Each side
// names it its own way (issue 20): the gateway by its derived id (app and host name), the
// sandbox's legacy face, like v2 itself, by its own row id; neither knows the other's.
const firstHost = metricsApp?.hosts[0];
const hostId = metricsApp && firstHost ? syntheticHostId(metricsApp.id, firstHost.name) : undefined;
const legacyHostId = firstHost?.id;

// A fixed 30-minute range ending at the minute the bench starts: every request asks for the
// same 30 timeslices, so the canned upstream's recorded rows stay on the grid for the run.
const rangeEnd = Math.floor(Date.now() / 60_000) * 60_000;
const range = `from=${new Date(rangeEnd - 30 * 60_000).toISOString()}&to=${new Date(rangeEnd).toISOString()}`;
const metricNames = ['HttpDispatcher', 'Apdex', 'Errors/all', 'WebTransaction/Uri/api/items[id]'].map((name) => `names[]=${encodeURIComponent(name)}`).join('&');

export const SCENARIOS: readonly Scenario[] = [
  // 200 applications per answer; concurrent identical requests share one NerdGraph call.
  { name: 'applications list', path: '/v2/applications.json', headers: { 'X-Api-Key': DEMO_KEY }, mainOperation: 'ApplicationsSearch' },
  // One application: its GUID is computed, then one entity(guid) call per request.
  { name: 'application show', path: `/v2/applications/${showId}.json`, headers: { 'X-Api-Key': DEMO_KEY }, mainOperation: 'ApplicationByGuid' },
  // 4 metrics x all their values x 30 timeslices: one NRQL-bearing NerdGraph call per request
  // (fewer when concurrent identical requests coalesce).
  { name: 'metric data', path: `/v2/applications/${metricsAppId}/metrics/data.json?${range}&${metricNames}`, headers: { 'X-Api-Key': DEMO_KEY }, mainOperation: 'ApplicationMetricData' },
  // The app's hosts with their 10-minute summaries: the app's instances and one NRQL query
  // faceted by host, in one NerdGraph call per request.
  { name: 'hosts list', path: `/v2/applications/${metricsAppId}/hosts.json`, headers: { 'X-Api-Key': DEMO_KEY }, mainOperation: 'ApplicationTopology' },
  // The same 4 metrics under one host: the host name from the host directory (cached), then
  // one NRQL-bearing call scoped by appId and host.
  // The legacy-facing targets ask by the legacy face's own host id; so (g)'s translation, off the
  // caller's path, answers that id 404 (v2's host ids are not recoverable from NerdGraph).
  {
    name: 'host metric data',
    path: `/v2/applications/${metricsAppId}/hosts/${hostId}/metrics/data.json?${range}&${metricNames}`,
    legacyPath: `/v2/applications/${metricsAppId}/hosts/${legacyHostId}/metrics/data.json?${range}&${metricNames}`,
    headers: { 'X-Api-Key': DEMO_KEY },
    mainOperation: 'ApplicationTopologyMetricData',
  },
];
