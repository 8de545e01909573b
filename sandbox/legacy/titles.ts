/**
 * The error titles the legacy face answers. Clients match on v2's titles, so where New Relic
 * documents one it is a fact, read from facts/v2-titles.ts as the gateway reads it; where v2's
 * own words are unknown (UNCONFIRMED) the face answers the words of this project's written
 * rules, stated here, which the differential tests compare word for word.
 */
import { APPLICATION_HOST_TITLES, APPLICATION_TITLES, MOBILE_APPLICATION_TITLES, WIRE_TITLES } from '../../facts/v2-titles.ts';

/** REST v2's own titles (facts/v2-titles.ts: rest-v2.md §3.10, from New Relic's swagger, and routes-next.md §0). */
export const V2Titles = {
  apiKeyRequired: WIRE_TITLES.apiKeyRequired,
  invalidApiKey: WIRE_TITLES.invalidApiKey,
  applicationNotFound: APPLICATION_TITLES.notFound,
  applicationHostNotFound: APPLICATION_HOST_TITLES.hostNotFound,
  applicationInstanceNotFound: APPLICATION_HOST_TITLES.instanceNotFound,
  mobileApplicationNotFound: MOBILE_APPLICATION_TITLES.notFound,
  serverError: WIRE_TITLES.serverError,
} as const;

/** Metric data rules: docs/metric-data-rules.md §1-§3 (v2's wording is UNCONFIRMED, rest-v2.md §3.10). */
export const MetricTitles = {
  timeRangeTooShort: 'Time range must be at least 60 seconds',
  tooManyTimeslices: 'Time range too long for the period: at most 366 timeslices per metric, use a larger period',
  namesRequired: 'Invalid parameter names[]: at least one metric name is required',
  tooManyNames: 'Invalid parameter names[]: at most 100 metric names per request',
  periodNotMinutes: 'Invalid parameter period: expected a whole number of minutes, in seconds',
  periodTooSmall: (seconds: number): string => `Invalid parameter period: the smallest period for this time range is ${seconds} seconds`,
  badTime: (key: 'from' | 'to'): string => `Invalid parameter ${key}: expected an ISO 8601 time such as 2026-01-01T10:00:00+00:00`,
  timeBeforeEpoch: (key: 'from' | 'to'): string => `Invalid parameter ${key}: times before 1970-01-01T00:00:00Z are not accepted`,
} as const;

/**
 * alerts_incidents, alerts_violations and alerts_events (routes-next.md §5.1-§5.3): v2's titles
 * are UNCONFIRMED; these are the project's (mappings/alerts-issues/ai-issues.ts states them as the rule).
 */
export const AlertIncidentTitles = {
  incidentNotFound: 'No Incident found with the given ID',
  alreadyClosed: 'Incident already closed',
  badTime: (key: string): string => `Invalid parameter ${key}: expected a date-time such as 2026-01-01T00:00:00Z`,
  timeOrder: 'Invalid parameters: the end of the time range must not be before its start',
  badFilter: (key: string, allowed: readonly string[]): string => `Invalid parameter ${key}: expected one of ${allowed.join(', ')}`,
  badId: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
} as const;
