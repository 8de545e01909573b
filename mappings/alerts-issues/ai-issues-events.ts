import type { V2Body } from '../../src/mapping-api.ts';
import { LIST_WINDOW_MS } from './ai-issues.ts';
import { ALERT_EVENT_ENTITY_TYPES, ALERT_EVENT_PRODUCTS, ALERT_EVENT_TYPES } from '../../facts/v2-values.ts';

/**
 * alerts_events' window and filters (routes-next.md §5.3): violation opens and closes from
 * incidents, deployments from change tracking. The events themselves are made in ai-issues-v2.ts.
 */

/** How far back alerts_events reaches (v2's "recent events"; its own span is unconfirmed). */
export const EVENTS_WINDOW_MS = LIST_WINDOW_MS;

/** v2's filter values (facts/v2-values.ts). */
export const EVENT_PRODUCTS = ALERT_EVENT_PRODUCTS;
export const EVENT_ENTITY_TYPES = ALERT_EVENT_ENTITY_TYPES;
export const EVENT_TYPES = ALERT_EVENT_TYPES;

export interface EventFilters {
  product?: string;
  entityType?: string;
  entityGroupId?: number;
  entityId?: number;
  eventType?: string;
  incidentId?: number;
}

// The filters' parameters: mappings/alerts-issues/alert-params.ts (eventFilters).

/** Whether an event of `type` can pass the filters at all (so its source need not be read). */
export function mayShow(filters: EventFilters, type: 'DEPLOYMENT' | 'VIOLATION_OPEN' | 'VIOLATION_CLOSE'): boolean {
  if (filters.eventType !== undefined && filters.eventType !== type && !(filters.eventType === 'VIOLATION' && type !== 'DEPLOYMENT')) return false;
  if (type === 'DEPLOYMENT') {
    return (filters.product === undefined || filters.product === 'APM') && (filters.entityType === undefined || filters.entityType === 'Application') && filters.incidentId === undefined;
  }
  return true;
}

/** The filters an event (a v2 object) passes. */
export function eventShown(filters: EventFilters, event: V2Body): boolean {
  const eventType = String(event.event_type);
  return (
    (filters.product === undefined || String(event.product).toUpperCase() === filters.product) &&
    (filters.entityType === undefined || event.entity_type === filters.entityType) &&
    (filters.entityGroupId === undefined || event.entity_group_id === filters.entityGroupId) &&
    (filters.entityId === undefined || event.entity_id === filters.entityId) &&
    (filters.eventType === undefined || eventType === filters.eventType || (filters.eventType === 'VIOLATION' && eventType.startsWith('VIOLATION_'))) &&
    (filters.incidentId === undefined || event.incident_id === filters.incidentId)
  );
}

/** Newest first; ties by id. */
export const byEventTime = (a: V2Body, b: V2Body): number => Number(b.timestamp) - Number(a.timestamp) || Number(a.id) - Number(b.id);
