import type { JsonValue } from '../../src/v2/xml.ts';
import { allIssuesOf } from '../../sandbox/ai-issues.ts';
import { legacyAlertId } from '../../sandbox/legacy/ai-issues.ts';
import type { SandboxData } from '../../sandbox/model.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import { deploymentV2Id } from '../../mappings/common/deployment-id.ts';
import { alertV2Id } from '../../mappings/alerts-issues/alert-id.ts';
import { syntheticHostId } from '../../mappings/common/app-instances.ts';
/**
 * Ids that each side makes up on its own: the gateway derives v2 ids from
 * NerdGraph's (host, deployment, channel and alert ids: each scheme in its resource package, on src/v2/ids.ts derivedV2Id), the sandbox's legacy
 * face hands out its own row ids, as New Relic's database did. The two never agree, so the
 * differential tests compare records, not ids: a request names a record by a token
 * (`{{kind:key}}`, the key being what both sides share: a NerdGraph id, a host name, a
 * revision), each side's path gets that side's id for it, and each side's answer has its ids
 * at known paths put back to `kind:key` before the answers are compared. This is the one place
 * that normalisation lives.
 */
export type IdKind = 'host' | 'deployment' | 'channel' | 'alert';

/** One side's ids: the id of a record's key, and the key of an id (undefined: unknown here). */
export interface SideIds {
  idOf(kind: IdKind, key: string): number | undefined;
  keyOf(kind: IdKind, id: number): string | undefined;
}

/** The token a corpus writes where a record's id goes. */
export const idToken = (kind: IdKind, key: string): string => `{{${kind}:${key}}}`;

const TOKEN = /\{\{(host|deployment|channel|alert):([^}]*)\}\}/g;

/** A path (or body) with every token replaced by this side's id; a record the side does not know gets an id no record has. */
export function resolveTokens(text: string, side: SideIds): string {
  return text.replace(TOKEN, (_all, kind: IdKind, key: string) => String(side.idOf(kind, decodeURIComponent(key)) ?? 999_999_999_999));
}

/** Text (a Link header) with the ids this side gave the request's tokens put back to the tokens. */
export function unresolveTokens(text: string | null, request: string, side: SideIds): string | null {
  if (text === null) return null;
  let out = text;
  for (const [token, kind, key] of request.matchAll(TOKEN)) {
    const id = side.idOf(kind as IdKind, decodeURIComponent(key as string));
    if (id !== undefined) out = out.replace(new RegExp(`\\b${id}\\b`, 'g'), token);
  }
  return out;
}

/** Where ids stand in an answer: `channels[].id`, `policy.channel_ids[]`, `links.application_hosts[]`. */
export interface IdPath {
  path: string;
  kind: IdKind;
}

