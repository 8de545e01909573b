/**
 * The error titles the legacy face answers. Clients match on v2's titles, so where New Relic
 * documents one it is a fact, read from facts/v2-titles.ts as the gateway reads it; where v2's
 * own words are unknown (UNCONFIRMED) both faces answer the project's wording of its written
 * rules, read from facts/rule-titles.ts.
 */
import { ALERT_ISSUE_RULE_TITLES, METRIC_RULE_TITLES } from '../../facts/rule-titles.ts';
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

/** Metric data rules (docs/metric-data-rules.md §1-§3): the project's wording, as both faces say it (facts/rule-titles.ts). */
export const MetricTitles = METRIC_RULE_TITLES;

/** alerts_incidents, alerts_violations and alerts_events (routes-next.md §5.1-§5.3): v2's titles are UNCONFIRMED; both faces word them alike (facts/rule-titles.ts). */
export const AlertIncidentTitles = ALERT_ISSUE_RULE_TITLES;
