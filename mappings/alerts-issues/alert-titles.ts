/**
 * Titles of alerts_incidents, alerts_violations and alerts_events (mappings/alerts-issues/ai-issues.ts,
 * mappings/alerts-issues/alert-params.ts). v2's own texts are unconfirmed; the sandbox's legacy face
 * states the same ones (sandbox/legacy/titles.ts), which the differential tests hold equal.
 */
export const AlertIncidentTitles = {
  incidentNotFound: 'No Incident found with the given ID',
  alreadyClosed: 'Incident already closed',
  badTime: (key: string): string => `Invalid parameter ${key}: expected a date-time such as 2026-01-01T00:00:00Z`,
  timeOrder: 'Invalid parameters: the end of the time range must not be before its start',
  badFilter: (key: string, allowed: readonly string[]): string => `Invalid parameter ${key}: expected one of ${allowed.join(', ')}`,
  badId: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
} as const;
