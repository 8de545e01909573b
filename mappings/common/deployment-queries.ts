import { nrqlLiteral, sinceUntil } from '../../src/mapping-api.ts';

/**
 * The NRQL of the deployment routes (applications.deployments, deployments.v0, alerts_events'
 * DEPLOYMENT events): markers on legacy Deployment events and change-tracking events.
 */

/** The attributes a deployment marker carries, on legacy Deployment and ChangeTrackingEvent rows. */
export const DEPLOYMENT_ATTRIBUTES = ['timestamp', 'changeTrackingId', 'deploymentId', 'version', 'changelog', 'description', 'user'] as const;

/**
 * An entity's deployment markers in [since, until), newest first: legacy `Deployment` events
 * (no category) and change-tracking events of the Deployment category.
 */
export function deploymentEventsQuery(options: { entityGuid: string; since: number; until: number; limit: number | 'MAX' }): string {
  const limit = options.limit === 'MAX' ? 'MAX' : String(Math.trunc(options.limit));
  return [
    `SELECT ${DEPLOYMENT_ATTRIBUTES.join(', ')} FROM Deployment, ChangeTrackingEvent`,
    `WHERE entity.guid = ${nrqlLiteral(options.entityGuid)} AND (category = 'Deployment' OR category IS NULL)`,
    `${sinceUntil(options.since, options.until)} LIMIT ${limit}`,
  ].join(' ');
}

/** Columns of an account's deployment markers (alerts_events' DEPLOYMENT events). */
export const ACCOUNT_DEPLOYMENT_ATTRIBUTES = ['timestamp', 'changeTrackingId', 'deploymentId', 'version', 'description', 'appId', 'entity.guid'] as const;

/** Every deployment marker of the account in [since, until), newest first (alerts_events). */
export function accountDeploymentEventsQuery(options: { since: number; until: number }): string {
  return [
    `SELECT ${ACCOUNT_DEPLOYMENT_ATTRIBUTES.join(', ')} FROM Deployment, ChangeTrackingEvent`,
    `WHERE category = 'Deployment' OR category IS NULL`,
    `${sinceUntil(options.since, options.until)} LIMIT MAX`,
  ].join(' ');
}
