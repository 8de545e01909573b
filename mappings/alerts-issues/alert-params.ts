import { defineParams, invalidParameter, param, type V2Params } from '../../src/mapping-api.ts';
import { AlertIncidentTitles } from './alert-titles.ts';
import { CLOCK_SKEW_MS, LIST_WINDOW_MS, OPEN_WINDOW_MS, type TimeWindow } from './ai-issues.ts';
import { EVENT_ENTITY_TYPES, EVENT_PRODUCTS, EVENT_TYPES, type EventFilters } from './ai-issues-events.ts';

/**
 * The parameters of alerts_violations and alerts_events, declared with defineParams in v2's
 * order (the sandbox's legacy face checks them in the same one, so a request with several bad
 * parameters gets the same 422 from both).
 */

/** alerts_violations' time window, before its page (a reversed window is refused first). */
export const violationWindowSpecs = {
  only_open: param.flag('only_open', { fidelity: 'exact', note: 'Open incidents only: filter states [CREATED].', aliases: ['filter[only_open]'] }),
  'filter[only_open]': param.alias('filter[only_open]', { fidelity: 'exact', note: 'The same, as a TypeScript integration client spells it.' }),
  start_date: param.time('start_date', {
    fidelity: 'approximate',
    note: 'ISO 8601; timeWindow.startTime (opened at or after), never before 1970. Default: 30 days back (90 with only_open).',
    aliases: ['filter[start_time]'],
    title: AlertIncidentTitles.badTime,
  }),
  'filter[start_time]': param.alias('filter[start_time]', { fidelity: 'approximate', note: 'Used when start_date is absent.' }),
  end_date: param.time('end_date', {
    fidelity: 'approximate',
    note: 'ISO 8601; timeWindow.endTime (opened at or before), never past now + 1 minute. Default: now + 1 minute.',
    aliases: ['filter[end_time]'],
    title: AlertIncidentTitles.badTime,
  }),
  'filter[end_time]': param.alias('filter[end_time]', { fidelity: 'approximate', note: 'Used when end_date is absent.' }),
};

const violationWindowParams = defineParams(violationWindowSpecs);

export interface ViolationParams {
  onlyOpen: boolean;
  /** null: the window holds nothing (a start after the end of what exists); nothing is read. */
  window: TimeWindow | null;
  /** The dates the request named (epoch ms; '' for a default): the same string, the same window. */
  dates: string;
}

/** alerts_violations' window parameters in v2's order (the mapping parses `page` after them). */
export function violationParams(params: V2Params, now: number): ViolationParams {
  const { only_open: onlyOpen, start_date: start, end_date: end } = violationWindowParams.parse(params);
  if (start !== undefined && end !== undefined && end < start) throw invalidParameter(AlertIncidentTitles.timeOrder);
  // The window never reaches past now (plus clock skew) nor before the epoch; a start after its
  // end (a start in the future, dates before 1970) lists nothing, as v2 did, and reads nothing.
  const latest = now + CLOCK_SKEW_MS;
  const endTime = Math.min(end ?? latest, latest);
  const startTime = Math.max(start ?? now - (onlyOpen ? OPEN_WINDOW_MS : LIST_WINDOW_MS), 0);
  return { onlyOpen, window: startTime < endTime ? { startTime, endTime } : null, dates: `${start ?? ''}/${end ?? ''}` };
}

const enumFilter = <T extends string>(key: string, allowed: readonly T[], note: string) =>
  param.oneOf(`filter[${key}]`, { fidelity: 'approximate', note, allowed, title: AlertIncidentTitles.badFilter(`filter[${key}]`, allowed) });
// Ids here are derived ones (incidents) or New Relic's taken at the same bound, as v2's legacy face does.
const idFilter = (key: string, note: string) => param.id(`filter[${key}]`, { fidelity: 'approximate', note, title: AlertIncidentTitles.badId(`filter[${key}]`), ids: 'derived' });

/** alerts_events' filters, before its page. */
export const eventFilterSpecs = {
  product: enumFilter('product', EVENT_PRODUCTS, 'APM, BROWSER, MOBILE, SERVERS, PLUGINS, SYNTHETICS, ALERTS (any case); only APM, BROWSER and MOBILE ever match.'),
  entity_type: enumFilter('entity_type', EVENT_ENTITY_TYPES, 'Application, Server, KeyTransaction, Plugin, MobileApplication, BrowserApplication, Monitor.'),
  entity_group_id: idFilter('entity_group_id', 'A positive integer: the entity id (group ids equal entity ids here).'),
  entity_id: idFilter('entity_id', 'A positive integer: the APM, browser or mobile app id, or the key transaction id.'),
  event_type: enumFilter('event_type', EVENT_TYPES, 'DEPLOYMENT, VIOLATION_OPEN, VIOLATION_CLOSE, VIOLATION (both); NOTIFICATION, INSTRUMENTATION and INCIDENT_OPEN are accepted and match nothing.'),
  incident_id: idFilter('incident_id', "The derived id of an alerts_incidents incident: its violations' events."),
};

const eventFilterParams = defineParams(eventFilterSpecs);

/** alerts_events' filters in v2's order; absent ones are left out. */
export function eventFilters(params: V2Params): EventFilters {
  const parsed = eventFilterParams.parse(params);
  const filters: EventFilters = {};
  if (parsed.product !== undefined) filters.product = parsed.product;
  if (parsed.entity_type !== undefined) filters.entityType = parsed.entity_type;
  if (parsed.entity_group_id !== undefined) filters.entityGroupId = parsed.entity_group_id;
  if (parsed.entity_id !== undefined) filters.entityId = parsed.entity_id;
  if (parsed.event_type !== undefined) filters.eventType = parsed.event_type;
  if (parsed.incident_id !== undefined) filters.incidentId = parsed.incident_id;
  return filters;
}