function rewrite(value: JsonValue, steps: readonly string[], kind: IdKind, side: SideIds): JsonValue {
  const [step, ...rest] = steps;
  if (step === undefined) {
    if (typeof value === 'number') return `${kind}:${side.keyOf(kind, value) ?? `unknown ${value}`}`;
    if (Array.isArray(value)) return value.map((item) => rewrite(item, [], kind, side));
    return value;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const many = step.endsWith('[]');
  const key = many ? step.slice(0, -2) : step;
  if (!Object.hasOwn(value, key)) return value;
  const child = value[key] as JsonValue;
  const next = many && Array.isArray(child) ? child.map((item) => rewrite(item, rest, kind, side)) : rewrite(child, rest, kind, side);
  return { ...value, [key]: next };
}

/** The answer with the ids at `paths` replaced by `kind:key`, so the two sides' answers compare. */
export function normaliseIds(body: JsonValue, paths: readonly IdPath[], side: SideIds): JsonValue {
  return paths.reduce((current, { path, kind }) => rewrite(current, path.split('.'), kind, side), body);
}

/**
 * A side's ids from lookups that see the current world: every id seen is remembered, so a
 * record deleted since still reads back by its id.
 */
export function rememberingSide(lookup: { [K in IdKind]?: () => Iterable<readonly [key: string, id: number]> }): SideIds {
  const byKey = new Map<string, number>();
  const byId = new Map<string, string>();
  const refresh = (kind: IdKind): void => {
    for (const [key, id] of lookup[kind]?.() ?? []) {
      byKey.set(`${kind}|${key}`, id);
      byId.set(`${kind}|${id}`, key);
    }
  };
  return {
    idOf(kind, key) {
      if (!byKey.has(`${kind}|${key}`)) refresh(kind);
      return byKey.get(`${kind}|${key}`);
    },
    keyOf(kind, id) {
      if (!byId.has(`${kind}|${id}`)) refresh(kind);
      return byId.get(`${kind}|${id}`);
    },
  };
}

// ---- The sandbox's worlds: each side's ids of hosts, deployments and alerts.


/** The key of a host both sides share: its app and name. */
export const hostKey = (appId: number, hostName: string): string => `${appId}|${hostName}`;

/** Where host, deployment and alert ids stand in v2 answers. */
export const TOPOLOGY_ID_PATHS: readonly IdPath[] = [
  { path: 'applications[].links.application_hosts[]', kind: 'host' },
  { path: 'application.links.application_hosts[]', kind: 'host' },
  { path: 'application_hosts[].id', kind: 'host' },
  { path: 'application_host.id', kind: 'host' },
  { path: 'application_instances[].links.application_host', kind: 'host' },
  { path: 'application_instance.links.application_host', kind: 'host' },
  { path: 'deployments[].id', kind: 'deployment' },
  { path: 'deployment.id', kind: 'deployment' },
  { path: 'incidents[].id', kind: 'alert' },
  { path: 'incidents[].links.violations[]', kind: 'alert' },
  { path: 'incident.id', kind: 'alert' },
  { path: 'incident.links.violations[]', kind: 'alert' },
  { path: 'violations[].id', kind: 'alert' },
  { path: 'recent_events[].id', kind: 'alert' },
  { path: 'recent_events[].incident_id', kind: 'alert' },
];

/** Every alert key of a world at `now` (issues, incidents, their open and close events) and every deployment's. */
function alertKeys(data: SandboxData, now: number): Array<[string, (id: (key: string) => number) => number]> {
  const keys: Array<[string, (id: (key: string) => number) => number]> = [];
  for (const account of data.accounts) {
    for (const issue of allIssuesOf(data, account.id, now)) {
      keys.push([issue.issueId, (id) => id(issue.issueId)]);
      for (const incident of issue.incidents) {
        for (const key of [incident.incidentId, `${incident.incidentId}|open`, `${incident.incidentId}|close`]) keys.push([key, (id) => id(key)]);
      }
    }
  }
  return keys;
}

/**
 * Each side's ids over the sandbox's worlds: the gateway's as it derives them (mappings/common/deployment-id.ts, app-instances.ts, alerts-channels/channel-config.ts, ...),
 * the legacy face's its own (the model's host and deployment ids, its alert row ids). `now`
 * bounds the alert history enumerated.
 */
export function worldSides(gatewayData: SandboxData, legacyData: SandboxData, now: () => number): { gateway: SideIds; legacy: SideIds } {
  const hosts = (data: SandboxData, idOf: (appId: number, host: { id: number; name: string }) => number) => () =>
    data.apps.flatMap((app) => app.hosts.map((host) => [hostKey(app.id, host.name), idOf(app.id, host)] as const));
  const deployments = (data: SandboxData, idOf: (d: { id: number; changeTrackingId: string }) => number) => () =>
    data.apps.flatMap((app) => deploymentsOf(data, app).map((d) => [d.changeTrackingId, idOf(d)] as const));
  const alerts = (data: SandboxData, alertId: (key: string) => number, deploymentId: (d: { id: number; changeTrackingId: string }) => number) => () => [
    ...alertKeys(data, now()).map(([key, id]) => [key, id(alertId)] as const),
    ...deployments(data, deploymentId)().map(([key, id]) => [`deployment|${key}`, id] as const),
  ];
  const gatewayDeployment = (d: { changeTrackingId: string }) => deploymentV2Id(d.changeTrackingId);
  const legacyDeployment = (d: { id: number }) => d.id;
  return {
    gateway: rememberingSide({
      host: hosts(gatewayData, (appId, host) => syntheticHostId(appId, host.name)),
      deployment: deployments(gatewayData, gatewayDeployment),
      alert: alerts(gatewayData, alertV2Id, gatewayDeployment),
    }),
    legacy: rememberingSide({
      host: hosts(legacyData, (_appId, host) => host.id),
      deployment: deployments(legacyData, legacyDeployment),
      alert: alerts(legacyData, legacyAlertId, legacyDeployment),
    }),
  };
}
