/**
 * Deployment events (nrql/engine.ts): `FROM Deployment, ChangeTrackingEvent`, one row per
 * deployment marker, read as raw columns or aggregated. The change-tracking schema names the
 * columns; the rows' `user` is the NerdGraph face's view (divergence.ts: deployment-user); only
 * what the ingest lag has let through is read (ingest.ts).
 */
import { nerdgraphDeploymentUser } from '../divergence.ts';
import type { SandboxApp, SandboxData, SandboxDeployment } from '../model.ts';
import { isMobileOwner } from '../timeslices.ts';
import { ingestedDeploymentsOf } from '../writes.ts';
import { appAttribute, holds } from './conditions.ts';
import type { NrqlQuery } from './query.ts';
import type { NrqlOutcome, NrqlScope } from './scope.ts';
import { candidateApps, conjunctsOf } from './series.ts';
import { metadataOf, type TimeRange } from './time-window.ts';
/**
 * Deployment markers as NRDB keeps them: legacy `Deployment` events (REST writes, and the
 * seeded history) and `ChangeTrackingEvent`s (changeTrackingCreateEvent). A query with raw
 * columns over these event types returns one row per event in [SINCE, UNTIL), newest first,
 * at most LIMIT (default 100, MAX 5000), for the apps its top-level WHERE names by appId,
 * appName or entity.guid (as for Metric), in the visible accounts only.
 *
 * Row attributes: `timestamp` (epoch ms) and `entity.guid` on both; `deploymentId` on
 * Deployment rows; `changeTrackingId`, `category` ('Deployment') and `type` on change-tracking
 * rows; `version`, `changelog`, `description`, `user` on both (null when not set). The
 * change-tracking fields the shared model does not keep (type when not Basic, commit, deepLink,
 * shortDescription, groupId) come from recordChangeTrackingDetails. A column a row lacks is
 * null. WHERE may also test appId, appName (legacy Deployment rows only: change-tracking rows
 * have neither) and accountId (the app's). `SELECT *` returns each
 * row's own attributes.
 */
export const DEPLOYMENT_EVENT_TYPES = ['Deployment', 'ChangeTrackingEvent'] as const;
export const DEFAULT_EVENT_LIMIT = 100;

/** Change-tracking event fields writes.ts does not keep, by changeTrackingId. */
export interface ChangeTrackingDetails {
  type?: string;
  commit?: string | null;
  deepLink?: string | null;
  shortDescription?: string | null;
  groupId?: string | null;
}

const detailsByData = new WeakMap<SandboxData, Map<string, ChangeTrackingDetails>>();

/** Remembers what a changeTrackingCreateEvent carried beyond the shared model's fields. */
export function recordChangeTrackingDetails(data: SandboxData, changeTrackingId: string, details: ChangeTrackingDetails): void {
  let map = detailsByData.get(data);
  if (!map) detailsByData.set(data, (map = new Map()));
  map.set(changeTrackingId, details);
}

export interface DeploymentEvent {
  app: SandboxApp;
  attributes: Record<string, string | number | null>;
}

function eventAttributes(data: SandboxData, deployment: SandboxDeployment): Record<string, string | number | null> {
  const common = {
    version: deployment.revision,
    changelog: deployment.changelog,
    description: deployment.description,
    // The NerdGraph face's view of the user (divergence.ts: deployment-user).
    user: nerdgraphDeploymentUser(deployment, data),
    'entity.guid': deployment.entityGuid,
  };
  if (deployment.eventType === 'Deployment') {
    return { timestamp: deployment.timestamp, deploymentId: deployment.changeTrackingId, ...common };
  }
  const details = detailsByData.get(data)?.get(deployment.changeTrackingId) ?? {};
  const extra = Object.fromEntries(
    (['commit', 'deepLink', 'shortDescription', 'groupId'] as const).flatMap((key) => {
      const value = details[key];
      return value === undefined || value === null ? [] : [[key, value]];
    }),
  );
  return {
    timestamp: deployment.timestamp,
    changeTrackingId: deployment.changeTrackingId,
    category: 'Deployment',
    type: details.type ?? 'Basic',
    ...common,
    ...extra,
  };
}

export function eventAttribute(event: DeploymentEvent, attribute: string): unknown {
  if (Object.hasOwn(event.attributes, attribute)) return event.attributes[attribute];
  // ChangeTrackingEvent rows are keyed by entity.guid: NRDB gives them no appId or appName.
  if ((attribute === 'appId' || attribute === 'appName') && Object.hasOwn(event.attributes, 'changeTrackingId')) return null;
  if (attribute === 'appId' || attribute === 'appName' || attribute === 'accountId') return appAttribute(event.app, attribute);
  return null;
}

/**
 * The deployment events of the FROM's event types in [since, until) that meet the WHERE, newest
 * first: for the apps the top-level WHERE names by appId, appName or entity.guid, or else every
 * app of the visible accounts (as NRDB reads an account's events: alerts_events lists the
 * account's deployments). Mobile apps have none.
 */
export function deploymentEvents(query: NrqlQuery, scope: NrqlScope, since: number, until: number): DeploymentEvent[] {
  const types = new Set<string>(query.from.filter((type) => (DEPLOYMENT_EVENT_TYPES as readonly string[]).includes(type)));
  if (types.size === 0) return [];
  const events: DeploymentEvent[] = [];
  const visible = new Set(scope.accountIds);
  const apps = candidateApps(conjunctsOf(query.where), scope).filter((owner): owner is SandboxApp => !isMobileOwner(owner) && visible.has(owner.accountId));
  for (const app of apps) {
    // Only what the ingest lag has let through (ingest.ts).
    for (const deployment of ingestedDeploymentsOf(scope.data, app)) {
      if (!types.has(deployment.eventType) || deployment.timestamp < since || deployment.timestamp >= until) continue;
      const event = { app, attributes: eventAttributes(scope.data, deployment) };
      if (query.where === null || holds(query.where, event, eventAttribute)) events.push(event);
    }
  }
  // Newest first; each app's list is already newest first, and sort is stable.
  events.sort((a, b) => (b.attributes.timestamp as number) - (a.attributes.timestamp as number));
  return events;
}

export function executeEventQuery(query: NrqlQuery, scope: NrqlScope, range: TimeRange): NrqlOutcome {
  const metadata = metadataOf(query, range.since, range.until);
  // Other event types have no events in the sandbox.
  const events = deploymentEvents(query, scope, range.since, range.until);
  const results = events.slice(0, query.limit ?? DEFAULT_EVENT_LIMIT).map((event) => eventRow(query, event));
  return { results, metadata };
}

function eventRow(query: NrqlQuery, event: DeploymentEvent): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const item of query.select) {
    if (item.expression.type === 'wildcard') return { ...event.attributes };
    if (item.expression.type !== 'attribute') continue;
    const value = eventAttribute(event, item.expression.attribute);
    row[item.alias ?? item.expression.attribute] = value === undefined ? null : value;
  }
  return row;
}
