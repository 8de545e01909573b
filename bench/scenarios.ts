/**
 * What `npm run bench` measures: one entry per legacy request shape. Each shape runs twice:
 * distinct (the primary rows, bench/distinct.ts: every request asks another app, host or name
 * set, so the gateway does its real work each time) and cached (one identical request repeated,
 * named "… (cached)": the 1 s micro-cache answers nearly all of it).
 * Add a scenario here and in bench/distinct.ts, and the table, the capture and the hello-world
 * sizes follow.
 */
export interface Scenario {
  name: string;
  /** Path and query string of the legacy REST v2 request (a distinct scenario's first one). */
  path: string;
  /** Distinct scenarios only: the set each run walks, one path per request, in order. */
  paths?: readonly string[];
  /** Distinct scenarios only: what the set varies, for the output. */
  varies?: string;
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
import type { SandboxApp } from '../sandbox/model.ts';
import { syntheticHostId } from '../mappings/common/app-instances.ts';
import { distinctScenarios } from './distinct.ts';

import { DEMO_KEY, RANGE, namesQuery } from './request-parts.ts';

const CACHED = ' (cached)';
const metricNames = namesQuery(['HttpDispatcher', 'Apdex', 'Errors/all', 'WebTransaction/Uri/api/items[id]']);

/** The bench sandbox's primary-account apps (deterministic: seed 42, as the sandbox target builds it). */
export function benchApps(apmApps: number): SandboxApp[] {
  return generateSandboxData({ seed: 42, apmApps, now: 0 }).apps.filter((a) => a.accountId === 1000001);
}

function cachedScenarios(apps: readonly SandboxApp[]): Scenario[] {
  // The first app to show, and the first reporting one (whose metrics have recent data) for metric data.
  const showId = apps[0]?.id;
  const metricsApp = apps.find((a) => a.reporting);
  const metricsAppId = metricsApp?.id;
  // A reporting app's first host: it has current instances, so its host id resolves. Each side
  // names it its own way: the gateway by its derived id (app and host name), the
  // sandbox's legacy face, like v2 itself, by its own row id; neither knows the other's.
  const firstHost = metricsApp?.hosts[0];
  const hostId = metricsApp && firstHost ? syntheticHostId(metricsApp.id, firstHost.name) : undefined;
  const headers = { 'X-Api-Key': DEMO_KEY };
  return [
    // 200 applications per answer; concurrent identical requests share one NerdGraph call.
    { name: `applications list${CACHED}`, path: '/v2/applications.json', headers, mainOperation: 'ApplicationsSearch' },
    // One application: its GUID is computed, then one entity(guid) call per request.
    { name: `application show${CACHED}`, path: `/v2/applications/${showId}.json`, headers, mainOperation: 'ApplicationByGuid' },
    // 4 metrics x all their values x 30 timeslices: one NRQL-bearing NerdGraph call per request.
    { name: `metric data${CACHED}`, path: `/v2/applications/${metricsAppId}/metrics/data.json?${RANGE}&${metricNames}`, headers, mainOperation: 'ApplicationMetricData' },
    // The app's hosts with their 10-minute summaries: the app's instances and one NRQL query
    // faceted by host, in one NerdGraph call per request.
    { name: `hosts list${CACHED}`, path: `/v2/applications/${metricsAppId}/hosts.json`, headers, mainOperation: 'ApplicationTopology' },
    // The same 4 metrics under one host: the host name from the host directory (cached), then
    // one NRQL-bearing call scoped by appId and host.
    // The legacy-facing targets ask by the legacy face's own host id; so (g)'s translation, off the
    // caller's path, answers that id 404 (v2's host ids are not recoverable from NerdGraph).
    {
      name: `host metric data${CACHED}`,
      path: `/v2/applications/${metricsAppId}/hosts/${hostId}/metrics/data.json?${RANGE}&${metricNames}`,
      legacyPath: `/v2/applications/${metricsAppId}/hosts/${firstHost?.id}/metrics/data.json?${RANGE}&${metricNames}`,
      headers,
      mainOperation: 'ApplicationTopologyMetricData',
    },
  ];
}

export interface ScenarioSets {
  /** The primary rows, on (a), (b) and (d). */
  distinct: Scenario[];
  /** The repeated-request rows, on every target. */
  cached: Scenario[];
}

export function buildScenarios(apmApps: number): ScenarioSets {
  const apps = benchApps(apmApps);
  return { distinct: distinctScenarios(apps), cached: cachedScenarios(apps) };
}
